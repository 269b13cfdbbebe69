package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
)

// stagePowerRun writes a staged run with one 1P1D point (one prefill and one
// decode GPU, 1000 output tokens over 10 s) and the power package its GPUs
// produced at watts each, valid or not.
func stagePowerRun(t *testing.T, watts float64, valid bool) string {
	t.Helper()
	dir := t.TempDir()
	const start, end = 1000.0, 1010.0
	res := filepath.Join(dir, "LOGS", "sa-bench_isl_100_osl_10", "results_concurrency_8_gpus_2_ctx_1_gen_1.json")
	write := func(path string, v any) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(res, map[string]any{"max_concurrency": 8, "completed": 100, "num_prompts": 100, "duration": end - start,
		"benchmark_start_time_unix": start, "benchmark_end_time_unix": end,
		"total_input_tokens": 10000, "total_output_tokens": 1000, "output_throughput": 100.0,
		"total_token_throughput": 1100.0, "median_ttft_ms": 50.0, "median_tpot_ms": 10.0, "median_e2el_ms": 150.0})
	pd := filepath.Join(dir, "LOGS", "power")
	win := "windows/results_concurrency_8_gpus_2_ctx_1_gen_1.json"
	write(filepath.Join(pd, filepath.FromSlash(win)), map[string]any{"schema_version": 1, "benchmark_type": "sa-bench",
		"result_path": "sa-bench_isl_100_osl_10/results_concurrency_8_gpus_2_ctx_1_gen_1.json", "concurrency": 8,
		"benchmark_start_time_unix": start, "benchmark_end_time_unix": end, "duration": end - start,
		"clock_source": power.ClockSource, "status": "completed", "reason": nil})
	var csv strings.Builder
	csv.WriteString(strings.Join(power.SamplesHeader, ",") + "\n")
	for i := 0; i <= 12; i++ {
		for g := 0; g < 2; g++ {
			fmt.Fprintf(&csv, "1,%v,%d,n1,%d,GPU-%d,%v\n", start-1+float64(i), i, g, g, watts)
		}
	}
	if err := os.WriteFile(filepath.Join(pd, power.SamplesFile), []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w := win
	m := power.Manifest{Producer: power.Producer, Status: power.StatusComplete, PublicationValid: &valid,
		ExpectedDevices: []power.ExpectedDevice{
			{Hostname: "n1", GPUIndex: 0, Assignments: []power.Assignment{{WorkerRole: power.RolePrefill}}},
			{Hostname: "n1", GPUIndex: 1, Assignments: []power.Assignment{{WorkerRole: power.RoleDecode}}}},
		WindowValidations: []power.WindowValidation{{BenchmarkType: "sa-bench", Concurrency: 8, WindowFile: &w, CoverageValid: valid}}}
	if !valid {
		m.Reasons = []power.Reason{power.SampleGapExceeded}
	}
	write(filepath.Join(pd, power.ManifestFile), m)
	return dir
}

func TestCompareEnergy(t *testing.T) {
	load := func(dir string) *ResultSet {
		s, err := LoadResultSet(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	base, cand := load(stagePowerRun(t, 300, true)), load(stagePowerRun(t, 330, true))
	e := base.Energy[results.PointID{Concurrency: 8, GPUs: 2, PrefillGPUs: 1, DecodeGPUs: 1}]
	if e == nil || math.Abs(e.JoulesPerToken-300*2*10/1000.0) > 1e-9 {
		t.Fatalf("baseline energy %+v, want 6 J per output token", e)
	}
	rows := map[string]ComparisonRow{}
	for _, r := range Compare(base, cand).Rows {
		rows[r.Metric] = r
	}
	for _, key := range []string{"joules_per_output_token", "prefill_avg_power_w", "decode_avg_power_w"} {
		r, ok := rows[key]
		if !ok || r.DeltaPct == nil || math.Abs(*r.DeltaPct-10) > 1e-6 {
			t.Errorf("%s: row %+v, want +10 %%", key, r)
		}
	}
	if _, ok := rows["agg_avg_power_w"]; ok {
		t.Error("an agg power row for runs without agg workers")
	}

	invalid := load(stagePowerRun(t, 300, false))
	if len(invalid.Energy) != 0 || !strings.Contains(strings.Join(invalid.Notes, "\n"), "not publishable") {
		t.Errorf("invalid package: energy %v notes %v", invalid.Energy, invalid.Notes)
	}
	for _, r := range Compare(invalid, invalid).Rows {
		if strings.Contains(r.Metric, "power") || strings.Contains(r.Metric, "joules") {
			t.Errorf("energy row from an invalid package: %+v", r)
		}
	}
}
