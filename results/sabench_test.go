package results

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

// An InferenceX-style file (trailing-colon goodput key, 90/99/99.9
// percentiles) with a --metadata pair and srt-slurm's extra key.
const inferencexResult = `{"date": "20250101-000000", "backend": "vllm", "model_id": "m", "tokenizer_id": "t",
 "best_of": 1, "num_prompts": 80, "run_label": "x", "request_rate": "inf", "burstiness": 1.0,
 "max_concurrency": 8, "duration": 12.5, "benchmark_start_time_unix": 1700000000.5,
 "benchmark_end_time_unix": 1700000013.0, "completed": 80, "total_input_tokens": 80000,
 "total_output_tokens": 8000, "request_throughput": 6.4, "request_goodput:": null,
 "output_throughput": 640.0, "total_token_throughput": 7040.0, "input_lens": [1000], "output_lens": [100],
 "mean_ttft_ms": 50.0, "median_ttft_ms": 49.0, "std_ttft_ms": 1.0, "p90_ttft_ms": 51.0, "p99_ttft_ms": 52.0, "p99.9_ttft_ms": 53.0,
 "mean_tpot_ms": 10.0, "median_tpot_ms": 10.0, "std_tpot_ms": 0.0, "p90_tpot_ms": 10.0, "p99_tpot_ms": 10.0, "p99.9_tpot_ms": 10.0,
 "mean_itl_ms": 10.0, "median_itl_ms": 10.0, "std_itl_ms": 0.5, "p90_itl_ms": 11.0, "p99_itl_ms": 12.0, "p99.9_itl_ms": 13.0,
 "mean_e2el_ms": 1040.0, "median_e2el_ms": 1039.0, "std_e2el_ms": 2.0, "p90_e2el_ms": 1041.0, "p99_e2el_ms": 1042.0, "p99.9_e2el_ms": 1043.0,
 "peak_output_tokens_per_s": 700.5}`

func TestParseSABench(t *testing.T) {
	r, err := ParseSABench([]byte(inferencexResult))
	if err != nil {
		t.Fatal(err)
	}
	e2el, _ := r.Metric("e2el")
	p999, _ := e2el.Percentile(99.9)
	tpot, _ := r.Metric("tpot")
	if !math.IsInf(r.RequestRate, 1) || r.MaxConcurrency != 8 || r.Completed != 80 || r.TotalOutputTokens != 8000 ||
		r.TotalTokenThroughput != 7040 || r.RequestGoodput != nil || p999 != 1043 || tpot.Std != 0 {
		t.Errorf("parsed %+v", r)
	}
	if !r.Has("run_label") || !r.Has("peak_output_tokens_per_s") {
		t.Error("members the model does not know (run_label, peak_output_tokens_per_s) were not kept")
	}
	if probs := r.Problems(); len(probs) != 0 {
		t.Errorf("valid result has problems %v", probs)
	}
	// Round trip: Marshal keeps every key and value.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	json.Unmarshal([]byte(inferencexResult), &before)
	json.Unmarshal(b, &after)
	if !reflect.DeepEqual(before, after) {
		t.Errorf("round trip changed the result:\n%s", b)
	}
	if !strings.Contains(string(b), `"request_goodput:":null`) {
		t.Errorf("the trailing-colon key was not written back: %s", b)
	}
}

func TestParseSABenchPythonNaN(t *testing.T) {
	// What Python's json writes when no request succeeded.
	in := `{"completed": 0, "mean_ttft_ms": NaN, "median_ttft_ms": Infinity, "std_ttft_ms": -Infinity, "model_id": "NaN Infinity"}`
	r, err := ParseSABench([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	ttft, _ := r.Metric("ttft")
	if r.ModelID != "NaN Infinity" || ttft.Mean != 0 || !r.Has("median_ttft_ms") {
		t.Errorf("parsed %+v", r)
	}
}

func TestProblems(t *testing.T) {
	tests := []struct {
		name      string
		overrides map[string]any
		want      []string
	}{
		{"valid", nil, nil},
		{"no output tokens", map[string]any{"total_output_tokens": 0}, []string{"0 output tokens"}},
		{"nothing completed", map[string]any{"completed": 0, "total_output_tokens": 0},
			[]string{"0 completed requests", "0 output tokens"}},
		{"marked", map[string]any{"slurmbench_valid": false, "slurmbench_invalid_reason": "failure rate 6.0 % above 5 %"},
			[]string{"marked invalid: failure rate 6.0 % above 5 %"}},
		{"marked without reason", map[string]any{"slurmbench_valid": false}, []string{"marked invalid"}},
		{"marked valid", map[string]any{"slurmbench_valid": true}, nil},
		{"missing fields", map[string]any{"median_tpot_ms": nil, "completed": nil},
			[]string{"missing fields: completed, median_tpot_ms"}},
		// 75 of 80: 6.25 % failed.
		{"failure rate", map[string]any{"completed": 75}, []string{"failure rate 6.2 % above 5.0 % (75/80 completed)"}},
		// 76 of 80: exactly 5 % is allowed, as in SA-Bench (> 0.05 fails),
		// and as the writer's gate says (ValidateSABench: one rule).
		{"failure rate at the limit", map[string]any{"completed": 76}, nil},
	}
	for _, tt := range tests {
		b, _ := json.Marshal(saBench(8, tt.overrides))
		r, err := ParseSABench(b)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := r.Problems(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Problems = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// The writer's gate and the readers' agree at the 5 % boundary: a point the
// writer passes is one every reader passes.
func TestOneFailureGate(t *testing.T) {
	for completed := 70; completed <= 80; completed++ {
		r := builtResult(80, completed)
		writerOK := ValidateSABench(r, 80) == nil
		r.Valid = nil
		readerOK := len(r.Problems()) == 0
		if writerOK != readerOK {
			t.Errorf("%d/80 completed: writer valid %v, reader valid %v (%v)", completed, writerOK, readerOK, r.Problems())
		}
	}
}

func TestSABenchBuiltInGoIsComplete(t *testing.T) {
	// A writer (the native client) filling the struct produces every required field.
	r := builtResult(80, 80)
	if probs := r.Problems(); len(probs) != 0 {
		t.Errorf("Problems = %v", probs)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"request_rate":"inf"`) {
		t.Errorf("request_rate not written as \"inf\": %s", b)
	}
}

func builtResult(numPrompts, completed int) *SABenchResult {
	r := &SABenchResult{MaxConcurrency: 8, NumPrompts: numPrompts, Completed: completed, TotalOutputTokens: completed, RequestRate: math.Inf(1)}
	for _, m := range MetricNames {
		r.Metrics = append(r.Metrics, MetricStats{Name: m, Mean: 1, Median: 1, Std: 0})
	}
	return r
}
