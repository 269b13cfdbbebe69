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

// faultyCommands is a bin dir whose commands are the cluster's, except
// those in scripts (name → a shell body run before the real command,
// which it may replace by exiting). Each run of a scripted command is a
// line of dir/NAME-calls ($n is its number); a body notes each fault it
// injects as a line of $faults (dir/NAME-faults).
func faultyCommands(t *testing.T, scripts map[string]string) string {
	t.Helper()
	real := slurmBin(t)
	dir := t.TempDir()
	for _, cmd := range []string{"sbatch", "squeue", "scontrol", "sacct", "scancel"} {
		body, ok := scripts[cmd]
		if !ok {
			if err := os.Symlink(filepath.Join(real, cmd), filepath.Join(dir, cmd)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		calls := filepath.Join(dir, cmd+"-calls")
		sh := "#!/bin/sh\necho x >> '" + calls + "'\nn=$(wc -l < '" + calls + "')\nreal='" + filepath.Join(real, cmd) + "'\nfaults='" + filepath.Join(dir, cmd+"-faults") + "'\n" + body + "\nexec \"$real\" \"$@\"\n"
		if err := os.WriteFile(filepath.Join(dir, cmd), []byte(sh), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestCLIFaults: Slurm's commands failing during a run does not break it,
// and the job is submitted exactly once. At submit, an sbatch that exits
// non-zero after Slurm queued the job (the answer lost to a socket
// timeout) is resolved by looking the submit key up: the run goes on with
// that job, and sbatch ran once; one that failed before Slurm had the job
// is sent again once the job can no longer appear. While following,
// scontrol timing out
// and failing to reach slurmctld on a run of polls is retried.
func TestCLIFaults(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, tc := range []struct {
		name    string
		scripts map[string]string
		check   func(t *testing.T, dir string)
	}{
		{"at submit", map[string]string{"sbatch": `"$real" "$@" >/dev/null || exit
echo 'sbatch: error: Batch job submission failed: Socket timed out on send/recv operation' >&2
exit 1`}, func(t *testing.T, dir string) {
			if n := countLines(filepath.Join(dir, "sbatch-calls")); n != 1 {
				t.Errorf("sbatch ran %d times, want 1 (the job looked up by its key, never sent again)", n)
			}
		}},
		{"not queued: sent again", map[string]string{"sbatch": `if [ "$n" = 1 ]; then
	echo f >> "$faults"
	echo 'sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)' >&2
	exit 1
fi`}, func(t *testing.T, dir string) {
			// Looked up by its key until it could no longer appear, then
			// sent again: two sbatch runs, one job.
			if n := countLines(filepath.Join(dir, "sbatch-calls")); n != 2 {
				t.Errorf("sbatch ran %d times, want 2", n)
			}
		}},
		{"while following", map[string]string{"scontrol": `case "$*" in "show job "*)
	if [ "$n" -ge 4 ] && [ "$n" -le 9 ]; then
		echo f >> "$faults"
		if [ $((n % 2)) = 0 ]; then echo 'slurm_load_jobs error: Socket timed out on send/recv operation' >&2; else echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2; fi
		exit 1
	fi;;
esac`}, func(t *testing.T, dir string) {
			if n := countLines(filepath.Join(dir, "scontrol-faults")); n < 2 {
				t.Errorf("%d scontrol show job calls failed, want at least 2 (the faults did not meet the polls)", n)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := faultyCommands(t, tc.scripts)
			name := uniqueName("e2e-cli-fault")
			r := c.prepare(t, runOpts{name: name, slurm: cliProfile(dir), restURL: unreachableREST, recipe: mockRecipe{Name: name}.String()}).start()
			if code := r.wait(5 * time.Minute); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.output())
			}
			tc.check(t, dir)
			jobs := r.jobs()
			if len(jobs) != 1 || jobs[0].ID != r.jobID() || !jobs[0].Success() {
				t.Errorf("jobs named %s: %+v, want exactly the run's one job, COMPLETED 0:0", name, jobs)
			}
		})
	}
}
