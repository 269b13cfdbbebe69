package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

// TestExampleSchemasPlanAlike: the demo recipe is schema 2
// (examples/mock-2p1d.yaml) and its schema-1 spelling is kept
// (examples/mock-2p1d-v1.yaml); render reads each as the schema it is, and
// the two plan the same run, byte for byte but for the recipe source.
func TestExampleSchemasPlanAlike(t *testing.T) {
	clearRenderEnv(t)
	root := repoRoot(t)
	plans := map[int]map[string]any{}
	for _, f := range []struct {
		file   string
		schema int
	}{{"mock-2p1d.yaml", 2}, {"mock-2p1d-v1.yaml", 1}} {
		out, errOut, code := runRender(t, "-p", filepath.Join(root, "profiles", "testcluster.toml"),
			"-r", filepath.Join(root, "examples", f.file), "--json")
		if code != 0 {
			t.Fatalf("render %s: exit %d\n%s", f.file, code, errOut)
		}
		var pl map[string]any
		if err := json.Unmarshal([]byte(out), &pl); err != nil {
			t.Fatal(err)
		}
		src, _ := pl["recipe"].(map[string]any)
		if got, _ := src["schema"].(float64); int(got) != f.schema {
			t.Errorf("%s read as schema %v, want %d", f.file, src["schema"], f.schema)
		}
		delete(pl, "recipe")
		plans[f.schema] = pl
	}
	if !reflect.DeepEqual(plans[1], plans[2]) {
		a, _ := json.MarshalIndent(plans[1], "", " ")
		b, _ := json.MarshalIndent(plans[2], "", " ")
		t.Errorf("the schema-1 and schema-2 examples plan differently: %s", firstDiffLine(a, b))
	}
}

// TestMeasurementWindowsFromEnv: bench --url inside a custom benchmark
// writes windows only when srtctl's SRT_MEASUREMENT_WINDOW_DIR is set, with
// the result root and benchmark type the recipe's variables give (else
// /logs and sa-bench).
func TestMeasurementWindowsFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := measurementWindows(env(nil)); got != nil {
		t.Errorf("no SRT_MEASUREMENT_WINDOW_DIR: %+v, want none", got)
	}
	got := measurementWindows(env(map[string]string{"SRT_MEASUREMENT_WINDOW_DIR": "/logs/power/windows"}))
	if got == nil || got.WindowDir != "/logs/power/windows" || got.ResultRoot != "/logs" || got.WindowBenchmarkType != "" || got.PowerDir != "" {
		t.Errorf("defaults: %+v", got)
	}
	got = measurementWindows(env(map[string]string{"SRT_MEASUREMENT_WINDOW_DIR": "/w", "SRT_MEASUREMENT_WINDOW_RESULT_ROOT": "/r",
		"SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE": "custom"}))
	if got == nil || got.WindowDir != "/w" || got.ResultRoot != "/r" || got.WindowBenchmarkType != "custom" {
		t.Errorf("set: %+v", got)
	}
}
