package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot/enroottest"
)

// TestConcurrentRuns: two runs of the same recipe at once get their own
// run directories and jobs, both succeed, and the image is imported once
// (the second waits on the first's lock, then finds the squash).
func TestConcurrentRuns(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-twice")
	callLog := filepath.Join(t.TempDir(), "enroot-calls.jsonl")
	env := []string{
		"IMAGE=slurmbench/mock-engine:" + uniqueName("twice"),
		"ENROOT_STANDIN_IMPORT_DELAY=3", // both runs are inside the import at once
		"ENROOT_STANDIN_LOG=" + callLog,
	}
	recipe := mockRecipe{Name: name, OSL: 200, ITL: "5ms"}.String()
	a := c.prepare(t, runOpts{name: name, recipe: recipe, env: env}).start()
	b := c.prepare(t, runOpts{name: name, recipe: recipe, env: env}).start()
	codeA, codeB := a.wait(5*time.Minute), b.wait(5*time.Minute)
	if codeA != 0 || codeB != 0 {
		t.Fatalf("exit codes %d and %d, want 0 and 0\n%s\n%s", codeA, codeB, a.output(), b.output())
	}
	if a.runDir() == "" || a.runDir() == b.runDir() {
		t.Errorf("run directories %q and %q, want two", a.runDir(), b.runDir())
	}
	if a.jobID() == 0 || a.jobID() == b.jobID() {
		t.Errorf("jobs %d and %d, want two", a.jobID(), b.jobID())
	}
	jobs := a.jobs()
	if len(jobs) != 2 {
		t.Errorf("%d jobs named %s, want 2", len(jobs), name)
	}
	for _, j := range jobs {
		if !j.Success() {
			t.Errorf("job %d ended %s", j.ID, j.Outcome())
		}
	}
	calls, err := enroottest.ReadCalls(callLog)
	if err != nil {
		t.Fatal(err)
	}
	if n := enroottest.Count(calls, "import"); n != 1 {
		t.Errorf("%d imports, want 1: %+v", n, calls)
	}
	// Each staged its own results.
	for _, r := range []*run{a, b} {
		if got := stagedResults(t, r.stage); len(got) != 1 {
			t.Errorf("%s staged %v, want one result", r.stage, got)
		}
		if _, err := os.Stat(filepath.Join(r.runDir(), "outcome.json")); err != nil {
			t.Errorf("outcome: %v", err)
		}
	}
}
