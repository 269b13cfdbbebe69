package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// heldJob submits a held deployment's job (plan.Serve, nodes nodes) to the
// fake and finds it as run --in does.
func heldJob(t *testing.T, e *env, nodes int) Held {
	t.Helper()
	pl := testPlan(t, e.runs, "held")
	pl.Serve, pl.Slurm.Nodes = true, nodes
	if err := rundir.Create(pl.RunDir); err != nil {
		t.Fatal(err)
	}
	if err := submit.Prepare(pl, e.options(t, pl).Binary); err != nil {
		t.Fatal(err)
	}
	spec, err := submit.JobSpec(pl, nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := e.client.Submit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	h, err := FindHeld(context.Background(), e.client, sub.JobID)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// queuedRun is what the held driver does with the one run queued on it.
type queuedRun struct {
	points  []int
	outcome rundir.Outcome
	// endJob ends the held job (as COMPLETED) instead of writing an outcome.
	endJob bool
	// waitCancel waits for the run's cancel request, then writes outcome.
	waitCancel bool
	// vanish makes slurmctld forget the held job (no accounting) instead;
	// fail500 makes every job lookup answer 500 from then on.
	vanish, fail500 bool
}

// fakeHeldDriver plays the held deployment's driver for one queued run:
// it takes the request, writes the run's status, results and outcome.
func fakeHeldDriver(t *testing.T, e *env, h Held, q queuedRun) {
	var path string
	for start := time.Now(); path == ""; time.Sleep(time.Second) {
		if time.Since(start) > time.Hour {
			t.Error("fake held driver: nothing was queued")
			return
		}
		queue, _ := rundir.PendingRequests(h.Plan.RunDir)
		if len(queue) > 0 {
			path = queue[0]
		}
	}
	req, err := rundir.TakeRequest(path)
	if err != nil {
		t.Error(err)
		return
	}
	pl, err := plan.ReadPlan(req.Plan)
	if err != nil {
		t.Error(err)
		return
	}
	write := func(p string, v any) {
		b, _ := json.Marshal(v)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Error(err)
		}
	}
	write(pl.Layout.Status, rundir.Status{Phase: rundir.PhaseBenchmark, JobID: h.Job.ID.String()})
	time.Sleep(5 * time.Second)
	if q.endJob {
		e.fake.SetSteps(int64(h.Job.ID), slurmtest.Step{State: []string{"COMPLETED"}})
		return
	}
	if q.vanish {
		e.fake.Forget(int64(h.Job.ID))
		return
	}
	if q.fail500 {
		e.fake.AddFaults(slurmtest.Fault{Method: "GET", Path: "/job/", Action: slurmtest.Respond, Status: 500})
		return
	}
	if q.waitCancel {
		for !rundir.CancelRequested(pl.RunDir) {
			time.Sleep(time.Second)
		}
	}
	for _, c := range q.points {
		write(filepath.Join(pl.Benchmark.ResultDir, rawName(t, c)), saBench(c))
	}
	q.outcome.JobID = h.Job.ID.String()
	write(pl.Layout.Outcome, q.outcome)
}

// TestRunInLayers: each way a run queued on a held deployment ends, with
// its exit code and staged results; no run submits a job of its own.
func TestRunInLayers(t *testing.T) {
	succeeded := rundir.Outcome{Result: rundir.Succeeded}
	tests := []struct {
		name      string
		nodes     int // the held allocation's (default 1)
		q         queuedRun
		interrupt bool
		code      exitcode.Code
		staged    int
		says      string
	}{
		{name: "success", q: queuedRun{points: testConcs, outcome: succeeded}, code: exitcode.OK, staged: 2},
		{name: "benchmark point missing", q: queuedRun{points: []int{2}, outcome: succeeded}, code: exitcode.Benchmark, staged: 1},
		{name: "server died", q: queuedRun{outcome: *failed(diagnose.DiedAfterHealthy)}, code: exitcode.Engine},
		{name: "refused by the deployment", q: queuedRun{outcome: rundir.Outcome{Result: rundir.Failed, Phase: rundir.PhaseQueued, Message: "refused"}}, code: exitcode.Config},
		{name: "deployment taken down", q: queuedRun{outcome: rundir.Outcome{Result: rundir.Cancelled, Class: diagnose.Cancelled, Phase: rundir.PhaseQueued,
			Message: "the held deployment was taken down (slurmbench down) before this run started"}}, code: exitcode.Queue, says: "taken down"},
		{name: "held job ended", q: queuedRun{endJob: true}, code: exitcode.Queue, says: "ended COMPLETED 0:0 before run r1 finished"},
		// The held job gone without an outcome, or slurmrestd failing
		// throughout: run --in gives its run up after heldLostAfter (it
		// waited until its context ended: 6 h here).
		{name: "held job vanished", q: queuedRun{vanish: true}, code: exitcode.Queue, says: "could not be seen for 10m0s"},
		{name: "slurmrestd answers 500 forever", q: queuedRun{fail500: true}, code: exitcode.Queue, says: "could not be seen for 10m0s"},
		{name: "interrupted", q: queuedRun{waitCancel: true, outcome: rundir.Outcome{Result: rundir.Cancelled, Class: diagnose.Cancelled}},
			interrupt: true, code: exitcode.Interrupted, says: "stopping run r1 in held job"},
		{name: "does not fit", nodes: -1, code: exitcode.Config},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				nodes := 1
				if tc.nodes != 0 {
					nodes = tc.nodes
				}
				pl := testPlan(t, e.runs, "r1")
				if nodes < 0 { // the run needs 2 nodes, the allocation has 1
					nodes, pl.Nodes = 1, 2
				}
				h := heldJob(t, e, nodes)
				ctx, cancel := context.WithCancel(testCtx(t))
				defer cancel()
				var wg sync.WaitGroup
				if tc.code != exitcode.Config || tc.q.outcome.Phase == rundir.PhaseQueued {
					wg.Go(func() { fakeHeldDriver(t, e, h, tc.q) })
				}
				if tc.interrupt {
					time.AfterFunc(3*time.Second, cancel)
				}
				res, err := RunIn(ctx, e.options(t, pl), h)
				wg.Wait()
				if got := exitcode.Of(err); got != tc.code {
					t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, e.progress)
				}
				if res.JobID != h.Job.ID {
					t.Errorf("result names job %d, want the held job %d", res.JobID, h.Job.ID)
				}
				if n := len(e.fake.Jobs()); n != 1 {
					t.Errorf("%d jobs in slurmctld, want the held one alone", n)
				}
				if got := e.staged(t); len(got) != tc.staged {
					t.Errorf("staged %v, want %d results", got, tc.staged)
				}
				if tc.says != "" && !strings.Contains(e.progress.String()+fmt.Sprint(err), tc.says) {
					t.Errorf("neither progress nor the error (%v) says %q:\n%s", err, tc.says, e.progress)
				}
				if tc.nodes < 0 {
					if q, _ := rundir.PendingRequests(h.Plan.RunDir); len(q) != 0 {
						t.Errorf("a run that does not fit was queued: %v", q)
					}
				}
			})
		})
	}
}

// TestDown: a running deployment stops by itself on the request (no
// cancel); a pending one is cancelled at once; one that does not stop
// within Wait is cancelled; a job that is not a held deployment is refused.
func TestDown(t *testing.T) {
	tests := []struct {
		name      string
		lifecycle slurmtest.Step
		stops     bool // the fake driver ends the job on the request
		state     slurm.BaseState
		says      string
	}{
		{"stops on request", slurmtest.Step{State: []string{"RUNNING"}}, true, slurm.StateCompleted, "asked held deployment held (job 100) to stop"},
		{"pending", slurmtest.Step{State: []string{"PENDING"}}, false, slurm.StateCancelled, "ended CANCELLED"},
		{"does not stop", slurmtest.Step{State: []string{"RUNNING"}}, false, slurm.StateCancelled, "has not ended within 1m0s: cancelling it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, slurmtest.WithLifecycle(tc.lifecycle))
				h := heldJob(t, e, 1)
				var wg sync.WaitGroup
				if tc.stops {
					wg.Go(func() {
						for !rundir.DownRequested(h.Plan.RunDir) {
							time.Sleep(time.Second)
						}
						time.Sleep(3 * time.Second)
						// Slurm reports the end before its processes are gone.
						e.fake.SetSteps(int64(h.Job.ID), slurmtest.Step{State: []string{"COMPLETED", "COMPLETING"}, Polls: 4},
							slurmtest.Step{State: []string{"COMPLETED"}})
					})
				}
				job, err := Down(testCtx(t), h, DownOptions{Client: e.client, Progress: e.progress})
				wg.Wait()
				if err != nil {
					t.Fatalf("Down: %v\n%s", err, e.progress)
				}
				if job.State.Has(slurm.FlagCompleting) {
					t.Errorf("Down returned while job was %s: squeue still lists it", job.State)
				}
				if job.State.Base != tc.state || !strings.Contains(e.progress.String(), tc.says) {
					t.Errorf("Down ended %s, want %s; progress:\n%s(want %q)", job.State, tc.state, e.progress, tc.says)
				}
			})
		})
	}
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "plain")
		if err := rundir.Create(pl.RunDir); err != nil {
			t.Fatal(err)
		}
		if err := submit.Prepare(pl, e.options(t, pl).Binary); err != nil {
			t.Fatal(err)
		}
		spec, _ := submit.JobSpec(pl, nil)
		sub, err := e.client.Submit(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		_, err = FindHeld(context.Background(), e.client, sub.JobID)
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), "is run plain, not a held deployment") {
			t.Errorf("FindHeld of a plain run's job: %v", err)
		}
	})
}

// TestReportQueue: a queued run says what it waits for — the job to start,
// the runs ahead of it and the one running — once per change.
func TestReportQueue(t *testing.T) {
	runs := t.TempDir()
	h := Held{Job: slurm.Job{ID: 100}, Plan: testPlan(t, runs, "held")}
	var progress strings.Builder
	r := &runState{o: Options{Progress: &progress}, plan: testPlan(t, runs, "mine")}
	last := ""
	r.reportQueue(h, &last)
	if err := os.MkdirAll(h.Plan.RunDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteStatus(h.Plan.Layout.Status, rundir.Status{Phase: rundir.PhaseServing, Serving: &rundir.Serving{Running: "first"}}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i, id := range []string{"second", "mine"} {
		if _, err := rundir.QueueRequest(h.Plan.RunDir, rundir.Request{RunID: id, Plan: "/runs/" + id + "/plan.json", Queued: t0.Add(time.Duration(i))}); err != nil {
			t.Fatal(err)
		}
	}
	r.reportQueue(h, &last)
	r.reportQueue(h, &last) // unchanged: said once
	want := []string{"waiting for held job 100 to start", "waiting in held job 100: 1 queued ahead, running first"}
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	if len(lines) != len(want) {
		t.Fatalf("progress:\n%s\nwant %d lines", progress.String(), len(want))
	}
	for i, w := range want {
		if !strings.HasSuffix(lines[i], w) {
			t.Errorf("line %d: %q, want it to end %q", i, lines[i], w)
		}
	}
}

// TestRunInAllocation: a run driven in this process inside an allocation
// is judged on the outcome its driver wrote, collected and staged as a run;
// an interrupt is the runner's layer; a driver that leaves no outcome is a
// bug (1); a recipe larger than the allocation is refused before anything
// is claimed.
func TestRunInAllocation(t *testing.T) {
	tests := []struct {
		name   string
		nodes  int
		drive  func(ctx context.Context, pl *plan.Plan) error
		cancel bool
		code   exitcode.Code
		staged int
	}{
		{name: "success", nodes: 1, code: exitcode.OK, staged: 2, drive: func(_ context.Context, pl *plan.Plan) error {
			return writeRun(pl, testConcs, rundir.Outcome{Result: rundir.Succeeded})
		}},
		{name: "engine died", nodes: 1, code: exitcode.Engine, drive: func(_ context.Context, pl *plan.Plan) error {
			return writeRun(pl, nil, *failed(diagnose.DiedAfterHealthy))
		}},
		{name: "interrupted", nodes: 1, cancel: true, code: exitcode.Interrupted, drive: func(ctx context.Context, pl *plan.Plan) error {
			<-ctx.Done()
			return writeRun(pl, nil, rundir.Outcome{Result: rundir.Cancelled, Class: diagnose.Cancelled})
		}},
		{name: "no outcome", nodes: 1, code: exitcode.Internal, drive: func(context.Context, *plan.Plan) error { return nil }},
		{name: "does not fit", nodes: 0, code: exitcode.Config},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				pl := testPlan(t, e.runs, "r1")
				ctx, cancel := context.WithCancel(testCtx(t))
				defer cancel()
				if tc.cancel {
					time.AfterFunc(3*time.Second, cancel)
				}
				drove := false
				drive := func(ctx context.Context, p *plan.Plan, log io.Writer) error {
					drove = true
					fmt.Fprintln(log, "driver line")
					return tc.drive(ctx, p)
				}
				a := Allocation{JobID: 77, NodeList: "n1", Nodes: tc.nodes, GPUsPerNode: 4}
				res, err := RunInAllocation(ctx, e.options(t, pl), a, drive)
				if got := exitcode.Of(err); got != tc.code {
					t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, e.progress)
				}
				if drove != (tc.code != exitcode.Config) || res.JobID != 77 || len(e.fake.Jobs()) != 0 {
					t.Errorf("drove %v, job %d, %d jobs submitted", drove, res.JobID, len(e.fake.Jobs()))
				}
				if got := e.staged(t); len(got) != tc.staged {
					t.Errorf("staged %v, want %d results", got, tc.staged)
				}
			})
		})
	}
}

// writeRun writes what a driver leaves: results and the outcome.
func writeRun(pl *plan.Plan, concs []int, o rundir.Outcome) error {
	for _, c := range concs {
		name, _ := results.RawName(results.PointID{Concurrency: c, GPUs: 4})
		b, _ := json.Marshal(saBench(c))
		if err := os.MkdirAll(pl.Benchmark.ResultDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pl.Benchmark.ResultDir, name), b, 0o644); err != nil {
			return err
		}
	}
	return rundir.WriteOutcome(pl.Layout.Outcome, o)
}

// TestRunsInOneAllocationTakeTurns: a second run driven in the same
// allocation waits until the first one's driver is done, saying so — with
// flock, and with the lease taken where flock does not hold across nodes
// (there the allocation lock used to "succeed" for both).
func TestRunsInOneAllocationTakeTurns(t *testing.T) {
	for _, locks := range []string{"flock", "lease"} {
		t.Run(locks, func(t *testing.T) {
			t.Setenv("SLURMBENCH_LOCKS", locks)
			runsTakeTurns(t)
		})
	}
}

func runsTakeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		a := Allocation{JobID: 77, NodeList: "n1", Nodes: 1, GPUsPerNode: 4}
		release := make(chan struct{})
		var mu sync.Mutex
		var order []string
		drive := func(name string, wait chan struct{}) Drive {
			return func(_ context.Context, pl *plan.Plan, _ io.Writer) error {
				mu.Lock()
				order = append(order, name+" starts")
				mu.Unlock()
				if wait != nil {
					<-wait
				}
				mu.Lock()
				order = append(order, name+" ends")
				mu.Unlock()
				return writeRun(pl, testConcs, rundir.Outcome{Result: rundir.Succeeded})
			}
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		first, second := testPlan(t, e.runs, "first"), testPlan(t, e.runs, "second")
		wg.Go(func() { _, errs[0] = RunInAllocation(testCtx(t), e.options(t, first), a, drive("first", release)) })
		time.Sleep(2 * time.Second)
		var progress strings.Builder
		o := e.options(t, second)
		o.Progress, o.Stage.StageDir = &progress, e.stage+"-second" // LOGS/ holds one run
		wg.Go(func() { _, errs[1] = RunInAllocation(testCtx(t), o, a, drive("second", nil)) })
		time.Sleep(10 * time.Second)
		close(release)
		wg.Wait()
		if errs[0] != nil || errs[1] != nil {
			t.Fatalf("runs: %v, %v", errs[0], errs[1])
		}
		if got := strings.Join(order, ", "); got != "first starts, first ends, second starts, second ends" {
			t.Errorf("order: %s", got)
		}
		if !strings.Contains(progress.String(), "waiting for the run driven in allocation 77 now to end") {
			t.Errorf("the second run did not say it waits:\n%s", progress.String())
		}
	})
}

// TestHeldProvenance: the manifest of a run a held deployment served
// names its place and restart; a fresh run's gets nothing, and the
// caller's Extra is not written through.
func TestHeldProvenance(t *testing.T) {
	shared := map[string]string{"runner": "r1"}
	for _, c := range []struct {
		hr   *rundir.HeldRun
		want map[string]string
	}{
		{nil, map[string]string{"runner": "r1"}},
		{&rundir.HeldRun{Run: 2, Servers: "held"}, map[string]string{"runner": "r1", "held_run": "2", "held_servers": "held"}},
		{&rundir.HeldRun{Run: 3, Servers: "restarted", Restart: 1, Kept: []string{"etcd", "nats"}, StopSeconds: 1, CleanSeconds: 0.5, StartSeconds: 10},
			map[string]string{"runner": "r1", "held_run": "3", "held_servers": "restarted", "held_restart": "1", "held_kept": "etcd,nats", "held_restart_seconds": "11.5"}},
	} {
		p := results.Provenance{Extra: shared}
		heldProvenance(c.hr, &p)
		if fmt.Sprint(p.Extra) != fmt.Sprint(c.want) {
			t.Errorf("%+v: extra %v, want %v", c.hr, p.Extra, c.want)
		}
	}
	if len(shared) != 1 {
		t.Errorf("the caller's Extra was written through: %v", shared)
	}
}
