package runner

import (
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestQueueWaitReported (issue #25 row 9): a job that stays pending is
// reported every QueueReport with its reason and how long it has waited,
// not only once when it was queued.
func TestQueueWaitReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, slurmtest.WithLifecycle(
			slurmtest.Step{State: []string{"PENDING"}, Polls: 1000, Reason: "Resources"}))
		pl := testPlan(t, e.runs, "q1")
		o := e.options(t, pl)
		var wg sync.WaitGroup
		wg.Go(func() {
			time.Sleep(75 * time.Second) // the queue wait, in synctest's time
			fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}})
		})
		_, err := Run(testCtx(t), o)
		wg.Wait()
		if exitcode.Of(err) != exitcode.OK {
			t.Fatalf("run: %v\n%s", err, e.progress)
		}
		out := e.progress.String()
		if n := strings.Count(out, "still pending (Resources), "); n < 2 {
			t.Errorf("%d queue-wait reports, want at least 2:\n%s", n, out)
		}
		if !strings.Contains(out, "s in the queue") {
			t.Errorf("no wait time in the reports:\n%s", out)
		}
	})
}
