package runner

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// killedRunIn leaves what a run --in runner killed with -9 after queueing
// leaves: the run's directory, its status naming the held job, and its
// request in the held deployment's queue.
func killedRunIn(t *testing.T, e *env, h Held, id string) Options {
	return killedRunInAt(t, e, h, id, true)
}

// killedRunInAt: with queued false, the runner died after writing the
// run's status but before its request reached the queue.
func killedRunInAt(t *testing.T, e *env, h Held, id string, queued bool) Options {
	t.Helper()
	pl := testPlan(t, e.runs, id)
	o := e.options(t, pl)
	if err := rundir.Create(pl.RunDir); err != nil {
		t.Fatal(err)
	}
	if err := submit.Prepare(pl, o.Binary); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteStatus(pl.Layout.Status, rundir.Status{Phase: rundir.PhaseQueued, JobID: h.Job.ID.String(), Updated: time.Now().UTC()}); err != nil {
		t.Fatal(err)
	}
	if !queued {
		return o
	}
	if _, err := rundir.QueueRequest(h.Plan.RunDir, rundir.Request{RunID: pl.RunID, Plan: pl.PlanFile}); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestAttachFollowsARunQueuedInAHeldJob: after run --in was killed, attach
// --run-id follows the queued run in the held job to its end and stages
// it. It refused, suggesting run --run-id, which submitted a second job
// into the same run directory while the request was still queued.
func TestAttachFollowsARunQueuedInAHeldJob(t *testing.T) {
	for _, queued := range []bool{true, false} {
		t.Run(fmt.Sprint("queued=", queued), func(t *testing.T) { attachFollowsQueued(t, queued) })
	}
}

// attachFollowsQueued: with queued false the request never reached the
// queue (neither pending nor taken); attach queues it, once.
func attachFollowsQueued(t *testing.T, queued bool) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		h := heldJob(t, e, 1)
		o := killedRunInAt(t, e, h, "r1", queued)
		var wg sync.WaitGroup
		wg.Go(func() {
			fakeHeldDriver(t, e, h, queuedRun{points: testConcs, outcome: rundir.Outcome{Result: rundir.Succeeded}})
		})
		res, err := Attach(testCtx(t), o, 0)
		wg.Wait()
		if err != nil || res.JobID != h.Job.ID {
			t.Fatalf("attach --run-id: %v (job %d)\n%s", err, res.JobID, e.progress)
		}
		if got := e.staged(t); len(got) != 2 {
			t.Errorf("staged %v, want 2 results", got)
		}
		if n := len(e.fake.Jobs()); n != 1 {
			t.Errorf("%d jobs, want the held one alone", n)
		}
	})
}

// TestRunRefusesARunQueuedInAHeldJob: run --run-id of such a run submits
// nothing and says how to follow it.
func TestRunRefusesARunQueuedInAHeldJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		h := heldJob(t, e, 1)
		o := killedRunIn(t, e, h, "r1")
		_, err := Run(testCtx(t), o)
		if exitcode.Of(err) != exitcode.Config || err == nil || !contains(err.Error(), "attach --run-id r1") {
			t.Fatalf("run --run-id: %v; want it refused, pointing at attach --run-id", err)
		}
		if n := len(e.fake.Jobs()); n != 1 {
			t.Errorf("%d jobs: run --run-id submitted beside the queued request", n)
		}
	})
}

// TestAttachRefusesAHeldDeployment: attach to a held deployment's job is
// refused and the deployment keeps running; attach's ^C would have
// cancelled it.
func TestAttachRefusesAHeldDeployment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		h := heldJob(t, e, 1)
		_, err := Attach(testCtx(t), e.options(t, h.Plan), h.Job.ID)
		if exitcode.Of(err) != exitcode.Config || err == nil || !contains(err.Error(), "held deployment") {
			t.Fatalf("attach %d: %v; want it refused as a held deployment", h.Job.ID, err)
		}
		if j, err := e.client.GetJob(testCtx(t), h.Job.ID); err != nil || j.Terminal() {
			t.Errorf("held job after attach: %s %v", j.State, err)
		}
	})
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
