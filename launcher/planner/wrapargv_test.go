package planner

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestWrapArgv (issue #25 row 10): a long argv is broken before flags,
// each line within the width, a flag kept with its value; a short one
// stays on one line; joined back, the words are QuoteArgv's.
func TestWrapArgv(t *testing.T) {
	short := []string{"python3", "-m", "sglang.launch_server", "--port", "8000"}
	if got := plan.WrapArgv(short, 100, "  "); got != plan.QuoteArgv(short) {
		t.Errorf("short argv wrapped: %q", got)
	}
	long := []string{"python3", "-m", "sglang.launch_server", "--model-path", "/model", "--served-model-name", "deepseek-ai/DeepSeek-R1",
		"--tensor-parallel-size", "8", "--data-parallel-size", "8", "--enable-dp-attention", "--disaggregation-mode", "prefill",
		"--mem-fraction-static", "0.85", "--chunked-prefill-size", "32768", "--attention-backend", "trtllm_mla", "--note", "a b"}
	got := plan.WrapArgv(long, 60, "      ")
	lines := strings.Split(got, "\n")
	if len(lines) < 4 {
		t.Fatalf("not wrapped:\n%s", got)
	}
	for i, l := range lines {
		if len(l) > 60 && !strings.Contains(l, "deepseek") {
			t.Errorf("line %d is %d columns: %q", i, len(l), l)
		}
		if i < len(lines)-1 && !strings.HasSuffix(l, " \\") {
			t.Errorf("line %d does not end with a continuation: %q", i, l)
		}
		if i > 0 && !strings.HasPrefix(l, "      --") {
			t.Errorf("continuation line %d does not start with a flag: %q", i, l)
		}
		if strings.HasSuffix(strings.TrimSuffix(l, " \\"), "--tensor-parallel-size") {
			t.Errorf("a flag split from its value: %q", l)
		}
	}
	joined := strings.ReplaceAll(got, " \\\n      ", " ")
	if joined != plan.QuoteArgv(long) {
		t.Errorf("joined back:\n%s\nwant\n%s", joined, plan.QuoteArgv(long))
	}
}
