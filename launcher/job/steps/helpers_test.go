package steps

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"

	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

const testModel = "mock/DeepSeek-R1"

// testPlan is a one-node aggregated plan under a temporary run directory
// with two benchmark points (c2: 20 prompts, c4: 40 prompts, no warmup)
// of ISL 32 / OSL 8, and a native eval.
func testPlan(t *testing.T) *plan.Plan {
	t.Helper()
	run := t.TempDir()
	results := filepath.Join(run, "results")
	gpus := plan.GPUCount{Agg: 4, Total: 4}
	pl := &plan.Plan{
		Version: plan.PlanVersion, Name: "steps-test", RunID: "steps-test", RunDir: run,
		PlanFile: filepath.Join(run, "plan.json"), Binary: filepath.Join(run, "bin", "slurmbench"),
		Mode: "aggregated", Nodes: 1, GPUsPerNode: 4, GPUs: gpus,
		Model:   plan.Model{Source: filepath.Join(run, "model"), Path: "/model", ServedName: testModel, Precision: "fp8"},
		Backend: "mock", Frontend: "dynamo",
		Benchmark: plan.Benchmark{Type: "sa-bench", Client: profile.BenchNative, ISL: 32, OSL: 8, RangeRatio: 0.8,
			RequestRate: "inf", PromptsMult: 10, ResultDir: filepath.Join(results, "sa-bench_isl_32_osl_8")},
		Eval:   plan.Eval{Enabled: true, Client: profile.EvalNative, Concurrency: 4, ResultDir: filepath.Join(results, "eval")},
		Layout: rundir.New(run),
	}
	for _, c := range []int{2, 4} {
		name, err := pl.ResultFile(c)
		if err != nil {
			t.Fatal(err)
		}
		pl.Points = append(pl.Points, plan.BenchPoint{Concurrency: c, NumPrompts: 10 * c, ResultFile: name})
	}
	if err := pl.Validate(); err != nil {
		t.Fatalf("test plan: %v", err)
	}
	return pl
}

// gsm8kDir is ../shared/data/gsm8k beside the repository; tests that need
// the real splits skip when it is absent.
func gsm8kDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Dir(shareddata.Path(t, "data", "gsm8k", gsm8k.TestFile))
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

var (
	splitsOnce sync.Once
	splitsTest []gsm8k.Doc
	splitsErr  error
)

func testSplit(t *testing.T) []gsm8k.Doc {
	t.Helper()
	dir := gsm8kDir(t)
	splitsOnce.Do(func() { splitsTest, _, splitsErr = gsm8k.LoadDir(dir) })
	if splitsErr != nil {
		t.Fatal(splitsErr)
	}
	return splitsTest
}
