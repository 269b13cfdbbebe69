package plan

// CustomBenchmark is benchmark.type custom: a command of the recipe's own
// (InferenceX's agentic trace replay, bash .../agentic_srt.sh) run in the
// engine container once the health gate has passed, where srtctl runs it.
type CustomBenchmark struct {
	// Command is benchmark.command as the recipe wrote it; Argv is the same
	// command split once into words (srtctl hands the string to bash -lc).
	Command string   `json:"command"`
	Argv    []string `json:"argv"`
	// Script is the file the command runs (the program, or the first
	// operand of an interpreter); ScriptNote says why it may not be there:
	// outside the workspace and every mount, so it must be in the image.
	Script     string `json:"script,omitempty"`
	ScriptNote string `json:"script_note,omitempty"`
	// ResultDir is the host directory the workload writes into (its
	// RESULT_DIR under /logs, else <results>/custom); OutputDir is where it
	// drops its aggregated <RESULT_FILENAME>_conc<C>.json files (the
	// InferenceX workspace, agentic_srt.sh's AGENTIC_OUTPUT_DIR default).
	ResultDir string `json:"result_dir"`
	OutputDir string `json:"output_dir,omitempty"`
	// Concurrencies are the ones the workload is asked for, as InferenceX's
	// scripts read them (${CONC_LIST:-$CONC} from the step's environment),
	// derived once when planning: collection and telemetry expect these.
	Concurrencies []int `json:"concurrencies,omitempty"`
}

// writeBenchmarkNotes is the human plan's view of a custom command and of
// the tokenizer and client choice.
func (p *Plan) writeBenchmarkNotes(ew *errWriter) {
	bm := p.Benchmark
	if c := bm.Custom; c != nil {
		node := "?"
		for _, proc := range p.Processes {
			if proc.Role == RoleBenchmark {
				node = JoinInts(proc.Nodes)
			}
		}
		ew.printf("\nBenchmark: custom command, in the engine container on node %s\n", node)
		ew.printf("  recipe   %s\n", c.Command)
		ew.printf("  argv     %s  (split once by a bash parser, run without a shell; srtctl runs bash -lc <recipe>)\n", QuoteArgv(c.Argv))
		if c.Script != "" {
			if c.ScriptNote != "" {
				ew.printf("  script   %s  ** MARKED: %s **\n", c.Script, c.ScriptNote)
			} else {
				ew.printf("  script   %s\n", c.Script)
			}
		}
		ew.printf("  results  %s\n", c.ResultDir)
		if c.OutputDir != "" {
			ew.printf("  outputs  %s/<RESULT_FILENAME>_conc<C>.json (staged as InferenceX names them)\n", c.OutputDir)
		}
	}
	if bm.CustomTokenizer != "" || bm.TokenizerMode != "" {
		ew.printf("  tokenizer %s", bm.Tokenizer)
		if bm.CustomTokenizer != "" {
			ew.printf(", custom %s", bm.CustomTokenizer)
		}
		if bm.TokenizerMode != "" {
			ew.printf(", mode %s", bm.TokenizerMode)
		}
		ew.printf("\n")
	}
	if bm.ClientReason != "" {
		ew.printf("  client   %s: %s\n", bm.Client, bm.ClientReason)
	}
}
