package driver

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
)

// TestCommandOutsideAnAllocation: without SLURM_JOB_ID and
// SLURM_JOB_NODELIST the driver refuses (exit 2) before reading the plan.
func TestCommandOutsideAnAllocation(t *testing.T) {
	for _, env := range []map[string]string{{}, {"SLURM_JOB_ID": "42"}, {"SLURM_JOB_NODELIST": "n[1-2]"}} {
		err := Command(context.Background(), Options{PlanFile: filepath.Join(t.TempDir(), "nope.json"), Getenv: func(k string) string { return env[k] }})
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), "SLURM_JOB_ID and SLURM_JOB_NODELIST are not set") {
			t.Errorf("%v: %v (exit %d), want exit 2", env, err, exitcode.Of(err))
		}
	}
	env := map[string]string{"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n1"}
	err := Command(context.Background(), Options{PlanFile: filepath.Join(t.TempDir(), "nope.json"), Getenv: func(k string) string { return env[k] }})
	if exitcode.Of(err) != exitcode.Internal || !strings.Contains(err.Error(), "driver: ") {
		t.Errorf("a plan that does not read: %v (exit %d), want the driver's own failure", err, exitcode.Of(err))
	}
}

// TestExecCommandCodes: a bad argument count is 2, an unreadable spec the
// internal layer, a failed setup step its own exit code, and a program
// that cannot run 127, as a shell reports it.
func TestExecCommandCodes(t *testing.T) {
	dir := t.TempDir()
	spec := func(name string, s Spec) string {
		p := filepath.Join(dir, name+".json")
		if err := WriteSpec(p, s); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		args []string
		want exitcode.Code
	}{
		{"no spec", nil, exitcode.Config},
		{"two specs", []string{"a", "b"}, exitcode.Config},
		{"unreadable spec", []string{filepath.Join(dir, "nope.json")}, exitcode.Internal},
		{"setup fails", []string{spec("setup", Spec{Name: "s", Argv: []string{"true"}, Setup: [][]string{{"sh", "-c", "exit 5"}}})}, 5},
		{"no such program", []string{spec("prog", Spec{Name: "p", Argv: []string{filepath.Join(dir, "no-such-program")}})}, 127},
	} {
		if err := ExecCommand(tt.args); exitcode.Of(err) != tt.want {
			t.Errorf("%s: %v (exit %d), want %d", tt.name, err, exitcode.Of(err), tt.want)
		}
	}
}

// TestSetupFailureIsDiagnosed: the line a failed setup step leaves in the
// step's log (the exec shim's error, as the command reports it) is what
// the diagnosis reads as setup_failed, naming the step and its script.
func TestSetupFailureIsDiagnosed(t *testing.T) {
	p := filepath.Join(t.TempDir(), "setup.json")
	if err := WriteSpec(p, Spec{Name: "s", Argv: []string{"true"}, Setup: [][]string{{"sh", "-c", "exit 4"}}}); err != nil {
		t.Fatal(err)
	}
	err := ExecCommand([]string{p})
	var log strings.Builder
	exitcode.Report(&log, err)
	lines := append([]string{"pip: no matching distribution"}, strings.Split(strings.TrimSpace(log.String()), "\n")...)
	d := diagnose.Classify(engineLines(lines))
	if d.Class != diagnose.SetupFailed || !strings.Contains(d.FirstError, "setup step 1 (sh -c \"exit 4\")") {
		t.Errorf("%q classified %+v, want setup_failed naming the step", lines, d)
	}
}
