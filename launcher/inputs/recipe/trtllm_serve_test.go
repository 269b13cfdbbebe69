package recipe

import (
	"errors"
	"strings"
	"testing"
)

// TestTRTLLMServeRead: frontend.type trtllm_serve is read in both schemas
// (the planner holds it to srtctl's load rules: planner.checkTRTLLMServe),
// and a role's extra_args, which srtctl appends to trtllm-serve only, are
// taken with it and refused, named, with the Dynamo worker.
func TestTRTLLMServeRead(t *testing.T) {
	const fe = "frontend:\n  type: trtllm_serve\n  enable_multiple_frontends: false\n"
	agg := func(roles string) string { return v2Base + "engine: trtllm\nroles:\n  agg:\n" + roles }
	cases := []struct {
		name, text string
		field      string // "" = read
	}{
		// HAPPY PATH
		{"v2 agg", agg("    nodes: 1\n    workers: 1\n    gpus: 4\n") + fe, ""},
		{"v2 agg with extra_args", agg("    nodes: 1\n    workers: 1\n    extra_args: [--tool_parser, glm47]\n") + fe, ""},
		{"v2 disagg", v2Base + "engine: trtllm\nroles:\n  prefill: {nodes: 1, workers: 1}\n  decode: {nodes: 1, workers: 2}\n" + fe, ""},
		{"v1 disagg", strings.Replace(base, "  type: sglang\n", "  type: trtllm\n", 1) + fe, ""},
		// SAD PATH
		{"extra_args with the Dynamo worker", agg("    nodes: 1\n    workers: 1\n    extra_args: [--tool_parser, glm47]\n"), "roles.agg.extra_args"},
		{"TRT-LLM behind the SGLang router", strings.Replace(base, "  type: sglang\n", "  type: trtllm\n", 1) + "frontend:\n  type: sglang\n", "frontend.type"},
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
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), ": "+tc.field+": ") || !strings.Contains(err.Error(), "r.yaml:") {
				t.Errorf("err %v, want unsupported naming %s at a line", err, tc.field)
			}
		})
	}
}
