package results

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

func parseFixture(t *testing.T, conc int, overrides map[string]any) *SABenchResult {
	t.Helper()
	b, err := json.Marshal(saBench(conc, overrides))
	if err != nil {
		t.Fatal(err)
	}
	r, err := ParseSABench(b)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

var info4p1d = RunInfo{
	HW: "b200-dgxc", Image: "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.0", ModelPrefix: "dsr1",
	Framework: "dynamo-sglang", Precision: "fp4", SpecDecoding: "mtp", Disagg: true,
	RecipeFingerprint: "0123456789abcdef", ISL: 8192, OSL: 1024,
	Prefill: Parallelism{TP: 4, EP: 4, DPAttention: "true", NumWorkers: 4},
	Decode:  Parallelism{TP: 8, EP: 8, DPAttention: "true", NumWorkers: 1},
}

func wantFloat(t *testing.T, rec *Record, key string, want float64) {
	t.Helper()
	got, ok := rec.Float(key)
	if !ok {
		t.Errorf("%s missing", key)
		return
	}
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", key, got, want)
	}
}

// TestAggregate4P1D: 4 prefill workers × TP4 = 16 GPUs, 1 decode worker ×
// TP8 = 8 GPUs, total 210000 tok/s of which 24000 output tok/s.
func TestAggregate4P1D(t *testing.T) {
	r := parseFixture(t, 2048, map[string]any{
		"total_token_throughput": 210000.0, "output_throughput": 24000.0,
		"median_ttft_ms": 60718.0, "mean_tpot_ms": 25.0, "median_tpot_ms": 20.0, "std_tpot_ms": 0.0,
		"p99.9_tpot_ms": 40.0, "median_e2el_ms": 80500.0,
	})
	rec, err := Aggregate(r, p4p1d, info4p1d)
	if err != nil {
		t.Fatal(err)
	}
	wantFloat(t, rec, "tput_per_gpu", 8750)        // 210000 / (16 + 8)
	wantFloat(t, rec, "output_tput_per_gpu", 3000) // 24000 / 8 decode GPUs
	wantFloat(t, rec, "input_tput_per_gpu", 11625) // (210000 - 24000) / 16 prefill GPUs
	wantFloat(t, rec, "median_ttft", 60.718)       // ms → s
	wantFloat(t, rec, "median_e2el", 80.5)         // ms → s
	wantFloat(t, rec, "median_tpot", 0.020)        // ms → s
	wantFloat(t, rec, "median_intvty", 50)         // 1000 / 20 ms
	wantFloat(t, rec, "mean_intvty", 40)           // 1000 / 25 ms
	wantFloat(t, rec, "p99.9_intvty", 25)          // 1000 / 40 ms
	wantFloat(t, rec, "p99.9_tpot", 0.040)         //
	wantFloat(t, rec, "std_intvty", 0)             // zero std: no division
	wantFloat(t, rec, "std_tpot", 0)               //
	wantFloat(t, rec, "num_prefill_gpu", 16)       //
	wantFloat(t, rec, "num_decode_gpu", 8)         //
	wantFloat(t, rec, "conc", 2048)                //
	if _, ok := rec.Get("median_ttft_ms"); ok {
		t.Error("raw _ms keys must not be copied into the aggregate")
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "agg_4p1d.golden.json", append(b, '\n'))
}

// TestAggregateAggregatedTopology: no _ctx_/_gen_ means PREFILL_GPUS = gpus
// and DECODE_GPUS = 0 (the workflow's rule), so output tok/s/GPU is over all
// GPUs and the decode side reads tp/ep 0, pp/dcp/pcp 1.
func TestAggregateAggregatedTopology(t *testing.T) {
	r := parseFixture(t, 64, map[string]any{"total_token_throughput": 210000.0, "output_throughput": 24000.0})
	info := info4p1d
	info.Disagg = false
	info.Decode = Parallelism{TP: 8, PP: 2, DCPSize: 2, PCPSize: 2, EP: 8, DPAttention: "false", NumWorkers: 0}
	rec, err := Aggregate(r, pAgg, info)
	if err != nil {
		t.Fatal(err)
	}
	wantFloat(t, rec, "tput_per_gpu", 26250)       // 210000 / 8
	wantFloat(t, rec, "output_tput_per_gpu", 3000) // 24000 / 8 (no decode GPUs: all GPUs)
	wantFloat(t, rec, "input_tput_per_gpu", 23250) // 186000 / 8
	wantFloat(t, rec, "num_prefill_gpu", 8)
	wantFloat(t, rec, "num_decode_gpu", 0)
	for key, want := range map[string]float64{"decode_tp": 0, "decode_ep": 0, "decode_pp": 1, "decode_dcp_size": 1, "decode_pcp_size": 1} {
		wantFloat(t, rec, key, want)
	}
}

func TestAggregateZeroTPOT(t *testing.T) {
	// Every TPOT statistic zero (one-token outputs): no division by zero, no Inf in JSON.
	over := map[string]any{}
	for _, stat := range []string{"mean", "median", "std", "p90", "p99", "p99.9"} {
		over[stat+"_tpot_ms"] = 0.0
	}
	rec, err := Aggregate(parseFixture(t, 8, over), p4p1d, info4p1d)
	if err != nil {
		t.Fatal(err)
	}
	for _, stat := range []string{"mean", "median", "std", "p90", "p99", "p99.9"} {
		wantFloat(t, rec, stat+"_intvty", 0)
	}
	if _, err := json.Marshal(rec); err != nil {
		t.Errorf("aggregate does not encode: %v", err)
	}
}

func TestAggregateRejects(t *testing.T) {
	tests := []struct {
		name    string
		over    map[string]any
		p       PointID
		info    func(*RunInfo)
		wantErr string
	}{
		{"zero output", map[string]any{"output_throughput": 0.0}, p4p1d, nil, "non-positive throughput"},
		{"bad point", nil, PointID{Concurrency: 8, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 9}, nil, "gpus 24 is not ctx 16 + gen 9"},
		{"half hardware", nil, p4p1d, func(i *RunInfo) { i.PrefillHW = "b200" }, "must be given together"},
	}
	for _, tt := range tests {
		info := info4p1d
		if tt.info != nil {
			tt.info(&info)
		}
		_, err := Aggregate(parseFixture(t, 8, tt.over), tt.p, info)
		if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: error = %v, want %q", tt.name, err, tt.wantErr)
		}
	}
}

func TestWriteAggregate(t *testing.T) {
	dir := t.TempDir()
	rec, err := Aggregate(parseFixture(t, 2048, nil), p4p1d, info4p1d)
	if err != nil {
		t.Fatal(err)
	}
	name, _ := StagedName("RF", "sa-bench_isl_8192_osl_1024", p4p1d)
	path, err := WriteAggregate(dir, name, rec, atomicfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "agg_RF_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json"); path != want {
		t.Errorf("path = %s, want %s", path, want)
	}
	b, _ := os.ReadFile(path)
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil || back["tput_per_gpu"] != 8750.0 {
		t.Errorf("written aggregate %s: %v", b, err)
	}
}

func TestAggregateKeepsFileOrder(t *testing.T) {
	r, err := ParseSABench([]byte(inferencexResult))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := Aggregate(r, PointID{Concurrency: 8, GPUs: 2, PrefillGPUs: 1, DecodeGPUs: 1}, info4p1d)
	if err != nil {
		t.Fatal(err)
	}
	keys := rec.Keys()
	i := 0
	for i < len(keys) && keys[i] != "input_tput_per_gpu" {
		i++
	}
	got := strings.Join(keys[i+1:i+9], ",")
	if want := "mean_ttft,median_ttft,std_ttft,p90_ttft,p99_ttft,p99.9_ttft,mean_tpot,mean_intvty"; got != want {
		t.Errorf("latency keys after the throughputs = %s, want %s", got, want)
	}
}
