package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// slurmBin is the test cluster's Slurm commands for the host
// (testcluster/up.sh's wrappers, SLURMBENCH_CLUSTER_SLURM_BIN).
func slurmBin(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("SLURMBENCH_CLUSTER_SLURM_BIN")
	if dir == "" {
		t.Skip("SLURMBENCH_CLUSTER_SLURM_BIN is not set: the test cluster's env file predates the cli transport")
	}
	return dir
}

// cliProfile is the [slurm] lines that make a run use Slurm's commands
// from dir: the profile keeps its rest_url, which the cli transport does
// not use (a URL the run could reach would hide a fallback to REST, so
// it is made unreachable too).
func cliProfile(dir string) []string {
	return []string{`transport = "cli"`, `bin_dir = "` + dir + `"`}
}

// TestTransports: the same run end to end over slurmrestd and over
// Slurm's own commands: one job, COMPLETED, the transport named.
func TestTransports(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, tc := range []struct {
		transport string
		slurm     []string
		restURL   string
	}{
		{transport: "rest"},
		{transport: "cli", slurm: cliProfile(slurmBin(t)), restURL: "http://127.0.0.1:9"},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("e2e-transport-" + tc.transport)
			r := c.prepare(t, runOpts{name: name, slurm: tc.slurm, restURL: tc.restURL, recipe: mockRecipe{Name: name}.String()}).start()
			if code := r.wait(5 * time.Minute); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.output())
			}
			jobs := r.jobs()
			if len(jobs) != 1 || jobs[0].ID != r.jobID() || !jobs[0].Success() {
				t.Errorf("jobs named %s: %+v, want the run's one job, COMPLETED 0:0", name, jobs)
			}
		})
	}
}

// TestCLISubmitFault: an sbatch that exits non-zero after Slurm queued
// the job (the answer lost to a socket timeout) is resolved by looking
// the submit key up: the run goes on with that job, and sbatch ran once.
func TestCLISubmitFault(t *testing.T) {
	t.Parallel()
	c := setup(t)
	real := slurmBin(t)
	dir := t.TempDir()
	calls := filepath.Join(dir, "sbatch-calls")
	for _, cmd := range []string{"squeue", "scontrol", "sacct", "scancel"} {
		if err := os.Symlink(filepath.Join(real, cmd), filepath.Join(dir, cmd)); err != nil {
			t.Fatal(err)
		}
	}
	fake := "#!/bin/sh\necho sbatch >> '" + calls + "'\n'" + filepath.Join(real, "sbatch") + "' \"$@\" >/dev/null || exit\n" +
		"echo 'sbatch: error: Batch job submission failed: Socket timed out on send/recv operation' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(dir, "sbatch"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	name := uniqueName("e2e-cli-submit")
	r := c.prepare(t, runOpts{name: name, slurm: cliProfile(dir), restURL: "http://127.0.0.1:9", recipe: mockRecipe{Name: name}.String()}).start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	if n := countLines(calls); n != 1 {
		t.Errorf("sbatch ran %d times, want 1 (the job looked up by its key, never sent again)", n)
	}
	jobs := r.jobs()
	if len(jobs) != 1 || jobs[0].ID != r.jobID() || !jobs[0].Success() {
		t.Errorf("jobs named %s: %+v, want exactly the run's one job, COMPLETED 0:0", name, jobs)
	}
}
