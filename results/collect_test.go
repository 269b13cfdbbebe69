package results

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

// runDir lays out results as srt-slurm does: logs/sa-bench_isl_8192_osl_1024/results_concurrency_*.json.
func runDir(t *testing.T, points map[int]map[string]any, topo PointID) string {
	t.Helper()
	logs := filepath.Join(t.TempDir(), "logs")
	for c, over := range points {
		p := topo
		p.Concurrency = c
		name, err := RawName(p)
		if err != nil {
			t.Fatal(err)
		}
		writeJSON(t, filepath.Join(logs, "sa-bench_isl_8192_osl_1024", name), saBench(c, over))
	}
	return logs
}

func TestCollectComplete(t *testing.T) {
	logs := runDir(t, map[int]map[string]any{8: nil, 32: nil, 64: nil}, p4p1d)
	coll, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: []int{32, 8}, Topology: p4p1d})
	if err != nil {
		t.Fatal(err)
	}
	if len(coll.Points) != 2 || coll.Points[0].Point.Concurrency != 32 || coll.Points[1].Point.Concurrency != 8 {
		t.Fatalf("points = %+v, want 32 then 8", coll.Points)
	}
	for _, cp := range coll.Points {
		if cp.Config != "sa-bench_isl_8192_osl_1024" || cp.Result == nil || cp.Point.PrefillGPUs != 16 {
			t.Errorf("collected %+v", cp)
		}
	}
	if len(coll.Unrequested) != 1 || filepath.Base(coll.Unrequested[0]) != "results_concurrency_64_gpus_24_ctx_16_gen_8.json" {
		t.Errorf("Unrequested = %v", coll.Unrequested)
	}
	// Pointing at the config directory itself gives the same config name.
	coll, err = Collect(CollectOptions{ResultsDir: filepath.Join(logs, "sa-bench_isl_8192_osl_1024"), Concurrencies: []int{8}})
	if err != nil || coll.Points[0].Config != "sa-bench_isl_8192_osl_1024" {
		t.Errorf("collect from the config dir: %+v, %v", coll, err)
	}
}

func TestCollectFailures(t *testing.T) {
	tests := []struct {
		name    string
		points  map[int]map[string]any
		topo    PointID // written topology
		want    PointID // expected topology (GPUs 0: any)
		concs   []int
		wantErr string
	}{
		{"missing", map[int]map[string]any{512: nil}, p4p1d, p4p1d, []int{512, 1024, 2048},
			"missing points: 1024, 2048"},
		{"zero output tokens", map[int]map[string]any{512: {"total_output_tokens": 0}, 1024: nil}, p4p1d, p4p1d, []int{512, 1024},
			"invalid points: 512 (0 output tokens)"},
		{"missing and invalid", map[int]map[string]any{512: {"total_output_tokens": 0}}, p4p1d, PointID{}, []int{512, 1024},
			"missing points: 1024; invalid points: 512 (0 output tokens)"},
		{"marked by the SA-Bench step", map[int]map[string]any{8: {"slurmbench_valid": false, "slurmbench_invalid_reason": "failure rate 10.0 % above 5 %"}}, pAgg, pAgg, []int{8},
			"invalid points: 8 (marked invalid: failure rate 10.0 % above 5 %)"},
		{"nothing completed", map[int]map[string]any{8: {"completed": 0, "total_output_tokens": 0}}, pAgg, pAgg, []int{8},
			"invalid points: 8 (0 completed requests; 0 output tokens)"},
		{"fields missing", map[int]map[string]any{8: {"median_ttft_ms": nil, "total_token_throughput": nil}}, pAgg, pAgg, []int{8},
			"invalid points: 8 (missing fields: total_token_throughput, median_ttft_ms)"},
		{"failure rate", map[int]map[string]any{8: {"completed": 70}}, pAgg, pAgg, []int{8},
			"invalid points: 8 (failure rate 12.5 % above 5.0 % (70/80 completed))"},
		{"name and content disagree", map[int]map[string]any{8: {"max_concurrency": 16}}, pAgg, pAgg, []int{8},
			"invalid points: 8 (max_concurrency 16 in the file)"},
		{"other topology", map[int]map[string]any{8: nil}, pAgg, p4p1d, []int{8},
			"invalid points: 8 (topology gpus_8, expected gpus_24_ctx_16_gen_8)"},
		{"two invalid", map[int]map[string]any{8: {"total_output_tokens": 0}, 16: {"completed": 0}}, pAgg, pAgg, []int{8, 16},
			"invalid points: 8 (0 output tokens), 16 (0 completed requests)"},
	}
	for _, tt := range tests {
		logs := runDir(t, tt.points, tt.topo)
		_, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: tt.concs, Topology: tt.want})
		var inc *IncompleteError
		if !errors.As(err, &inc) {
			t.Errorf("%s: error = %v, want *IncompleteError", tt.name, err)
			continue
		}
		if err.Error() != tt.wantErr {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, err.Error(), tt.wantErr)
		}
	}
}

func TestCollectKeepsValidPointsOnFailure(t *testing.T) {
	logs := runDir(t, map[int]map[string]any{8: nil, 16: {"total_output_tokens": 0}}, pAgg)
	coll, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: []int{8, 16, 32}})
	var inc *IncompleteError
	if !errors.As(err, &inc) {
		t.Fatalf("error = %v", err)
	}
	if !reflect.DeepEqual(inc.Missing, []int{32}) || len(inc.Invalid) != 1 || inc.Invalid[0].Concurrency != 16 {
		t.Errorf("IncompleteError = %+v", inc)
	}
	if len(coll.Points) != 1 || coll.Points[0].Point.Concurrency != 8 {
		t.Errorf("valid points = %+v", coll.Points)
	}
}

func TestCollectDuplicateAndBadRequests(t *testing.T) {
	logs := runDir(t, map[int]map[string]any{8: nil}, pAgg)
	writeJSON(t, filepath.Join(logs, "sa-bench_isl_1024_osl_1024", "results_concurrency_8_gpus_8.json"), saBench(8, nil))
	_, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: []int{8}})
	if err == nil || !contains(err.Error(), "invalid points: 8 (several result files: ") {
		t.Errorf("duplicate: error = %v", err)
	}
	for _, concs := range [][]int{nil, {0}, {8, 8}} {
		if _, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: concs}); err == nil {
			t.Errorf("concurrencies %v accepted", concs)
		}
	}
}
