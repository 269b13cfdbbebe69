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

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/power"
	"github.com/slurmbench/slurmbench/power/powertest"
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
	// Skip (or fail under SLURMBENCH_REQUIRE_DATA) before any job runs.
	shareddata.Path(t, "data", "inferencex", "utils")
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
			run := powertest.Run{Dir: r.stage, BenchResult: res, PrefillGPUs: 8, DecodeGPUs: 4, ProducerSHA: strings.TrimSpace(string(sha))}
			// As published: only the producer's name is refused.
			powertest.RequireOnlyProducerRefused(t, powertest.Aggregate(t, run))
			// With slurmbench accepted as the producer, energy is published
			// and equals wattage × GPUs × window / output tokens.
			run.Producer = power.Producer
			o := powertest.Aggregate(t, run)
			powertest.RequirePublished(t, o)
			agg := o.Aggregate
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
