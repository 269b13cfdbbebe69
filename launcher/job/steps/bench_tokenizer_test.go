package steps

import (
	"slices"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench"
)

// A custom tokenizer and a tokenizer mode reach benchmark_serving.py as
// srt-slurm's bench.sh passes them: --tokenizer, --custom-tokenizer with
// --trust-remote-code, and --tokenizer-mode; without them none is passed.
func TestSABenchTokenizerFlags(t *testing.T) {
	cases := []struct {
		name, tokenizer, custom, mode string
		want, absent                  []string
	}{
		{name: "custom tokenizer", tokenizer: "/model", custom: "sa_bench_tokenizers.vllm_deepseek_v4.VLLMDeepseekV4Tokenizer",
			want:   []string{"--tokenizer", "/model", "--custom-tokenizer", "sa_bench_tokenizers.vllm_deepseek_v4.VLLMDeepseekV4Tokenizer", "--trust-remote-code"},
			absent: []string{"--tokenizer-mode"}},
		{name: "mode only", tokenizer: "/model", mode: "deepseek_v4",
			want: []string{"--tokenizer", "/model", "--tokenizer-mode", "deepseek_v4"}, absent: []string{"--custom-tokenizer", "--trust-remote-code"}},
		{name: "neither", absent: []string{"--tokenizer", "--custom-tokenizer", "--tokenizer-mode", "--trust-remote-code"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := testPlan(t)
			pl.Benchmark.Tokenizer, pl.Benchmark.CustomTokenizer, pl.Benchmark.TokenizerMode = tc.tokenizer, tc.custom, tc.mode
			argv := sabench.ContainerArgv(sabenchParams(pl, BenchOptions{Workspace: "/infmax-workspace"}, pl.Points[0]))
			for i := 0; i < len(tc.want); i++ {
				j := slices.Index(argv, tc.want[i])
				if j < 0 {
					t.Fatalf("argv lacks %s: %q", tc.want[i], argv)
				}
				if i+1 < len(tc.want) && tc.want[i+1][0] != '-' {
					if j+1 >= len(argv) || argv[j+1] != tc.want[i+1] {
						t.Errorf("%s %q, want %q", tc.want[i], argv[j+1:], tc.want[i+1])
					}
					i++
				}
			}
			for _, f := range tc.absent {
				if slices.Contains(argv, f) {
					t.Errorf("argv has %s: %q", f, argv)
				}
			}
		})
	}
}
