package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/results"

	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/mockengine"
)

const stepModel = "mock/DeepSeek-R1"

// stepPlan writes a one-node plan with benchmark points c2 and c4 (ISL 32,
// OSL 8, no warmup) and a native gsm8k eval, and returns it.
func stepPlan(t *testing.T) *plan.Plan {
	t.Helper()
	run := t.TempDir()
	results := filepath.Join(run, "results")
	gpus := plan.GPUCount{Agg: 4, Total: 4}
	pl := &plan.Plan{
		Version: plan.PlanVersion, Name: "cli-steps", RunID: "cli-steps", RunDir: run,
		PlanFile: filepath.Join(run, "plan.json"), Binary: filepath.Join(run, "bin", "slurmbench"),
		Mode: "aggregated", Nodes: 1, GPUsPerNode: 4, GPUs: gpus,
		Model: plan.Model{Source: "hf:mock/DeepSeek-R1", Path: "mock/DeepSeek-R1", ServedName: stepModel},
		Benchmark: plan.Benchmark{Type: "sa-bench", Client: "native", ISL: 32, OSL: 8, RangeRatio: 0.8,
			RequestRate: "inf", PromptsMult: 10, ResultDir: filepath.Join(results, "sa-bench_isl_32_osl_8")},
		Eval:   plan.Eval{Enabled: true, Client: "native", Concurrency: 4, ResultDir: filepath.Join(results, "eval")},
		Layout: rundir.New(run),
	}
	for _, c := range []int{2, 4} {
		name, err := pl.ResultFile(c)
		if err != nil {
			t.Fatal(err)
		}
		pl.Points = append(pl.Points, plan.BenchPoint{Concurrency: c, NumPrompts: 10 * c, ResultFile: name})
	}
	writePlan(t, pl)
	return pl
}

func writePlan(t *testing.T, pl *plan.Plan) {
	t.Helper()
	data, err := json.Marshal(pl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pl.PlanFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runStep runs "slurmbench <args>" in-process and returns stdout, stderr and
// the exit code main would use.
func runStep(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	return runCLI(t, args...)
}

func TestBenchCommand(t *testing.T) {
	pl := stepPlan(t)
	frontend := mockengine.StartTest(t, mockengine.Options{Model: stepModel})
	progress := filepath.Join(t.TempDir(), "progress.json")
	out, errOut, code := runStep(t, "bench", "--plan", pl.PlanFile, "--frontend", frontend, "--progress-file", progress)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"point 1/2: c2 valid: completed 20/20,", "point 2/2: c4 valid: completed 40/40,", "benchmark: 2 of 2 points valid in " + pl.Benchmark.ResultDir} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, pt := range pl.Points {
		res, err := results.ReadSABench(filepath.Join(pl.Benchmark.ResultDir, pt.ResultFile))
		if err != nil {
			t.Fatal(err)
		}
		if res.Completed != pt.NumPrompts || res.Valid == nil || !*res.Valid {
			t.Errorf("c%d: completed %d of %d, valid %v", pt.Concurrency, res.Completed, pt.NumPrompts, res.Valid)
		}
	}
	if p, err := rundir.ReadBenchProgress(progress); err != nil || p.State != rundir.StateDone || p.Point != 2 || p.Of != 2 {
		t.Errorf("progress %+v, %v", p, err)
	}
}

// An engine that dies during the second point: exit 8, the point named, its
// file kept and marked invalid.
func TestBenchCommandInvalidPoint(t *testing.T) {
	pl := stepPlan(t)
	// c2 uses requests 1-20; the engine crashes two requests into c4.
	frontend := mockengine.StartTest(t, mockengine.Options{Model: stepModel, Faults: mockengine.Faults{ExitAfterRequests: 22}})
	out, errOut, code := runStep(t, "bench", "--plan", pl.PlanFile, "--frontend", frontend)
	if code != exitcode.Benchmark || !strings.Contains(errOut, "benchmark: 1 of 2 points failed: c4 (request failure rate") {
		t.Fatalf("exit %d, stderr %q; want %d naming c4", code, errOut, exitcode.Benchmark)
	}
	if !strings.Contains(out, "point 1/2: c2 valid") || !strings.Contains(out, "point 2/2: c4 INVALID") {
		t.Errorf("stdout:\n%s", out)
	}
	res, err := results.ReadSABench(filepath.Join(pl.Benchmark.ResultDir, pl.Points[1].ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid == nil || *res.Valid || res.InvalidReason == "" {
		t.Errorf("c4 file valid=%v reason %q, want marked invalid", res.Valid, res.InvalidReason)
	}
	p, err := rundir.ReadBenchProgress(pl.Layout.Progress)
	if err != nil || p.State != rundir.StateInvalid || len(p.Invalid) != 1 || p.Invalid[0] != 4 {
		t.Errorf("progress %+v, %v", p, err)
	}
}

func TestStepCommandErrors(t *testing.T) {
	pl := stepPlan(t)
	evalOnly := stepPlan(t)
	evalOnly.Benchmark.Type, evalOnly.Points = "", nil
	writePlan(t, evalOnly)
	dead := "http://127.0.0.1:1"
	tests := []struct {
		args []string
		code exitcode.Code
		want string
	}{
		{[]string{"bench", "--plan", pl.PlanFile, "--frontend", dead}, exitcode.Engine, "frontend " + dead + " is not reachable"},
		{[]string{"eval", "--plan", pl.PlanFile, "--frontend", dead}, exitcode.Engine, "frontend " + dead + " is not reachable"},
		{[]string{"bench", "--plan", evalOnly.PlanFile, "--frontend", dead}, exitcode.Config, "no benchmark points"},
		{[]string{"bench", "--plan", filepath.Join(t.TempDir(), "none.json"), "--frontend", dead}, exitcode.Config, "reading plan"},
		{[]string{"bench", "--plan", pl.PlanFile}, exitcode.Config, "--frontend is required"},
		{[]string{"eval", "--frontend", dead}, exitcode.Config, "--plan is required"},
		{[]string{"eval", "--plan", pl.PlanFile, "--frontend", dead, "--limit", "abc"}, exitcode.Config, `--limit: "abc" is not a number`},
	}
	for _, tt := range tests {
		out, errOut, code := runStep(t, tt.args...)
		if code != tt.code || out != "" || !strings.Contains(errOut, tt.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line with %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}

// The eval gates both filters at the model prefix's threshold: 18 of 20
// right passes the default 0.90 and fails dsr1's 0.91 (exit 9).
func TestEvalCommand(t *testing.T) {
	frontend, data := answeringFrontend(t, 20)
	pl := stepPlan(t)
	pl.Eval.DataDir, _ = filepath.Abs(data)
	writePlan(t, pl)

	t.Setenv("MODEL_PREFIX", "")
	out, errOut, code := runStep(t, "eval", "--plan", pl.PlanFile, "--frontend", frontend, "--limit", "20")
	if code != 0 || !strings.Contains(out, "gsm8k: strict-match 0.9000 ± 0.0688, flexible-extract 0.9000 ± 0.0688 (n=20) -> results_") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	t.Setenv("MODEL_PREFIX", "dsr1")
	_, errOut, code = runStep(t, "eval", "--plan", pl.PlanFile, "--frontend", frontend, "--limit", "20")
	want := "slurmbench: eval scores below threshold: gsm8k exact_match,strict-match = 0.9000 (< 0.91 from models.dsr1); gsm8k exact_match,flexible-extract = 0.9000 (< 0.91 from models.dsr1)\n"
	if code != exitcode.Eval || !strings.HasSuffix(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, exitcode.Eval, want)
	}
	meta, err := gsm8k.ReadMetaEnv(filepath.Join(pl.Eval.ResultDir, "meta_env.json"))
	if err != nil || meta.InfmaxModelPrefix != "dsr1" {
		t.Errorf("meta_env.json prefix %q, %v", meta.InfmaxModelPrefix, err)
	}
}
