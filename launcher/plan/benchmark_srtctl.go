package plan

import (
	"path/filepath"
	"strings"
)

// SrtctlBenchmark is one of srtctl's other benchmark types (mmlu, gpqa,
// longbenchv2, gsm8k, lm-eval, router, sglang-bench, trace-replay,
// mooncake-router), run in the engine container once the health gate has
// passed by `slurmbench srtctl-bench TYPE ARGS...`, which runs the tool
// srtctl's script for the type runs, with the same arguments.
type SrtctlBenchmark struct {
	// Type is srtctl-bench's type: the benchmark type, gsm8k split by
	// engine (gsm8k-sglang, gsm8k-vllm) as srtctl's scripts are.
	Type string `json:"type"`
	// Args are the positional arguments srtctl's runner passes the type's
	// script (its build_command), in order.
	Args []string `json:"args"`
	// Argv is the whole command: slurmbench srtctl-bench TYPE ARGS...
	Argv []string `json:"argv"`
	// ResultDir is the host directory the tool writes its results into
	// (a directory of the log directory, which is /logs in the container);
	// "" when the benchmark's log is its only output (sglang-bench).
	ResultDir string `json:"result_dir,omitempty"`
	// Results are the file patterns of ResultDir the run collects (what the
	// type writes there).
	Results []string `json:"results,omitempty"`
}

// writeSrtctlNotes is render's account of srtctl's other benchmark types,
// slow_down and profiling.
func (p *Plan) writeSrtctlNotes(ew *errWriter) {
	bm := p.Benchmark
	if s := bm.Srtctl; s != nil {
		node := "?"
		for _, proc := range p.Processes {
			if proc.Role == RoleBenchmark {
				node = JoinInts(proc.Nodes)
			}
		}
		ew.printf("\nBenchmark: %s, srtctl's %s in the engine container on node %s\n", bm.Type, s.Type, node)
		ew.printf("  argv     %s\n", QuoteArgv(s.Argv))
		if s.ResultDir != "" {
			ew.printf("  results  %s (%s), copied to %s\n", s.ResultDir, strings.Join(s.Results, " "), filepath.Join(p.Layout.Results, bm.Type))
		} else {
			ew.printf("  results  the benchmark's log only\n")
		}
	}
	if sd := bm.SlowDown; sd != nil {
		ew.printf("  slow_down %gs per forward on the decode leaders at each point's start, cleared after %gs\n", sd.SleepTime, sd.WaitTime)
	}
	if pr := p.Profiling; pr != nil {
		ew.printf("\nProfiling: %s into %s\n", pr.Type, pr.Dir)
		for _, tr := range pr.Trigger {
			ew.printf("  %-8s POST %s%s %s (stop: %s)\n", tr.Role, tr.URL, tr.StartPath, tr.Body, tr.StopPath)
		}
	}
}
