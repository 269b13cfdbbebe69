package power

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results/power/powertest"
)

func TestInferenceXAggregatorAcceptsThePackage(t *testing.T) {
	c := newCluster(t, 350, nil)
	logDir := t.TempDir()
	s, err := NewSession(settings(t, c, logDir, []int{8}))
	if err != nil {
		t.Fatal(err)
	}
	if ready, err := startReady(t, s); !ready || err != nil {
		t.Fatalf("Start: %v %v", ready, err)
	}
	result := benchPoint(t, s, logDir, 8, 600*time.Millisecond, true)
	time.Sleep(150 * time.Millisecond)
	if out, err := s.Stop(false); err != nil || !out.PublicationValid {
		t.Fatalf("Stop: %+v %v", out, err)
	}

	run := powertest.Run{Dir: logDir, PowerDir: filepath.Join(logDir, "power"), LogsRoot: logDir,
		BenchResult: result, PrefillGPUs: 8, DecodeGPUs: 4, ProducerSHA: "0123abc"}
	t.Run("as published, only the producer name is refused", func(t *testing.T) {
		powertest.RequireOnlyProducerRefused(t, powertest.Aggregate(t, run))
	})
	t.Run("with slurmbench accepted as producer, energy is published", func(t *testing.T) {
		run := run
		run.Producer = Producer
		o := powertest.Aggregate(t, run)
		powertest.RequirePublished(t, o)
		agg := o.Aggregate
		m, err := ReadManifest(filepath.Join(logDir, "power", ManifestFile))
		if err != nil {
			t.Fatal(err)
		}
		e, err := WindowEnergy(filepath.Join(logDir, "power"), m, 8, 640*8)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := agg["joules_per_output_token"].(float64)
		if math.Abs(got-e.JoulesPerToken)/e.JoulesPerToken > 1e-3 {
			t.Errorf("aggregator J/output token %v, slurmbench's %v", got, e.JoulesPerToken)
		}
		want := 350 * 12 * e.WindowSeconds / float64(640*8)
		if math.Abs(got-want)/want > 0.01 {
			t.Errorf("J/output token %v, want wattage×GPUs×window/tokens = %v within 1%%", got, want)
		}
		if p, _ := agg["decode_avg_power_w"].(float64); math.Abs(p-350) > 0.5 {
			t.Errorf("decode_avg_power_w = %v, want 350", p)
		}
	})
	t.Run("with slurmbench added to the accepted producers (the documented one-line change), energy is published", func(t *testing.T) {
		run := run
		run.AcceptProducer = Producer
		powertest.RequirePublished(t, powertest.Aggregate(t, run))
	})
	t.Run("the one-line change still refuses any other producer", func(t *testing.T) {
		run := run
		run.AcceptProducer = "someone-else.dcgm-power"
		powertest.RequireOnlyProducerRefused(t, powertest.Aggregate(t, run))
	})
	// Last, as it rewrites the package: srtctl's producer name still
	// passes the patched aggregator.
	t.Run("the one-line change still accepts srtctl's producer", func(t *testing.T) {
		mp := filepath.Join(logDir, "power", ManifestFile)
		b, err := os.ReadFile(mp)
		if err != nil {
			t.Fatal(err)
		}
		from := `"producer": "` + Producer + `"`
		if !strings.Contains(string(b), from) {
			t.Fatalf("manifest lacks %s", from)
		}
		if err := os.WriteFile(mp, []byte(strings.Replace(string(b), from, `"producer": "srt-slurm.dcgm-power"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		run := run
		run.AcceptProducer = Producer
		powertest.RequirePublished(t, powertest.Aggregate(t, run))
	})
}

// docs/power.md gives workflow owners the exact line the test above applies.
func TestPowerDocGivesTheTestedOneLineChange(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "power.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{powertest.ProducerCheckLine, powertest.AcceptProducerLine(Producer)} {
		if !strings.Contains(string(b), "\n"+line+"\n") {
			t.Errorf("docs/power.md lacks the line\n%s", line)
		}
	}
}
