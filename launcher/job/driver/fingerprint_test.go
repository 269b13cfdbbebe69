package driver

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slurmbench/slurmbench/internal/fingerprint"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// A run measured on held servers gets their fingerprints (every task);
// the serving run's benchmark record stays its own, and one with a name
// that merely starts like a server's is not taken.
func TestInheritFingerprints(t *testing.T) {
	procs := []plan.Process{{Name: "prefill_w0", Role: plan.RolePrefill}, {Name: "frontend_0", Role: plan.RoleFrontend}, {Name: "benchmark", Role: plan.RoleBenchmark}}
	from := &plan.Plan{Layout: rundir.New(t.TempDir()), Processes: procs}
	to := &plan.Plan{Layout: rundir.New(t.TempDir()), Processes: procs}
	for _, r := range []fingerprint.Record{
		{Step: "prefill_w0", Task: "0"}, {Step: "prefill_w0", Task: "1"}, {Step: "frontend_0"}, {Step: "benchmark"}, {Step: "prefill_w00"},
	} {
		if _, err := fingerprint.Write(from.Layout.Fingerprints(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := inheritFingerprints(from, to); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(to.Layout.Fingerprints())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	want := []string{"frontend_0.task0.json", "prefill_w0.task0.json", "prefill_w0.task1.json"}
	if !slices.Equal(got, want) {
		t.Errorf("inherited %v, want %v", got, want)
	}
	if _, err := os.Stat(filepath.Join(to.Layout.Fingerprints(), "benchmark.task0.json")); err == nil {
		t.Error("the serving run's benchmark record was copied")
	}
}
