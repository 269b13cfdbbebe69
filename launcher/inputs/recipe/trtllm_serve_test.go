package recipe

import (
	"errors"
	"strings"
	"testing"
)

// TestTRTLLMServeRules holds frontend.type: trtllm_serve to srtctl's load
// rules (trtllm_serve.py@3c0b8d46): a TRT-LLM engine, one public endpoint
// (enable_multiple_frontends: false), one aggregated worker; extra_args are
// taken for it and refused for the Dynamo worker. Each refusal is a plain
// validation error (exit 2) naming the field and its line.
func TestTRTLLMServeRules(t *testing.T) {
	const fe = "frontend:\n  type: trtllm_serve\n  enable_multiple_frontends: false\n"
	agg := func(engine, roles string) string {
		return v2Base + "engine: " + engine + "\nroles:\n  agg:\n" + roles
	}
	cases := []struct {
		name, text string
		field      string // "" = accepted
		unsupp     bool   // refused as not run, not as invalid
	}{
		// HAPPY PATH
		{"v2 agg, one worker", agg("trtllm", "    nodes: 1\n    workers: 1\n    gpus: 4\n") + fe, "", false},
		{"v2 agg, extra_args taken", agg("trtllm", "    nodes: 1\n    workers: 1\n    extra_args: [--tool_parser, glm47]\n") + fe, "", false},
		{"v2 agg, workers unset is one", agg("trtllm", "    nodes: 1\n") + fe, "", false},
		{"v2 disagg", v2Base + "engine: trtllm\nroles:\n  prefill: {nodes: 1, workers: 1}\n  decode: {nodes: 1, workers: 2}\n" + fe, "", false},
		{"v1 disagg", strings.Replace(base, "  type: sglang\n", "  type: trtllm\n", 1) + fe, "", false},
		// SAD PATH
		{"v2 agg, two workers", agg("trtllm", "    nodes: 1\n    workers: 2\n    gpus: 4\n") + fe, "roles.agg.workers", false},
		{"enable_multiple_frontends unset", agg("trtllm", "    nodes: 1\n    workers: 1\n") + "frontend:\n  type: trtllm_serve\n", "frontend.type", false},
		{"enable_multiple_frontends true", agg("trtllm", "    nodes: 1\n    workers: 1\n") + "frontend:\n  type: trtllm_serve\n  enable_multiple_frontends: true\n", "frontend.enable_multiple_frontends", false},
		{"sglang engine", agg("sglang", "    nodes: 1\n    workers: 1\n") + fe, "frontend.type", false},
		{"v1 sglang engine", base + fe, "frontend.type", false},
		{"extra_args under dynamo", agg("trtllm", "    nodes: 1\n    workers: 1\n    extra_args: [--tool_parser, glm47]\n"), "roles.agg.extra_args", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parse(t, tc.text)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, tc.text)
				}
				if r.Frontend.Type != "trtllm_serve" {
					t.Errorf("frontend.type = %q", r.Frontend.Type)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.text)
			}
			if got := errors.Is(err, ErrUnsupported); got != tc.unsupp {
				t.Errorf("unsupported = %v, want %v: %v", got, tc.unsupp, err)
			}
			if !strings.Contains(err.Error(), ": "+tc.field+": ") {
				t.Errorf("error does not name %s: %v", tc.field, err)
			}
			if !strings.Contains(err.Error(), "r.yaml:") || strings.Contains(err.Error(), "r.yaml: "+tc.field) {
				t.Errorf("error has no line: %v", err)
			}
		})
	}
}
