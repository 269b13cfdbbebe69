package e2e

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/power"
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
// cluster and hands what it staged to InferenceX's own multinode power
// aggregator, exactly as process_result.py calls it.
func TestPowerTelemetry(t *testing.T) {
	c := setup(t)
	utils := shareddata.Path(t, "data", "inferencex", "utils")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for InferenceX's aggregator")
	}
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
		for _, res := range results {
			// As published: only the producer's name is refused.
			code, _, side := aggregate(t, utils, "srt-slurm.dcgm-power", r.stage, res, strings.TrimSpace(string(sha)))
			failures, _ := side["failures"].([]any)
			if code == 0 || len(failures) == 0 {
				t.Fatalf("%s: the pinned producer accepted slurmbench's name (exit %d)", res, code)
			}
			for _, f := range failures {
				if s, _ := f.(string); !strings.Contains(s, "producer") && !strings.Contains(s, "publication_valid") {
					t.Errorf("%s: the aggregator found something besides the producer: %s", res, s)
				}
			}
			// With slurmbench accepted as the producer, energy is published
			// and equals wattage × GPUs × window / output tokens.
			code, agg, side := aggregate(t, utils, power.Producer, r.stage, res, strings.TrimSpace(string(sha)))
			if code != 0 || agg["power_valid"] != 1.0 {
				t.Fatalf("%s: exit %d power_valid %v reasons %v failures %v", res, code, agg["power_valid"], side["reasons"], side["failures"])
			}
			var raw struct {
				Start  float64 `json:"benchmark_start_time_unix"`
				End    float64 `json:"benchmark_end_time_unix"`
				Output int     `json:"total_output_tokens"`
			}
			b, err := os.ReadFile(filepath.Join(r.stage, res))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &raw); err != nil {
				t.Fatal(err)
			}
			want := mockWatts * 12 * (raw.End - raw.Start) / float64(raw.Output)
			if got, _ := agg["joules_per_output_token"].(float64); math.Abs(got-want)/want > 0.01 {
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

// aggregate runs InferenceX's aggregate_power_multinode.py from a copy whose
// pinned producer name is producer, on a staged result, from the stage
// directory (LOGS/power, LOGS as the result root), as process_result.py does.
func aggregate(t *testing.T, utils, producer, stage, result, sha string) (int, map[string]any, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"aggregate_power.py", "aggregate_power_multinode.py"} {
		b, err := os.ReadFile(filepath.Join(utils, f))
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), `PRODUCER = "srt-slurm.dcgm-power"`, `PRODUCER = "`+producer+`"`, 1)
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agg, side := filepath.Join(dir, "agg.json"), filepath.Join(dir, "validation.json")
	if err := os.WriteFile(agg, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("python3", filepath.Join(dir, "aggregate_power_multinode.py"),
		"--bench-result", result, "--agg-result", agg, "--validation-result", side,
		"--prefill-gpus", "8", "--decode-gpus", "4", "--expected-producer-sha", sha, "--require-power")
	cmd.Dir = stage
	out, err := cmd.CombinedOutput()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("aggregator on %s (producer %s): exit %d: %s", result, producer, code, out)
	var a, v map[string]any
	for p, dst := range map[string]*map[string]any{agg: &a, side: &v} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return code, a, v
}
