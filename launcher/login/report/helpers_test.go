package report

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got string) {
	t.Helper()
	goldenpkg.Assert(t, filepath.Join("testdata", name), []byte(got))
}

// mockPlan is the shape of the mock 2P1D run: two prefill workers of four
// GPUs and one decode worker of four, at concurrencies 8 and 32.
func mockPlan() *plan.Plan {
	return &plan.Plan{
		Name:   "mock-2p1d",
		RunID:  "20250101T000000-ab12cd",
		RunDir: "/shared/slurmbench/runs/20250101T000000-ab12cd",
		Mode:   "disaggregated",
		GPUs:   plan.GPUCount{Prefill: 8, Decode: 4, Total: 12},
		Image:  plan.Image{Ref: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.1", Squash: "/shared/images/x.sqsh"},
		Points: []plan.BenchPoint{
			{Concurrency: 8, NumPrompts: 80, ResultFile: "results_concurrency_8_gpus_12_ctx_8_gen_4.json"},
			{Concurrency: 32, NumPrompts: 320, ResultFile: "results_concurrency_32_gpus_12_ctx_8_gen_4.json"},
		},
		Eval: plan.Eval{Enabled: true, Client: "native", Concurrency: 32},
	}
}

// saResult is an SA-Bench result with the figures the summary reads.
func saResult(conc, prompts, completed int, totalTput, outTput, ttft, tpot, e2e float64) *results.SABenchResult {
	return &results.SABenchResult{
		MaxConcurrency: conc, NumPrompts: prompts, Completed: completed,
		TotalTokenThroughput: totalTput, OutputThroughput: outTput,
		Metrics: []results.MetricStats{{Name: "ttft", Median: ttft}, {Name: "tpot", Median: tpot}, {Name: "e2el", Median: e2e}},
	}
}

func collected(conc int, r *results.SABenchResult) results.CollectedPoint {
	return results.CollectedPoint{
		Point:  results.PointID{Concurrency: conc, GPUs: 12, PrefillGPUs: 8, DecodeGPUs: 4},
		Config: "sa-bench_isl_1024_osl_128",
		Path:   "/shared/slurmbench/runs/x/results/sa-bench_isl_1024_osl_128/results_concurrency_" + strconv.Itoa(conc) + "_gpus_12_ctx_8_gen_4.json",
		Result: r,
	}
}

// writeEval writes an lm-eval results file (and meta_env.json naming the
// model prefix, when set) into dir, with the given modification time.
func writeEval(t *testing.T, dir, name string, data []byte, mtime time.Time) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeMeta(t *testing.T, dir, prefix string) {
	t.Helper()
	meta := `{"is_multinode": true, "conc": 32, "model": "deepseek-ai/DeepSeek-R1", "infmax_model_prefix": "` + prefix + `", "hw": "b200", "isl": "1024", "osl": "128"}`
	if err := os.WriteFile(filepath.Join(dir, "meta_env.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
}

func fixture(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "lmeval_results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
