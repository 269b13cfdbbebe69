package results

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// saBench returns a complete SA-Bench result as InferenceX's copy writes it,
// with overrides applied (a nil override value deletes the key).
func saBench(conc int, overrides map[string]any) map[string]any {
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

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
