package planner

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// TestCustomTelemetryPlan: a schema-2 custom benchmark with telemetry on
// is measured: one window of the client's type per concurrency it is asked
// for, result paths relative to the logs, and the client told where to
// write windows unless the recipe says; collect_interval_ms is the period.
func TestCustomTelemetryPlan(t *testing.T) {
	const tel = `telemetry:
  enabled: true
  collect_interval_ms: 250
  dcgm_exporter: {container_image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9, port: 19401, command: "dcgm-exporter --address :{port}"}
`
	custom := strings.Replace(mockV2, `benchmark: {type: sa-bench, isl: 1024, osl: 128, concurrencies: "8x32", req_rate: inf}`,
		"benchmark:\n  type: custom\n  concurrencies: [8, 40]\n  command: bash /opt/agentic_srt.sh\n  env: {X: y}\n", 1)
	cases := []struct {
		name     string
		text     string
		concs    []int
		windows  []plan.TelemetryWindow
		env      string
		interval float64
	}{
		{name: "recipe concurrencies", text: custom + tel,
			windows: []plan.TelemetryWindow{{BenchmarkType: "custom", Concurrency: 8}, {BenchmarkType: "custom", Concurrency: 40}}, env: "/logs/power/windows", interval: 0.25},
		{name: "CONC_LIST wins", text: custom + tel, concs: []int{4},
			windows: []plan.TelemetryWindow{{BenchmarkType: "custom", Concurrency: 4}}, env: "/logs/power/windows", interval: 0.25},
		{name: "the recipe's window variables win", text: strings.Replace(custom, "env: {X: y}",
			"env: {SRT_MEASUREMENT_WINDOW_DIR: /elsewhere, SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE: agentx}", 1) + tel,
			windows: []plan.TelemetryWindow{{BenchmarkType: "agentx", Concurrency: 8}, {BenchmarkType: "agentx", Concurrency: 40}}, env: "/elsewhere", interval: 0.25},
		{name: "sa-bench as before", text: mockV2 + tel, windows: []plan.TelemetryWindow{{BenchmarkType: "sa-bench", Concurrency: 8}, {BenchmarkType: "sa-bench", Concurrency: 32}}, interval: 0.25},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			td := testdataDir(t)
			r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(tc.text))
			if err != nil {
				t.Fatal(err)
			}
			in := inputs(loadProfile(t, filepath.Join(td, "profiles", "mock4.toml")), r)
			in.Concurrencies = tc.concs
			pl, err := Build(in)
			if err != nil {
				t.Fatal(err)
			}
			tel := pl.Telemetry
			if tel == nil {
				t.Fatal("no telemetry planned")
			}
			if !reflect.DeepEqual(tel.Windows, tc.windows) || tel.IntervalSeconds != tc.interval {
				t.Errorf("windows %+v every %vs, want %+v every %vs", tel.Windows, tel.IntervalSeconds, tc.windows, tc.interval)
			}
			var bench, exporter plan.Process
			for _, p := range pl.Processes {
				switch p.Role {
				case plan.RoleBenchmark:
					bench = p
				case plan.RoleTelemetry:
					exporter = p
				}
			}
			if got := bench.Env[plan.EnvMeasurementWindowDir]; got != tc.env {
				t.Errorf("SRT_MEASUREMENT_WINDOW_DIR %q, want %q", got, tc.env)
			}
			if tc.env != "" && tel.ResultRoot != pl.Layout.Logs {
				t.Errorf("result root %s, want the logs %s", tel.ResultRoot, pl.Layout.Logs)
			}
			if want := []string{"dcgm-exporter", "--address", ":19401"}; !reflect.DeepEqual(exporter.Argv, want) {
				t.Errorf("exporter argv %q, want the recipe's command with {port} filled %q", exporter.Argv, want)
			}
		})
	}
}

// TestCustomTelemetryNoConcurrencies: without benchmark.concurrencies or
// CONC_LIST (InferenceX's workflow passes CONC_LIST at run time) a custom
// benchmark still plans its telemetry, expecting no window.
func TestCustomTelemetryNoConcurrencies(t *testing.T) {
	text := strings.Replace(mockV2, `benchmark: {type: sa-bench, isl: 1024, osl: 128, concurrencies: "8x32", req_rate: inf}`,
		"benchmark: {type: custom, command: bash /opt/agentic_srt.sh}\ntelemetry: {enabled: true, collect_interval_ms: 1000, dcgm_exporter: {container_image: dcgm, port: 9401}}\n", 1)
	td := testdataDir(t)
	r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "mock4.toml")), r))
	if err != nil {
		t.Fatal(err)
	}
	if pl.Telemetry == nil || len(pl.Telemetry.Windows) != 0 {
		t.Errorf("telemetry %+v, want planned with no window", pl.Telemetry)
	}
}

// TestCPUPowerExporterNamed: telemetry.cpu_power_exporter is not collected
// (slurmbench runs the DCGM leg only), and render says so, naming it.
func TestCPUPowerExporterNamed(t *testing.T) {
	td := testdataDir(t)
	text := mockV2 + "telemetry:\n  enabled: true\n  dcgm_exporter: {container_image: dcgm, port: 9401}\n  cpu_power_exporter: {port: 9405, source: acpi}\n"
	r, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Build(inputs(loadProfile(t, filepath.Join(td, "profiles", "mock4.toml")), r))
	if err != nil {
		t.Fatal(err)
	}
	var human bytes.Buffer
	if err := pl.WriteHuman(&human); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(human.String(), "cpu_power_exporter (port 9405, source acpi) requested and NOT collected") {
		t.Errorf("render does not name the uncollected CPU leg:\n%s", human.String())
	}
	for _, bad := range []string{"{port: 9401}", "{source: rapl}"} {
		_, err := recipe.Parse(filepath.Join(td, "recipes", "mock-2p1d-v2.yaml"), []byte(strings.Replace(text, "{port: 9405, source: acpi}", bad, 1)))
		if err == nil || !strings.Contains(err.Error(), "telemetry.cpu_power_exporter.") {
			t.Errorf("cpu_power_exporter %s: err = %v, want one naming the field", bad, err)
		}
	}
}
