package e2e

import (
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results/power"
)

// telemetryBlock turns on DCGM power telemetry in a mock recipe; the
// profile's mock_watts runs slurmbench's mock exporter on each worker node.
const telemetryBlock = `telemetry:
  enabled: true
  default_frequency: 0.5
  dcgm_exporter:
    container_image: dcgm-exporter
    port: 19401
`

const mockWatts = 350.0

// TestPowerTelemetry runs the mock 2P1D point with telemetry on the test
// cluster and rechecks what it staged as the workflow's consumer does
// (power.Recheck; its verdicts are held to InferenceX's aggregator's by
// results/power's tests on recorded facts).
func TestPowerTelemetry(t *testing.T) {
	t.Parallel()
	c := setup(t)
	t.Run("valid package", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-power")
		r := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name, OSL: 64, ITL: "20ms", Conc: "4x8"}.String() + telemetryBlock})
		appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n")
		r.start()
		if code := r.wait(5 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		if !regexp.MustCompile(`power c8: [0-9.]+ J per output token over [0-9.]+ s; decode 350.0 W/GPU, prefill 350.0 W/GPU`).MatchString(r.output()) {
			t.Errorf("summary lacks the energy line:\n%s", r.output())
		}
		sha, err := os.ReadFile(filepath.Join(r.stage, "power-producer-sha.txt"))
		if err != nil || strings.TrimSpace(string(sha)) == "" {
			t.Fatalf("producer stamp: %q %v", sha, err)
		}
		m, err := power.ReadManifest(filepath.Join(r.stage, "LOGS", "power", power.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if m.Producer != power.Producer || m.PublicationValid == nil || !*m.PublicationValid || len(m.ObservedDevices) != 12 {
			t.Fatalf("manifest: producer %s valid %v observed %d reasons %v", m.Producer, m.PublicationValid, len(m.ObservedDevices), m.Reasons)
		}
		results := stagedResults(t, r.stage)
		if len(results) != 2 {
			t.Fatalf("staged results %v", results)
		}
		// The workflow's consumer recomputes the verdict: pinned to
		// srt-slurm's producer name only that name is refused; with
		// slurmbench's accepted the package publishes, and its energy is
		// wattage × GPUs × window / output tokens.
		logs := filepath.Join(r.stage, "LOGS")
		pinned, err := power.Recheck(filepath.Join(logs, "power"), logs, power.SrtSlurmProducer)
		if err != nil {
			t.Fatal(err)
		}
		if pinned.Valid || len(pinned.Failures) != 2 || !strings.HasPrefix(pinned.Failures[0], "producer is '"+power.Producer+"'") {
			t.Errorf("pinned consumer: %+v, want refused for the producer name only", pinned)
		}
		if v, err := power.Recheck(filepath.Join(logs, "power"), logs, power.SrtSlurmProducer, power.Producer); err != nil || !v.Valid {
			t.Errorf("consumer accepting slurmbench: %+v %v, want publishable", v, err)
		}
		for _, res := range results {
			var raw struct {
				Start  float64 `json:"benchmark_start_time_unix"`
				End    float64 `json:"benchmark_end_time_unix"`
				Output int     `json:"total_output_tokens"`
				Conc   int     `json:"max_concurrency"`
			}
			b, err := os.ReadFile(filepath.Join(r.stage, res))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			e, err := power.WindowEnergy(filepath.Join(logs, "power"), m, raw.Conc, raw.Output)
			if err != nil {
				t.Fatalf("%s: %v", res, err)
			}
			want := mockWatts * 12 * (raw.End - raw.Start) / float64(raw.Output)
			if got := e.JoulesPerToken; math.Abs(got-want)/want > 0.01 {
				t.Errorf("%s: J per output token %v, want %v within 1%%", res, got, want)
			}
		}
	})
	t.Run("stalled exporter", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-power-stall")
		// Two waves of four 64-token answers at 100 ms a token: a window of
		// about 13 s. Every exporter holds its answers from 4 s to 12 s
		// after it started (before the health gate passes): longer than
		// the 3 s gap a window may contain, and inside the window.
		r := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name, OSL: 64, ITL: "100ms"}.String() + telemetryBlock})
		appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n")
		r.editProfile("[env]\n", "[env]\nset = {SLURMBENCH_MOCK_DCGM_STALL_AFTER = \"4s\", SLURMBENCH_MOCK_DCGM_STALL_FOR = \"8s\"}\n")
		r.start()
		if code := r.wait(5 * time.Minute); code != 0 {
			t.Fatalf("a stalled exporter failed the benchmark: exit %d\n%s", code, r.output())
		}
		m, err := power.ReadManifest(filepath.Join(r.stage, "LOGS", "power", power.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if m.PublicationValid == nil || *m.PublicationValid || !slices.Contains(m.Reasons, power.SampleGapExceeded) {
			t.Fatalf("manifest valid %v reasons %v, want invalid with %s", m.PublicationValid, m.Reasons, power.SampleGapExceeded)
		}
		if !strings.Contains(r.output(), "not publishable") {
			t.Errorf("the summary does not say the package is not publishable:\n%s", r.output())
		}
	})
}

func appendProfile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// TestPowerTelemetryV2: schema-2 telemetry drives the power collector end
// to end. The recipe's own dcgm_exporter.command (with {port}) is what runs
// on each worker node (here slurmbench's mock exporter at 275 W, named by
// the command, in the exporter image), polled every collect_interval_ms;
// and a custom fixed-sequence point (srt_fixed_sequence.sh's contract,
// its client slurmbench's native one) is measured too: its client writes
// custom windows where SRT_MEASUREMENT_WINDOW_DIR says, and the package is
// publishable with the energy per output token in the summary.
func TestPowerTelemetryV2(t *testing.T) {
	t.Parallel()
	c := setup(t)
	t.Run("dcgm command and collect_interval_ms", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-power-v2")
		runID := name + "-run"
		runDir := filepath.Join(c.Root, "runs", runID)
		// On the shared filesystem: the nodes do not see this host's /tmp.
		sq := filepath.Join(c.Root, "squash", name+"-dcgm.sqsh")
		if out, err := exec.Command(c.Enroot, "import", "-o", sq, "docker://nvidia/dcgm-exporter:standin").CombinedOutput(); err != nil {
			t.Fatalf("making the exporter image: %v\n%s", err, out)
		}
		t.Cleanup(func() { _ = os.Remove(sq) })
		rec := mockRecipe{Name: name, OSL: 64, ITL: "20ms", Conc: "4x8"}.V2() + `telemetry:
  enabled: true
  collect_interval_ms: 500
  dcgm_exporter:
    container_image: dcgm-standin
    port: 19411
    command: ` + filepath.Join(runDir, "bin", "slurmbench") + ` mock-dcgm-exporter --listen 0.0.0.0:{port} --gpus 0,1,2,3 --watts 275
`
		r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID}})
		r.editProfile("[containers]\n", "[containers]\ndcgm-standin = \""+sq+"\"\n")
		r.start()
		if code := r.wait(5 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		m, err := power.ReadManifest(filepath.Join(r.stage, "LOGS", "power", power.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if m.PublicationValid == nil || !*m.PublicationValid || len(m.ObservedDevices) != 12 || m.SampleInterval != 0.5 {
			t.Fatalf("manifest: valid %v observed %d interval %v reasons %v", m.PublicationValid, len(m.ObservedDevices), m.SampleInterval, m.Reasons)
		}
		if !regexp.MustCompile(`power c8: [0-9.]+ J per output token over [0-9.]+ s; decode 275.0 W/GPU, prefill 275.0 W/GPU`).MatchString(r.output()) {
			t.Errorf("summary lacks the 275 W energy line:\n%s", r.output())
		}
		spec, _ := os.ReadFile(filepath.Join(runDir, "steps", "telemetry_dcgm_exporter.json"))
		if !strings.Contains(string(spec), `"0.0.0.0:19411"`) {
			t.Errorf("the exporter did not run the recipe's command with {port} filled: %s", spec)
		}
		r.removeOnPass()
	})
	t.Run("custom fixed-sequence point", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-power-custom")
		runID := name + "-run"
		runDir := filepath.Join(c.Root, "runs", runID)
		ws, script := c.workspaceScript(t, name, "fixed-sequence-mock.sh", "srt_fixed_sequence.sh")
		rec := v2Custom(name, `benchmark:
  type: custom
  concurrencies: [2, 4]
  command: bash `+script+`
  env:
    ISL: '64'
    OSL: '64'
    SRT_LOGS_DIR: `+filepath.Join(runDir, "logs")+`
    SLURMBENCH: `+filepath.Join(runDir, "bin", "slurmbench")+`
    SRT_MEASUREMENT_WINDOW_DIR: `+filepath.Join(runDir, "logs", "power", "windows")+`
    SRT_MEASUREMENT_WINDOW_RESULT_ROOT: `+filepath.Join(runDir, "logs")+`
    SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE: custom
`+telemetryBlock)
		r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID}, env: []string{
			"RESULT_FILENAME=" + name, "MODEL=mock/DeepSeek-R1", "CONC_LIST=2 4", "PREFILL_NUM_WORKERS=2", "PREFILL_TP=4",
			"DECODE_NUM_WORKERS=1", "DECODE_TP=4"}})
		appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n")
		r.editProfile("[paths]\n", "[paths]\nworkspace = \""+ws+"\"\n")
		r.start()
		if code := r.wait(5 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		m, err := power.ReadManifest(filepath.Join(r.stage, "LOGS", "power", power.ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		if m.PublicationValid == nil || !*m.PublicationValid {
			t.Fatalf("manifest: valid %v reasons %v\n%s", m.PublicationValid, m.Reasons, r.output())
		}
		for _, w := range m.ExpectedWindows {
			if w.BenchmarkType != "custom" {
				t.Errorf("expected window %+v, want benchmark_type custom", w)
			}
		}
		if len(m.ExpectedWindows) != 2 {
			t.Errorf("expected windows %+v, want c2 and c4", m.ExpectedWindows)
		}
		if !regexp.MustCompile(`power c4: [0-9.]+ J per output token`).MatchString(r.output()) {
			t.Errorf("summary lacks the custom point's energy:\n%s", r.output())
		}
		r.removeOnPass()
	})
}
