package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// again is a second `slurmbench run` with the same profile, recipe, stage
// directory and flags as r: a GitHub re-run of the same step.
func (r *run) again() *run {
	r.t.Helper()
	return &run{t: r.t, c: r.c, opts: r.opts, dir: r.dir, profile: r.profile, recipe: r.recipe, stage: r.stage, done: make(chan struct{})}
}

var adoptedLine = regexp.MustCompile(`adopted job (\d+) of run`)

// TestKilledRunnerIsAdopted: `run` is SIGKILLed during the benchmark (a
// GitHub hard cancel, an OOM kill); the job goes on. `run --run-id` again
// with the same inputs adopts that job from the run directory's journal —
// one job in squeue, never a second submit — follows it, and stages its
// results once, exit 0. The job id was in the journal the moment it was
// known. Over slurmrestd and over Slurm's commands.
func TestKilledRunnerIsAdopted(t *testing.T) {
	t.Parallel()
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			testKilledRunnerIsAdopted(t, setup(t).over(t, transport))
		})
	}
}

func testKilledRunnerIsAdopted(t *testing.T, c *cluster) {
	name := uniqueName("e2e-kill")
	runID := name + "-run"
	first := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name, OSL: 3000, ITL: "5ms"}.String(),
		args: []string{"--run-id", runID}}).start()
	first.waitLine(benchLine, 10*time.Minute)
	journal, err := rundir.ReadJournal(rundir.New(first.runDir()).Journal)
	if err != nil || journal.JobID != first.jobID().String() || journal.RunID != runID {
		t.Fatalf("journal during the benchmark: %+v (%v), want job %d of run %s", journal, err, first.jobID(), runID)
	}
	first.signal(syscall.SIGKILL)
	if code := first.wait(time.Minute); code != 128+int(syscall.SIGKILL) {
		t.Fatalf("first run exit %d, want killed", code)
	}
	jobs := first.jobs()
	if len(jobs) != 1 || jobs[0].Terminal() {
		t.Fatalf("after kill -9: jobs %+v, want the one job still running", jobs)
	}

	second := first.again().start()
	code := second.wait(10 * time.Minute)
	if code != 0 {
		t.Fatalf("second run exit %d, want 0\n%s", code, second.output())
	}
	if m := second.stderr.find(adoptedLine); m == nil || m[1] != jobs[0].ID.String() {
		t.Errorf("second run did not adopt job %d:\n%s", jobs[0].ID, second.output())
	}
	if second.stderr.find(submittedLine) != nil {
		t.Errorf("second run submitted a job:\n%s", second.output())
	}
	if all := second.jobs(); len(all) != 1 {
		t.Errorf("%d jobs named %s, want 1", len(all), name)
	}
	staged := stagedResults(t, second.stage)
	if len(staged) != 1 {
		t.Errorf("staged %v, want the one point once", staged)
	}
	ents, _ := os.ReadDir(second.stage)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".slurmbench-tmp-") {
			t.Errorf("leftover temporary file %s in the stage dir", filepath.Join(second.stage, e.Name()))
		}
	}
	second.assertNoLiveJobs(time.Now().Add(30 * time.Second))
}
