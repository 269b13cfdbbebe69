package srtctlbench

import (
	"strings"
	"testing"
)

// TestScriptsCarried: every script a benchmark type runs is embedded, with
// srt-slurm's licence beside them.
func TestScriptsCarried(t *testing.T) {
	for _, rel := range []string{"mmlu/bench.sh", "gpqa/bench.sh", "longbenchv2/bench.sh", "lm-eval/bench.sh",
		"router/bench.sh", "sglang-bench/bench.sh", "trace-replay/bench.sh", "mooncake-router/bench.sh",
		"mooncake-router/rollup.py", "gsm8k/sglang-bench.sh", "gsm8k/vllm-bench.sh", "lib/profiling.sh", "LICENSE"} {
		if !Has(rel) {
			t.Errorf("%s is not embedded", rel)
		}
	}
	if Has("nope/bench.sh") {
		t.Error("Has reports a script that is not there")
	}
	files := Files()
	if !strings.Contains(files["LICENSE"], "Apache License") {
		t.Error("LICENSE is not srt-slurm's Apache-2.0 licence")
	}
	if !strings.HasPrefix(files["mmlu/bench.sh"], "#!/bin/bash") {
		t.Errorf("mmlu/bench.sh starts %.20q", files["mmlu/bench.sh"])
	}
	if len(Names()) != len(files) {
		t.Errorf("Names lists %d, Files %d", len(Names()), len(files))
	}
}
