// Package resultstest holds the fixtures the tests of results and of the
// packages that read results share. Tests only.
package resultstest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// SABench returns a complete SA-Bench result as InferenceX's copy writes it,
// with overrides applied (a nil override value deletes the key).
func SABench(conc int, overrides map[string]any) map[string]any {
	n := conc * 10
	m := map[string]any{
		"date": "20250101-000000", "backend": "dynamo", "model_id": "deepseek-ai/DeepSeek-R1-0528",
		"tokenizer_id": "/model", "best_of": 1, "num_prompts": n, "request_rate": "inf", "burstiness": 1.0,
		"max_concurrency": conc, "duration": 100.0, "completed": n,
		"total_input_tokens": n * 1000, "total_output_tokens": n * 100,
		"request_throughput": float64(n) / 100, "request_goodput:": nil,
		"output_throughput": 24000.0, "total_token_throughput": 210000.0,
		"input_lens": []int{1000}, "output_lens": []int{100},
	}
	for _, metric := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, stat := range []string{"mean", "median", "std", "p90", "p99", "p99.9"} {
			m[stat+"_"+metric+"_ms"] = 10.0
		}
	}
	for k, v := range overrides {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	return m
}

// WriteJSON writes v indented at path, as the benchmark clients do.
func WriteJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, path, string(b))
}

// WriteFile writes content at path, making its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
