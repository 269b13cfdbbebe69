// Package powertest runs InferenceX's own multinode power aggregator
// (utils/aggregate_power_multinode.py, from the reference checkout that
// shareddata locates) on a power package, for tests: the workflow's
// consumer is the judge of what slurmbench stages.
package powertest

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// pinnedProducer is the producer name the aggregator accepts as published.
const pinnedProducer = `PRODUCER = "srt-slurm.dcgm-power"`

// ProducerCheckLine is the line of _check_wire_contract that compares the
// manifest's producer with the pinned one.
const ProducerCheckLine = `        ("producer", PRODUCER),`

// AcceptProducerLine is the one-line change that makes the aggregator
// accept name besides its pinned producer (docs/power.md gives it to
// workflow owners; a test checks the two agree): the expected value is the
// manifest's own producer when it is one of the two, so the comparison
// passes, and the pinned name otherwise, so the failure reads as before.
func AcceptProducerLine(name string) string {
	return `        ("producer", manifest.get("producer") if manifest.get("producer") in {PRODUCER, "` + name + `"} else PRODUCER),`
}

// Run is one aggregator call, as process_result.py makes it.
type Run struct {
	// Producer replaces the pinned producer name in a copy of the script
	// ("" keeps it as published).
	Producer string
	// AcceptProducer applies AcceptProducerLine(AcceptProducer) to a copy
	// of the script: the name is accepted besides the pinned one.
	AcceptProducer string
	// Dir is the working directory; PowerDir and LogsRoot default to the
	// aggregator's own defaults below it (LOGS/power, LOGS).
	Dir, PowerDir, LogsRoot string
	BenchResult             string
	PrefillGPUs, DecodeGPUs int
	ProducerSHA             string
}

// Outcome is what the aggregator said: its exit code (with --require-power,
// non-zero means not published), the patched aggregate and the validation
// sidecar.
type Outcome struct {
	Code      int
	Aggregate map[string]any
	Sidecar   map[string]any
}

// Failures are the sidecar's failure details.
func (o Outcome) Failures() []string {
	var out []string
	list, _ := o.Sidecar["failures"].([]any)
	for _, f := range list {
		s, _ := f.(string)
		out = append(out, s)
	}
	return out
}

// Aggregate runs the aggregator; it skips the test without the reference
// checkout's InferenceX utils (failing under SLURMBENCH_REQUIRE_DATA=1) or python3.
func Aggregate(t testing.TB, r Run) Outcome {
	t.Helper()
	utils := shareddata.Path(t, "data", "inferencex", "utils")
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to run InferenceX's aggregator")
	}
	dir := t.TempDir()
	for _, f := range []string{"aggregate_power.py", "aggregate_power_multinode.py"} {
		b, err := os.ReadFile(filepath.Join(utils, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if f == "aggregate_power_multinode.py" && r.Producer != "" {
			if !strings.Contains(s, pinnedProducer) {
				t.Fatalf("%s no longer pins %s", f, pinnedProducer)
			}
			s = strings.Replace(s, pinnedProducer, `PRODUCER = "`+r.Producer+`"`, 1)
		}
		if f == "aggregate_power_multinode.py" && r.AcceptProducer != "" {
			if strings.Count(s, ProducerCheckLine+"\n") != 1 {
				t.Fatalf("%s no longer has the line %q once", f, ProducerCheckLine)
			}
			s = strings.Replace(s, ProducerCheckLine+"\n", AcceptProducerLine(r.AcceptProducer)+"\n", 1)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	agg, side := filepath.Join(dir, "agg.json"), filepath.Join(dir, "validation.json")
	if err := os.WriteFile(agg, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(dir, "aggregate_power_multinode.py"),
		"--bench-result", r.BenchResult, "--agg-result", agg, "--validation-result", side,
		"--prefill-gpus", strconv.Itoa(r.PrefillGPUs), "--decode-gpus", strconv.Itoa(r.DecodeGPUs),
		"--expected-producer-sha", r.ProducerSHA, "--require-power"}
	if r.PowerDir != "" {
		args = append(args, "--power-dir", r.PowerDir)
	}
	if r.LogsRoot != "" {
		args = append(args, "--logs-root", r.LogsRoot)
	}
	cmd := exec.CommandContext(t.Context(), "python3", args...)
	cmd.Dir = r.Dir
	out, err := cmd.CombinedOutput()
	o := Outcome{}
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		o.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	t.Logf("aggregator on %s (producer %q, also accepting %q): exit %d: %s", r.BenchResult, r.Producer, r.AcceptProducer, o.Code, out)
	for p, dst := range map[string]*map[string]any{agg: &o.Aggregate, side: &o.Sidecar} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// RequireOnlyProducerRefused fails t unless the aggregator refused the
// package and every failure it lists is about the producer's identity (the
// name it pins, and the stored verdict that then disagrees with its own).
func RequireOnlyProducerRefused(t testing.TB, o Outcome) {
	t.Helper()
	if o.Code == 0 || o.Aggregate["power_valid"] != 0.0 || len(o.Failures()) == 0 {
		t.Fatalf("exit %d, power_valid %v, failures %v: the pinned producer should refuse slurmbench's name",
			o.Code, o.Aggregate["power_valid"], o.Failures())
	}
	for _, f := range o.Failures() {
		if !strings.Contains(f, "producer") && !strings.Contains(f, "publication_valid") {
			t.Errorf("the aggregator found something besides the producer: %s", f)
		}
	}
}

// RequirePublished fails t unless the aggregator published the energy.
func RequirePublished(t testing.TB, o Outcome) {
	t.Helper()
	if o.Code != 0 || o.Aggregate["power_valid"] != 1.0 {
		t.Fatalf("exit %d, power_valid %v, reasons %v, failures %v", o.Code, o.Aggregate["power_valid"], o.Sidecar["reasons"], o.Failures())
	}
}
