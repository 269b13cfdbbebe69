package driver

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// queuedPlan is runPlan under another run id, as `run --in` writes it.
func queuedPlan(t *testing.T, front *frontend, runID string, decode, bench []string) *plan.Plan {
	t.Helper()
	p := runPlan(t, front, decode, bench)
	p.RunID = runID
	writePlan(t, p)
	return p
}

func writePlan(t *testing.T, p *plan.Plan) {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.PlanFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func outcomeOf(t *testing.T, p *plan.Plan) rundir.Outcome {
	t.Helper()
	var o rundir.Outcome
	waitFor(t, "run "+p.RunID+"'s outcome", func() bool {
		var err error
		o, err = rundir.ReadOutcome(p.Layout.Outcome)
		return err == nil
	})
	return o
}

// TestServeHoldsAndRunsQueuedRuns drives a held deployment through
// driver.Run with the fake srun: it serves after the health gate, runs a
// queued run of the same servers without restarting them, replaces the
// servers for a run that needs others, refuses a run that does not fit,
// and ends succeeded on a down request.
func TestServeHoldsAndRunsQueuedRuns(t *testing.T) {
	sleep := []string{"/bin/sleep", "60"}
	front := startFrontend(t)
	front.prefill.Store(1)
	front.decode.Store(1)
	up := runPlan(t, front, sleep, []string{"/bin/false"}) // serve runs no benchmark of its own
	up.Serve = true
	up.Slurm.GPUsPerNode = 2
	writePlan(t, up)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- runDriver(t, ctx, up) }()

	var st rundir.Status
	waitFor(t, "the serving phase", func() bool {
		var err error
		st, err = rundir.ReadStatus(up.Layout.Status)
		return err == nil && st.Phase == rundir.PhaseServing
	})
	if st.Serving == nil || st.Serving.RunID != up.RunID || !strings.HasPrefix(st.Serving.Endpoint, "http://127.0.0.1:") {
		t.Fatalf("serving status %+v: want the endpoint and run %s", st.Serving, up.RunID)
	}

	// Same servers: only the benchmark starts.
	same := queuedPlan(t, front, "same", sleep, []string{"/bin/true"})
	if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: same.RunID, Plan: same.PlanFile}); err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(t, same); o.Result != rundir.Succeeded || o.JobID != "42" {
		t.Fatalf("run on the held servers: %+v", o)
	}
	if _, err := os.Stat(filepath.Join(same.Layout.Logs, "prefill_w0.log")); !os.IsNotExist(err) {
		t.Errorf("the held prefill worker was started again for run %s (%v)", same.RunID, err)
	}
	if _, err := os.Stat(filepath.Join(same.Layout.Logs, "benchmark.log")); err != nil {
		t.Errorf("run %s's benchmark did not run: %v", same.RunID, err)
	}
	if b, _ := os.ReadFile(same.Layout.BatchOut); !strings.Contains(string(b), "on the held") {
		t.Errorf("run %s's log does not say it ran on the held servers:\n%s", same.RunID, b)
	}

	// Other servers: the held ones stop, the run's own start and serve on.
	other := queuedPlan(t, front, "other", []string{"/bin/sleep", "61"}, []string{"/bin/true"})
	tooBig := queuedPlan(t, front, "too-big", sleep, []string{"/bin/true"})
	tooBig.Nodes = 3
	writePlan(t, tooBig)
	for _, p := range []*plan.Plan{other, tooBig} {
		if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: p.RunID, Plan: p.PlanFile}); err != nil {
			t.Fatal(err)
		}
	}
	if o := outcomeOf(t, other); o.Result != rundir.Succeeded {
		t.Fatalf("run with its own servers: %+v", o)
	}
	if _, err := os.Stat(filepath.Join(other.Layout.Logs, "decode_w0.log")); err != nil {
		t.Errorf("run %s's own decode worker did not start: %v", other.RunID, err)
	}
	if o := outcomeOf(t, tooBig); o.Result != rundir.Failed || !strings.Contains(o.Message, "needs 3 nodes × 2 GPUs") || !strings.Contains(o.Message, "short by 2 more node(s)") {
		t.Errorf("run that does not fit: %+v; want it refused naming the numbers", o)
	}
	waitFor(t, "the held status after three runs", func() bool {
		var err error
		st, err = rundir.ReadStatus(up.Layout.Status)
		return err == nil && st.Serving != nil && st.Serving.Runs == 3 && st.Serving.Running == ""
	})
	if st.Phase != rundir.PhaseServing || st.Serving.RunID != other.RunID {
		t.Errorf("held status %s serving %+v; want run %s's servers serving", st.Phase, st.Serving, other.RunID)
	}

	if err := rundir.RequestDown(up.RunDir); err != nil {
		t.Fatal(err)
	}
	var res Result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatal("the held deployment did not stop on a down request")
	}
	if res.ExitCode != exitcode.OK || res.Outcome.Result != rundir.Succeeded {
		t.Errorf("down: exit %d, outcome %+v; want 0 and succeeded", res.ExitCode, res.Outcome)
	}
	st, _ = rundir.ReadStatus(other.Layout.Status)
	for _, ps := range st.Processes {
		if ps.State == "running" {
			t.Errorf("run %s's process %s left running", other.RunID, ps.Name)
		}
	}
}

// TestServeCancelsARunAndKeepsServing: a run whose runner gives up is
// stopped (its benchmark killed), the servers serve on, and a queued run
// left when down arrives is ended as cancelled so its runner stops waiting.
func TestServeCancelsARunAndKeepsServing(t *testing.T) {
	sleep := []string{"/bin/sleep", "60"}
	front := startFrontend(t)
	front.prefill.Store(1)
	front.decode.Store(1)
	up := runPlan(t, front, sleep, nil)
	up.Serve, up.Slurm.GPUsPerNode = true, 2
	up.Processes = up.Processes[:3]
	writePlan(t, up)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan Result, 1)
	go func() { done <- runDriver(t, ctx, up) }()

	slow := queuedPlan(t, front, "slow", sleep, sleep)
	if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: slow.RunID, Plan: slow.PlanFile}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slow run's benchmark", func() bool {
		st, err := rundir.ReadStatus(slow.Layout.Status)
		return err == nil && st.Phase == rundir.PhaseBenchmark
	})
	if err := rundir.RequestCancel(slow.RunDir); err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(t, slow); o.Result != rundir.Cancelled {
		t.Errorf("cancelled run: %+v", o)
	}
	waitFor(t, "serving again", func() bool {
		st, err := rundir.ReadStatus(up.Layout.Status)
		return err == nil && st.Phase == rundir.PhaseServing && st.Serving.Running == ""
	})

	// Down while a run runs and another waits: the running one is
	// stopped, the waiting one never starts.
	blocker := queuedPlan(t, front, "blocker", sleep, sleep)
	if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: blocker.RunID, Plan: blocker.PlanFile}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the blocking run's benchmark", func() bool {
		st, err := rundir.ReadStatus(blocker.Layout.Status)
		return err == nil && st.Phase == rundir.PhaseBenchmark
	})
	left := queuedPlan(t, front, "left", sleep, []string{"/bin/true"})
	if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: left.RunID, Plan: left.PlanFile}); err != nil {
		t.Fatal(err)
	}
	if err := rundir.RequestDown(up.RunDir); err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(t, blocker); o.Result != rundir.Cancelled || !strings.Contains(o.Message, "slurmbench down") {
		t.Errorf("run running at down: %+v; want cancelled naming slurmbench down", o)
	}
	res := <-done
	if res.ExitCode != exitcode.OK {
		t.Errorf("down: exit %d (%s)", res.ExitCode, res.Outcome.Message)
	}
	o, err := rundir.ReadOutcome(left.Layout.Outcome)
	if err != nil || o.Result != rundir.Cancelled || !strings.Contains(o.Message, "slurmbench down") {
		t.Errorf("run queued at down: %+v, %v; want cancelled naming slurmbench down", o, err)
	}
}

// TestServeRestartsInPlace: a queued run whose servers differ from the
// held ones (another decode argv) restarts them in place: the infra
// process, the same in both plans, stays up and is not started again, the
// nodes are proven clean, the new servers pass their gate, and the
// outcome says the run restarted the held servers. A run whose port stays
// taken after the stop cannot be proven clean: it fails naming the port,
// and the deployment gives the allocation up.
func TestServeRestartsInPlace(t *testing.T) {
	sleep := []string{"/bin/sleep", "60"}
	front := startFrontend(t)
	front.prefill.Store(1)
	front.decode.Store(1)
	withInfra := func(p *plan.Plan) {
		p.Processes = append([]plan.Process{{Name: "nats", Role: plan.RoleInfra, Nodes: []int{0}, Argv: sleep, Env: map[string]string{},
			Log: filepath.Join(p.RunDir, "logs", "nats.log"), Critical: true, Srun: plan.SrunOptions{NTasks: 1}}}, p.Processes...)
		writePlan(t, p)
	}
	up := runPlan(t, front, sleep, []string{"/bin/false"})
	up.Serve, up.Slurm.GPUsPerNode = true, 2
	withInfra(up)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeSrunEnv, "1")
	done := make(chan Result, 1)
	go func() {
		res, err := Run(ctx, Options{PlanFile: up.PlanFile, JobID: "42", NodeList: "node1", Srun: self,
			Lookup: func(string) ([]string, error) { return []string{"127.0.0.1"}, nil }, StopGrace: time.Second,
			CleanWait: 2 * time.Second, Log: testWriter{t}})
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	waitFor(t, "the serving phase", func() bool {
		st, err := rundir.ReadStatus(up.Layout.Status)
		return err == nil && st.Phase == rundir.PhaseServing
	})

	v2 := queuedPlan(t, front, "v2", []string{"/bin/sleep", "61"}, []string{"/bin/true"})
	withInfra(v2)
	if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: v2.RunID, Plan: v2.PlanFile}); err != nil {
		t.Fatal(err)
	}
	o := outcomeOf(t, v2)
	if o.Result != rundir.Succeeded || o.Held == nil || o.Held.Servers != "restarted" || o.Held.Restart != 1 || o.Held.Run != 1 ||
		len(o.Held.Kept) != 1 || o.Held.Kept[0] != "nats" {
		t.Fatalf("restarted run: %+v held %+v; want succeeded, restart 1 keeping nats", o, o.Held)
	}
	if _, err := os.Stat(filepath.Join(v2.Layout.Logs, "nats.log")); !os.IsNotExist(err) {
		t.Errorf("the kept infra was started again for run %s (%v)", v2.RunID, err)
	}
	if _, err := os.Stat(filepath.Join(v2.Layout.Logs, "decode_w0.log")); err != nil {
		t.Errorf("run %s's own decode worker did not start: %v", v2.RunID, err)
	}

	// A port that stays taken: the nodes cannot be proven clean.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := queuedPlan(t, front, "busy", sleep, []string{"/bin/true"})
	busy.Processes[1].Ports = map[string]int{"http": ln.Addr().(*net.TCPAddr).Port}
	withInfra(busy)
	next := queuedPlan(t, front, "next", sleep, []string{"/bin/true"})
	for _, p := range []*plan.Plan{busy, next} {
		if _, err := rundir.QueueRequest(up.RunDir, rundir.Request{RunID: p.RunID, Plan: p.PlanFile}); err != nil {
			t.Fatal(err)
		}
	}
	if o := outcomeOf(t, busy); o.Result != rundir.Failed || !strings.Contains(o.Message, "nodes not clean") || !strings.Contains(o.Message, ln.Addr().String()) {
		t.Errorf("run on nodes that cannot be proven clean: %+v; want failed naming %s", o, ln.Addr())
	}
	if o := outcomeOf(t, next); o.Result != rundir.Cancelled || !strings.Contains(o.Message, "nodes not clean") {
		t.Errorf("run queued behind it: %+v; want cancelled, the deployment ended", o)
	}
	res := <-done
	if res.Outcome.Result != rundir.Failed || !strings.Contains(res.Outcome.Message, "held deployment ended: nodes not clean") {
		t.Errorf("deployment: %+v; want it ended, the allocation given up", res.Outcome)
	}
}
