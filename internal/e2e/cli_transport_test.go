package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
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
// from dir. The profile keeps a rest_url, which the cli transport does not
// use: unreachableREST, so that a fallback to REST would fail the test.
func cliProfile(dir string) []string {
	return []string{`transport = "cli"`, `bin_dir = "` + dir + `"`}
}

// unreachableREST is a slurmrestd URL nothing answers (the discard port).
const unreachableREST = "http://127.0.0.1:9"

// transports are the ways a run reaches Slurm; the tests of the runner,
// matrix, held deployments, attach, cleanup and the submit faults run over
// each (cluster.over).
var transports = []string{"rest", "cli"}

// over is c with its runs' profiles (and the operator commands' PATH)
// reaching Slurm over transport.
func (c *cluster) over(t *testing.T, transport string) *cluster {
	t.Helper()
	if transport == "rest" {
		return c
	}
	cc := *c
	cc.cliBin = slurmBin(t)
	return &cc
}

// profile is the cluster's profile in dir, over c's transport.
func (c *cluster) profile(t testing.TB, dir string) string {
	t.Helper()
	env := *c.Env
	if c.cliBin == "" {
		return env.Profile(t, dir, "")
	}
	env.Cluster.RestURL = unreachableREST
	p := env.Profile(t, dir, "")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(b), "[slurm]\n", "[slurm]\n"+strings.Join(cliProfile(c.cliBin), "\n")+"\n", 1)
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cleanupArgs is `cleanup` with args, naming slurmrestd over REST;
// over the commands it names nothing (sbatch is on its PATH: baseEnv).
func (c *cluster) cleanupArgs(args ...string) []string {
	if c.cliBin != "" {
		return append([]string{"cleanup"}, args...)
	}
	return append([]string{"cleanup", "--rest-url", c.Cluster.RestURL}, args...)
}

// TestTransports: the same run over slurmrestd and over Slurm's own
// commands, its runner killed during the benchmark and `attach JOBID`
// following the job to its end: one job, COMPLETED, results staged, and
// doctor naming the transport.
func TestTransports(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			c := setup(t).over(t, transport)
			name := uniqueName("e2e-transport-" + transport)
			r := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name, OSL: 3000, ITL: "5ms"}.String()}).start()
			r.waitLine(benchLine, 5*time.Minute)
			r.signal(syscall.SIGKILL)
			if code := r.wait(time.Minute); code != 128+int(syscall.SIGKILL) {
				t.Fatalf("run exit %d, want killed", code)
			}
			stage := filepath.Join(t.TempDir(), "attached")
			_, errOut, code := c.slurmbench(t, "attach", "-p", r.profile, r.jobID().String(), "--stage-dir", stage)
			if code != 0 {
				t.Fatalf("attach %d: exit %d\n%s", r.jobID(), code, errOut)
			}
			if got := stagedResults(t, stage); len(got) != 1 {
				t.Errorf("attach staged %v, want one result", got)
			}
			jobs := r.jobs()
			if len(jobs) != 1 || jobs[0].ID != r.jobID() || !jobs[0].Success() {
				t.Errorf("jobs named %s: %+v, want the run's one job, COMPLETED 0:0", name, jobs)
			}
			out, _, _ := c.slurmbench(t, "doctor", "-p", r.profile)
			if !regexp.MustCompile(`(?m)^\S*\s*transport\s.*\b` + transport + ` \(`).MatchString(out) {
				t.Errorf("doctor does not name the %s transport:\n%s", transport, out)
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
	r := c.prepare(t, runOpts{name: name, slurm: cliProfile(dir), restURL: unreachableREST, recipe: mockRecipe{Name: name}.String()}).start()
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
