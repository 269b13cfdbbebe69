package gsm8k

import (
	"slices"
	"strconv"
	"testing"
)

func TestLMEvalArgvGolden(t *testing.T) {
	tests := []struct {
		name string
		step LMEvalStep
	}{
		{"lmeval_argv_dsr1", LMEvalStep{
			Model: "deepseek-ai/DeepSeek-R1-0528", Port: 8000, Concurrency: 2048,
			ContextLength: EvalContextLength(8192+1024+256, 163840, 0),
			OutputPath:    "/tmp/eval_out-abc123",
		}},
		{"lmeval_argv_full", LMEvalStep{
			Python: "/usr/bin/python3", Model: "m", Port: 30000, Host: "10.0.0.7", APIKey: "k",
			Concurrency: 64, ContextLength: 3000, Tasks: "/infmax-workspace/utils/evals/gsm8k.yaml",
			IncludePath: "/infmax-workspace/utils/evals", OutputPath: "/logs/eval_results", Limit: 200,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := tt.step.Argv()
			if err != nil {
				t.Fatal(err)
			}
			// One argument per line, quoted, so spaces and commas are visible.
			var out []byte
			for _, a := range argv {
				out = append(strconv.AppendQuote(out, a), '\n')
			}
			golden(t, tt.name, out)
		})
	}
}

func TestLMEvalArgvRefusesIncompleteSteps(t *testing.T) {
	ok := LMEvalStep{Model: "m", Port: 1, Concurrency: 1, OutputPath: "/o"}
	if _, err := ok.Argv(); err != nil {
		t.Fatalf("minimal step: %v", err)
	}
	for name, mut := range map[string]func(*LMEvalStep){
		"no model":       func(s *LMEvalStep) { s.Model = "" },
		"port 0":         func(s *LMEvalStep) { s.Port = 0 },
		"port too big":   func(s *LMEvalStep) { s.Port = 70000 },
		"concurrency 0":  func(s *LMEvalStep) { s.Concurrency = 0 },
		"no output path": func(s *LMEvalStep) { s.OutputPath = "" },
	} {
		s := ok
		mut(&s)
		if _, err := s.Argv(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMaxOutputTokens(t *testing.T) {
	for ctx, want := range map[int]int{
		16384:  12288, // InferenceX default context
		9472:   5376,  // 8k1k: 8192+1024+256
		4096:   2048,  // not > 4096: half
		3000:   1500,
		40000:  16384, // capped
		163840: 16384,
	} {
		if got := MaxOutputTokens(ctx); got != want {
			t.Errorf("MaxOutputTokens(%d) = %d, want %d", ctx, got, want)
		}
	}
}

func TestEvalContextLength(t *testing.T) {
	tests := []struct{ requested, native, maxModelLen, want int }{
		{9472, 163840, 0, 9472},     // ISL+OSL+256 below the native maximum
		{200000, 163840, 0, 163840}, // capped at the native maximum
		{0, 32768, 0, 32768},        // nothing requested: native maximum
		{9472, 0, 0, 9472},          // native unknown: requested as is
		{0, 0, 12000, 12000},        // neither: MAX_MODEL_LEN
		{0, 0, 0, 16384},            // nothing at all: fallback
	}
	for _, tt := range tests {
		if got := EvalContextLength(tt.requested, tt.native, tt.maxModelLen); got != tt.want {
			t.Errorf("EvalContextLength(%d, %d, %d) = %d, want %d", tt.requested, tt.native, tt.maxModelLen, got, tt.want)
		}
	}
}

func TestLMEvalEnvAndInstall(t *testing.T) {
	s := LMEvalStep{}
	if got, want := s.Env("/tmp/patch", "/opt/site"), []string{"OPENAI_API_KEY=EMPTY", "PYTHONPATH=/tmp/patch:/opt/site"}; !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
	if got, want := s.Env("", ""), []string{"OPENAI_API_KEY=EMPTY"}; !slices.Equal(got, want) {
		t.Errorf("Env without patch = %q, want %q", got, want)
	}
	inst := InstallArgvs("")
	if len(inst) != 2 || inst[0][len(inst[0])-1] != "lm-eval[api]" ||
		inst[1][len(inst[1])-1] != "https://github.com/EleutherAI/lm-evaluation-harness/archive/"+LMEvalCommit+".tar.gz" ||
		!slices.Contains(inst[1], "--force-reinstall") || !slices.Contains(inst[1], "--no-deps") {
		t.Errorf("InstallArgvs = %q", inst)
	}
}
