package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// upInfo is what `slurmbench up --json` prints.
type upInfo struct {
	JobID    string `json:"job_id"`
	RunDir   string `json:"run_dir"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
}

// slurmbench runs the binary to its end (for the short commands: bench
// --url, down).
func (c *cluster) slurmbench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(c.Binary, args...)
	cmd.Env = c.baseEnv("")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestHeldDeployment is issue #14's held deployment end to end on the test
// cluster: up holds a 4-node allocation serving a 2P1D recipe; bench --url
// measures its endpoint; two recipes run in it through run --in — the same
// servers as they are, then a 1P1D recipe that replaces them — each with
// its own staged results, and no second job; a recipe larger than the
// allocation is refused naming the numbers; down leaves nothing queued or
// running. up on a recipe that cannot fit its --nodes submits nothing.
// Over slurmrestd and over Slurm's commands.
func TestHeldDeployment(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testHeldDeployment(t, setup(t).over(t, transport))
		})
	}
}

func testHeldDeployment(t *testing.T, c *cluster) {
	name := uniqueName("e2e-held")
	recipe := mockRecipe{Name: name, OSL: 32, Conc: "4"}.String()

	// A recipe that needs 3 nodes does not fit 2: exit 2, nothing submitted.
	small := c.prepare(t, runOpts{command: "up", name: name, recipe: recipe, args: []string{"--nodes", "2"}}).start()
	if code := small.wait(time.Minute); code != 2 {
		t.Fatalf("up --nodes 2 on a 3-node recipe: exit %d, want 2\n%s", code, small.output())
	}
	for _, want := range []string{"needs 3 nodes × 4 GPUs", "the allocation has 2 nodes × 4 GPUs", "short by 1 more node(s)"} {
		if !strings.Contains(small.stderr.String(), want) {
			t.Errorf("up --nodes 2: the error does not say %q\n%s", want, small.output())
		}
	}
	if jobs := small.jobs(); len(jobs) != 0 {
		t.Fatalf("up --nodes 2 submitted %d jobs", len(jobs))
	}

	up := c.prepare(t, runOpts{command: "up", name: name, recipe: recipe, args: []string{"--nodes", "4", "--json"}}).start()
	if code := up.wait(4 * time.Minute); code != 0 {
		t.Fatalf("up: exit %d\n%s", code, up.output())
	}
	var info upInfo
	if err := json.Unmarshal([]byte(up.stdout.String()), &info); err != nil || info.Endpoint == "" || info.JobID == "" {
		t.Fatalf("up --json printed %q (%v)", up.stdout.String(), err)
	}
	id, err := slurm.ParseJobID(info.JobID)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			up.cancelLeftovers()
		}
	}()
	jobs := up.jobs()
	if len(jobs) != 1 || jobs[0].ID != id || jobs[0].Terminal() || jobs[0].NodeCount != 4 {
		t.Fatalf("after up: jobs %+v; want job %s running on 4 nodes", jobs, info.JobID)
	}

	// The endpoint serves: bench --url measures it.
	benchOut := t.TempDir()
	if _, errOut, code := c.slurmbench(t, "bench", "--url", info.Endpoint, "--model", info.Model, "--isl", "64", "--osl", "16",
		"--conc", "2x4", "--out", benchOut); code != 0 {
		t.Fatalf("bench --url %s: exit %d\n%s", info.Endpoint, code, errOut)
	}
	if got := resultJSONs(t, benchOut); len(got) != 2 {
		t.Errorf("bench --url wrote %v, want two results", got)
	}

	// The same recipe runs on the held servers.
	same := c.prepare(t, runOpts{name: name, recipe: recipe, args: []string{"--in", info.JobID}}).start()
	if code := same.wait(3 * time.Minute); code != 0 {
		t.Fatalf("run --in with the held recipe: exit %d\n%s", code, same.output())
	}
	if !strings.Contains(same.stderr.String(), "on the held") {
		t.Errorf("run --in with the held recipe did not run on the held servers\n%s", same.output())
	}
	// Another topology (1P1D, 2 nodes) replaces them inside the allocation.
	otherName := uniqueName("e2e-held-1p1d")
	other := c.prepare(t, runOpts{name: otherName, recipe: mockRecipe{Name: otherName, PrefillWorkers: 1, OSL: 32, Conc: "4x8"}.String(),
		args: []string{"--in", info.JobID}}).start()
	if code := other.wait(3 * time.Minute); code != 0 {
		t.Fatalf("run --in with a 1P1D recipe: exit %d\n%s", code, other.output())
	}
	if got := stagedResults(t, same.stage); len(got) != 1 {
		t.Errorf("the first run --in staged %v, want one result", got)
	}
	if got := stagedResults(t, other.stage); len(got) != 2 {
		t.Errorf("the second run --in staged %v, want two results", got)
	}
	// Both manifests say what every step ran, the held servers the first
	// one was measured on included.
	for _, r := range []*run{same, other} {
		if missing := runtimeMissing(t, filepath.Join(r.stage, "manifest.json")); len(missing) != 0 {
			t.Errorf("run %s: no fingerprint for %v", r.runDir(), missing)
		}
	}
	for _, r := range []*run{same, other} {
		if o := r.outcome(); o.Result != rundir.Succeeded || o.JobID != info.JobID {
			t.Errorf("run %s: outcome %+v, want succeeded in job %s", r.runDir(), o, info.JobID)
		}
	}
	if jobs := other.jobs(); len(jobs) != 0 {
		t.Errorf("run --in submitted %d jobs named %s", len(jobs), otherName)
	}
	if jobs := up.jobs(); len(jobs) != 1 || jobs[0].Terminal() {
		t.Errorf("after two runs in it: jobs %+v; want the one held job, running", jobs)
	}

	// A recipe that needs 5 nodes does not fit the 4 held.
	bigName := uniqueName("e2e-held-big")
	big := c.prepare(t, runOpts{name: bigName, recipe: mockRecipe{Name: bigName, PrefillWorkers: 4}.String(), args: []string{"--in", info.JobID}}).start()
	if code := big.wait(time.Minute); code != 2 {
		t.Errorf("run --in with a 5-node recipe: exit %d, want 2\n%s", code, big.output())
	}
	if !strings.Contains(big.stderr.String(), "needs 5 nodes × 4 GPUs") || !strings.Contains(big.stderr.String(), "the allocation has 4 nodes × 4 GPUs") {
		t.Errorf("run --in with a 5-node recipe: the error does not name the numbers\n%s", big.output())
	}

	// down ends the job; nothing stays queued or running.
	out, errOut, code := c.slurmbench(t, "down", "-p", up.profile, info.JobID)
	if code != 0 {
		t.Fatalf("down: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "COMPLETED 0:0") {
		t.Errorf("down: %s%s; want the job COMPLETED 0:0", out, errOut)
	}
	// down returns once squeue no longer lists the job (not even
	// COMPLETING), so this is checked at once.
	for _, j := range up.jobs() {
		if !j.Terminal() || j.State.Has(slurm.FlagCompleting) {
			t.Errorf("after down: job %d is %s", j.ID, j.State)
		}
	}
	up.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	for _, r := range []*run{same, other} {
		deadline := time.Now().Add(30 * time.Second)
		for live := processesOf(r.runDir()); len(live) > 0; live = processesOf(r.runDir()) {
			if time.Now().After(deadline) {
				t.Errorf("processes of run %s left: %v", r.runDir(), live)
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	if o, err := rundir.ReadOutcome(rundir.New(info.RunDir).Outcome); err != nil || o.Result != rundir.Succeeded {
		t.Errorf("the held deployment's outcome: %+v, %v", o, err)
	}
	// down again: the job has ended, which is not an error.
	if _, errOut, code := c.slurmbench(t, "down", "-p", up.profile, info.JobID); code != 0 || !strings.Contains(errOut, "already ended") {
		t.Errorf("down of an ended deployment: exit %d\n%s", code, errOut)
	}
	if !t.Failed() {
		_ = os.RemoveAll(info.RunDir)
	}
}

// resultJSONs lists the result files bench --url wrote.
func resultJSONs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRunInsideAnAllocation: a batch script of the user's own — an
// allocation slurmbench did not make — runs two recipes with
// `run --in $SLURM_JOB_ID`: each starts its topology through srun inside
// the allocation and stages its own results, nothing else is submitted,
// and a recipe larger than the allocation is refused naming the numbers.
// Inside the job slurmrestd is not reachable (the node's network has no
// route to it), so this also shows the mode needs none.
func TestRunInsideAnAllocation(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-inside")
	// Everything the job reads or writes is on the shared filesystem.
	dir := filepath.Join(c.Root, "inside", name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o777)
	prof := c.Profile(t, dir, "")
	recipes := map[string]string{
		"a.yaml":   mockRecipe{Name: name + "-2p1d", OSL: 32}.String(),
		"b.yaml":   mockRecipe{Name: name + "-1p1d", PrefillWorkers: 1, OSL: 32, Conc: "4x8"}.String(),
		"big.yaml": mockRecipe{Name: name + "-big", PrefillWorkers: 4}.String(),
	}
	for f, text := range recipes {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The image is imported beforehand, as a login node would have done.
	if _, errOut, code := c.slurmbench(t, "images", "import", "-p", prof, "slurmbench/mock-engine:e2e"); code != 0 {
		t.Fatalf("images import: exit %d\n%s", code, errOut)
	}
	run := func(recipe, stage string) string {
		return fmt.Sprintf("%q run --in \"$SLURM_JOB_ID\" -p %q -r %q --stage-dir %q --no-driver-log; echo \"exit $?\"\n",
			c.Binary, prof, filepath.Join(dir, recipe), filepath.Join(dir, stage))
	}
	script := "#!/bin/sh\n" + run("a.yaml", "stage-a") + run("b.yaml", "stage-b") + run("big.yaml", "stage-big")
	out := filepath.Join(dir, "job.out")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sub, err := c.api.Submit(ctx, slurm.JobSpec{Name: name, Script: script, Nodes: "3", TasksPerNode: 1, GPUsPerNode: 4,
		Partition: c.Cluster.Partition, TimeLimit: 10 * time.Minute, Environment: clustertest.JobEnv(),
		WorkDir: dir, StdOut: out, StdErr: out})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.api.CancelJob(context.Background(), sub.JobID) }()
	job, err := c.api.Wait(ctx, sub.JobID, slurm.WaitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(out)
	t.Logf("the allocation's script:\n%s", log)
	if !job.Success() {
		t.Fatalf("the allocation's script ended %s\n%s", job.Outcome(), log)
	}
	exits := regexp.MustCompile(`(?m)^exit (\d+)$`).FindAllStringSubmatch(string(log), -1)
	if len(exits) != 3 || exits[0][1] != "0" || exits[1][1] != "0" || exits[2][1] != "2" {
		t.Fatalf("exit codes %v, want 0, 0 and 2\n%s", exits, log)
	}
	for _, want := range []string{"inside allocation " + sub.JobID.String(), "needs 5 nodes × 4 GPUs", "the allocation has 3 nodes × 4 GPUs"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("the script's output does not say %q\n%s", want, log)
		}
	}
	for stage, n := range map[string]int{"stage-a": 1, "stage-b": 2} {
		if got := stagedResults(t, filepath.Join(dir, stage)); len(got) != n {
			t.Errorf("%s: staged %v, want %d results", stage, got, n)
		}
	}
	for _, n := range []string{name + "-2p1d", name + "-1p1d", name + "-big"} {
		if jobs := c.jobsNamed(t, n); len(jobs) != 0 {
			t.Errorf("%d jobs named %s were submitted", len(jobs), n)
		}
	}
	if !t.Failed() {
		_ = os.RemoveAll(dir)
	}
}
