package power

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// inferencexUtils is InferenceX's utils/ beside the repository: the
// workflow's own consumer of the power package.
func inferencexUtils(t *testing.T) string {
	t.Helper()
	dir := shareddata.Path(t, "data", "inferencex", "utils")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to run InferenceX's aggregator")
	}
	return dir
}

// consumer copies the aggregator into a temp dir, with the producer name it
// checks set to producer, and runs it the way process_result.py does.
func runConsumer(t *testing.T, utils, producer, logDir, result string, prefill, decode int) (int, map[string]any, map[string]any) {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"aggregate_power.py", "aggregate_power_multinode.py"} {
		b, err := os.ReadFile(filepath.Join(utils, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if f == "aggregate_power_multinode.py" {
			const orig = `PRODUCER = "srt-slurm.dcgm-power"`
			if !strings.Contains(s, orig) {
				t.Fatalf("%s no longer pins %s", f, orig)
			}
			s = strings.Replace(s, orig, `PRODUCER = "`+producer+`"`, 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agg := filepath.Join(dir, "agg_test.json")
	if err := os.WriteFile(agg, []byte(`{"tput_per_gpu": 1.0}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sidecar := filepath.Join(dir, "power_validation_test.json")
	cmd := exec.Command("python3", filepath.Join(dir, "aggregate_power_multinode.py"),
		"--power-dir", filepath.Join(logDir, "power"), "--logs-root", logDir,
		"--bench-result", result, "--agg-result", agg, "--validation-result", sidecar,
		"--prefill-gpus", itoa(prefill), "--decode-gpus", itoa(decode),
		"--expected-producer-sha", "0123abc", "--require-power")
	out, err := cmd.CombinedOutput()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("aggregator (exit %d): %s", code, out)
	return code, readJSON(t, agg), readJSON(t, sidecar)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInferenceXAggregatorAcceptsThePackage(t *testing.T) {
	utils := inferencexUtils(t)
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

	t.Run("as published, only the producer name is refused", func(t *testing.T) {
		code, agg, side := runConsumer(t, utils, "srt-slurm.dcgm-power", logDir, result, 8, 4)
		if code == 0 || agg["power_valid"] != 0.0 {
			t.Fatalf("exit %d, power_valid %v: the pinned producer should refuse slurmbench's name", code, agg["power_valid"])
		}
		failures, _ := side["failures"].([]any)
		if len(failures) == 0 {
			t.Fatal("no failures listed")
		}
		for _, f := range failures {
			s, _ := f.(string)
			if !strings.Contains(s, "producer") && !strings.Contains(s, "publication_valid") {
				t.Errorf("failure not about the producer: %s", s)
			}
		}
	})
	t.Run("with slurmbench accepted as producer, energy is published", func(t *testing.T) {
		code, agg, side := runConsumer(t, utils, Producer, logDir, result, 8, 4)
		if code != 0 || agg["power_valid"] != 1.0 {
			t.Fatalf("exit %d, power_valid %v, reasons %v, failures %v", code, agg["power_valid"], side["reasons"], side["failures"])
		}
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
}
