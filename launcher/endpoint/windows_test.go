package endpoint

import "testing"

// TestMeasurementWindowsFromEnv: bench --url inside a custom benchmark
// writes windows only when srtctl's SRT_MEASUREMENT_WINDOW_DIR is set, with
// the result root and benchmark type the recipe's variables give (else
// /logs and sa-bench).
func TestMeasurementWindowsFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	if got := MeasurementWindows(env(nil)); got != nil {
		t.Errorf("no SRT_MEASUREMENT_WINDOW_DIR: %+v, want none", got)
	}
	got := MeasurementWindows(env(map[string]string{"SRT_MEASUREMENT_WINDOW_DIR": "/logs/power/windows"}))
	if got == nil || got.WindowDir != "/logs/power/windows" || got.ResultRoot != "/logs" || got.WindowBenchmarkType != "" || got.PowerDir != "" {
		t.Errorf("defaults: %+v", got)
	}
	got = MeasurementWindows(env(map[string]string{"SRT_MEASUREMENT_WINDOW_DIR": "/w", "SRT_MEASUREMENT_WINDOW_RESULT_ROOT": "/r",
		"SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE": "custom"}))
	if got == nil || got.WindowDir != "/w" || got.ResultRoot != "/r" || got.WindowBenchmarkType != "custom" {
		t.Errorf("set: %+v", got)
	}
}
