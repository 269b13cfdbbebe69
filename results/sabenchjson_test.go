package results

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pythonFormatResult holds the values of testdata/python_format.json, which
// Python's json.dump wrote from the same dict (see the file's generator in
// the commit that added it): field for field and byte for byte, a native
// result must look like one from benchmark_serving.py.
func pythonFormatResult() *SABenchResult {
	stats := func(name string, std float64) MetricStats {
		return MetricStats{Name: name, Mean: 50.25, Median: 50, Std: std,
			Percentiles: []Percentile{{90, 51}, {99, 52}, {99.9, 52.5}}}
	}
	return &SABenchResult{
		Date: "20261203-101500", Backend: "vllm", ModelID: "deepseek-ai/DeepSeek-R1", TokenizerID: "/model",
		BestOf: 1, NumPrompts: 80,
		Metadata:    []KeyValue{{"runner", "b200-dgxc_7"}, {"note", "é€😀\x7f\n"}},
		RequestRate: math.Inf(1), Burstiness: 1, MaxConcurrency: 8,
		Duration: 12.345678901234567, BenchmarkStartTimeUnix: 1796300100.123456, BenchmarkEndTimeUnix: 1796300112.4691348,
		Completed: 80, TotalInputTokens: 4567, TotalOutputTokens: 2282,
		RequestThroughput: 6.480000518400041, OutputThroughput: 184.8432147869, TotalTokenThroughput: 554.7691039452,
		InputLens: []int{63, 56, 51}, OutputLens: []int{28, 31, 27},
		Metrics: []MetricStats{stats("ttft", 1.5), stats("tpot", 0), stats("itl", 1.5), stats("e2el", 1.5)},
	}
}

func TestResultJSONIsByteIdenticalToPython(t *testing.T) {
	want, err := os.ReadFile("testdata/python_format.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pythonFormatResult().MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("native JSON differs from json.dump's:\n got: %s\nwant: %s", got, want)
	}
}

func TestResultFieldNames(t *testing.T) {
	res := pythonFormatResult()
	res.Metadata = nil
	res.Client = ClientNative
	res.Errors = []ErrorCount{{"HTTP 503 Service Unavailable: overloaded", 2}}
	valid := false
	res.Valid, res.InvalidReason = &valid, "total output tokens is 0"
	data, _ := res.MarshalJSON()
	// benchmark_serving.py's keys in its order, then ours.
	want := []string{"date", "backend", "model_id", "tokenizer_id", "best_of", "num_prompts",
		"request_rate", "burstiness", "max_concurrency", "duration", "benchmark_start_time_unix",
		"benchmark_end_time_unix", "completed", "total_input_tokens", "total_output_tokens",
		"request_throughput", "request_goodput:", "output_throughput", "total_token_throughput",
		"input_lens", "output_lens"}
	for _, m := range MetricNames {
		for _, s := range []string{"mean", "median", "std", "p90", "p99", "p99.9"} {
			want = append(want, s+"_"+m+"_ms")
		}
	}
	want = append(want, "slurmbench_client", "slurmbench_errors", "slurmbench_valid", "slurmbench_invalid_reason")
	if got := topLevelKeys(t, data); !slices.Equal(got, want) {
		t.Errorf("keys\n got %q\nwant %q", got, want)
	}
	golden(t, "result_fields.golden", append(data, '\n'))
}

func TestReadMarkWriteKeepsPythonFile(t *testing.T) {
	orig, err := os.ReadFile("testdata/python_result.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "results_concurrency_8_gpus_24_ctx_16_gen_8.json")
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := ReadSABench(path)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 80 || res.NumPrompts != 80 || res.MaxConcurrency != 8 || res.TotalOutputTokens != 2282 ||
		!math.IsInf(res.RequestRate, 1) || res.RequestGoodput != nil || res.Duration != 12.345678901234567 {
		t.Errorf("parsed %+v", res)
	}
	tpot, ok := res.Metric("tpot")
	if p999, _ := tpot.Percentile(99.9); !ok || tpot.Std != 0 || tpot.Median != 50 || p999 != 52.5 {
		t.Errorf("parsed tpot %+v", tpot)
	}
	// std_tpot_ms is 0: the gate must not trip over it.
	if err := ValidateSABench(res, 80); err != nil {
		t.Fatalf("ValidateSABench: %v", err)
	}
	if err := WriteSABench(path, res); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(path)
	// Every original member is kept verbatim, in order; the mark is appended.
	wantPrefix := orig[:len(orig)-1]
	if !bytes.HasPrefix(written, wantPrefix) || !bytes.HasSuffix(written, []byte(`, "slurmbench_valid": true}`)) {
		t.Errorf("marked file\n%s\ndoes not keep\n%s", written, orig)
	}

	// Marking again replaces the verdict instead of adding a second one.
	again, _ := ReadSABench(path)
	if err := ValidateSABench(again, 160); err == nil {
		t.Fatal("ValidateSABench accepted a point with the wrong num_prompts")
	}
	if err := WriteSABench(path, again); err != nil {
		t.Fatal(err)
	}
	written, _ = os.ReadFile(path)
	keys := topLevelKeys(t, written)
	if n := count(keys, "slurmbench_valid"); n != 1 || keys[len(keys)-1] != "slurmbench_invalid_reason" {
		t.Errorf("re-marked keys end %q", keys[len(keys)-4:])
	}
	var doc map[string]any
	_ = json.Unmarshal(written, &doc)
	if reason, _ := doc["slurmbench_invalid_reason"].(string); doc["slurmbench_valid"] != false ||
		!strings.HasPrefix(reason, "num_prompts is 80, expected 160; request failure rate 50.00%") {
		t.Errorf("mark = %v / %v", doc["slurmbench_valid"], doc["slurmbench_invalid_reason"])
	}
	if doc["peak_output_tokens_per_s"] != 190.5 {
		t.Errorf("unknown member lost: %v", doc["peak_output_tokens_per_s"])
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries after writes, want only the result", len(entries))
	}
}

func TestNativeResultRoundTrip(t *testing.T) {
	res := pythonFormatResult()
	res.Client = ClientNative
	res.Partial = true
	res.Errors = []ErrorCount{{"interrupted: context canceled", 3}}
	data, _ := res.MarshalJSON()
	back, err := ParseSABench(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.Client != ClientNative || !back.Partial || len(back.Errors) != 1 || back.Errors[0].Count != 3 ||
		back.Completed != res.Completed || len(back.Metrics) != 4 || back.Metrics[1].Percentiles[2] != (Percentile{99.9, 52.5}) {
		t.Errorf("round trip lost fields: %+v", back)
	}
	again, _ := back.MarshalJSON()
	if !bytes.Equal(again, data) {
		t.Errorf("re-encoding changed the file:\n%s\n%s", again, data)
	}
}

func TestParseResultReadsSRTSlurmSpelling(t *testing.T) {
	res, err := ParseSABench([]byte(`{"request_goodput": 3.5, "max_concurrency": null, "completed": 10.0, "p99_itl_ms": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.RequestGoodput == nil || *res.RequestGoodput != 3.5 || res.MaxConcurrency != 0 || res.Completed != 10 {
		t.Errorf("parsed %+v", res)
	}
	if m, _ := res.Metric("itl"); len(m.Percentiles) != 1 || m.Percentiles[0] != (Percentile{99, 7}) {
		t.Errorf("p99_itl_ms parsed as %+v", m)
	}
	for _, bad := range []string{`[]`, `{"completed": "many"}`, `{"completed": 1.5}`, `{"a": 1`} {
		if _, err := ParseSABench([]byte(bad)); err == nil {
			t.Errorf("ParseSABench(%s) accepted", bad)
		}
	}
}

func TestWriteResultFailsCleanly(t *testing.T) {
	err := WriteSABench(filepath.Join(t.TempDir(), "missing", "r.json"), pythonFormatResult())
	if err == nil {
		t.Fatal("WriteSABench into a missing directory succeeded")
	}
}

func TestPercentileKey(t *testing.T) {
	for p, want := range map[float64]string{90: "p90", 99: "p99", 99.9: "p99.9", 50: "p50", 99.99: "p99.99"} {
		if got := PercentileKey(p); got != want {
			t.Errorf("PercentileKey(%v) = %s, want %s", p, got, want)
		}
	}
}

func topLevelKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// TestAddedLatencyFields: the client-added latency distributions are
// written after benchmark_serving.py's members (which stay exactly as
// without them), read back, kept when a file is marked again, and left out
// of InferenceX's aggregate (which copies every numeric *ms member).
func TestAddedLatencyFields(t *testing.T) {
	plain := pythonFormatResult()
	plain.Client = ClientNative
	want, _ := plain.MarshalJSON()

	res := pythonFormatResult()
	res.Client = ClientNative
	res.AddedLatency = &LatencyDist{Events: 2282, Negative: 1, Mean: 0.0625, Median: 0.03125, P90: 0.5, P99: 1.25, Max: 7.5}
	res.ReadLatency = &LatencyDist{Events: 2282, Mean: 0.25, Median: 0.125, P90: 1, P99: 2.5, Max: 9}
	data, _ := res.MarshalJSON()
	wantTail := `, "slurmbench_added_latency": {"events": 2282, "negative": 1, "mean_ms": 0.0625, "median_ms": 0.03125, "p90_ms": 0.5, "p99_ms": 1.25, "max_ms": 7.5}` +
		`, "slurmbench_read_latency": {"events": 2282, "negative": 0, "mean_ms": 0.25, "median_ms": 0.125, "p90_ms": 1.0, "p99_ms": 2.5, "max_ms": 9.0}}`
	if !bytes.Equal(data, append(want[:len(want)-1:len(want)-1], wantTail...)) {
		t.Errorf("written\n%s\nwant the plain result followed by\n%s", data, wantTail)
	}

	path := filepath.Join(t.TempDir(), "r.json")
	if err := WriteSABench(path, res); err != nil {
		t.Fatal(err)
	}
	back, err := ReadSABench(path)
	if err != nil {
		t.Fatal(err)
	}
	if back.AddedLatency == nil || *back.AddedLatency != *res.AddedLatency || back.ReadLatency == nil || *back.ReadLatency != *res.ReadLatency {
		t.Fatalf("read back %+v / %+v", back.AddedLatency, back.ReadLatency)
	}
	valid := true
	back.Valid = &valid
	if err := WriteSABench(path, back); err != nil {
		t.Fatal(err)
	}
	marked, _ := os.ReadFile(path)
	if !bytes.Contains(marked, []byte(`"slurmbench_added_latency": {"events": 2282,`)) || count(topLevelKeys(t, marked), "slurmbench_added_latency") != 1 {
		t.Errorf("marking lost or doubled the distribution:\n%s", marked)
	}

	rec, err := Aggregate(back, PointID{Concurrency: 8, GPUs: 24, PrefillGPUs: 16, DecodeGPUs: 8}, RunInfo{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rec.Keys() {
		if strings.Contains(k, "slurmbench") || strings.Contains(k, "latency") {
			t.Errorf("aggregate has %q", k)
		}
	}
}
