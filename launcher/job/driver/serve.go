package driver

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// requestPoll is how often a held deployment looks for queued runs, a down
// request or a cancelled run.
const requestPoll = time.Second

// held is what a held deployment keeps between runs.
type held struct {
	plan   *plan.Plan // the job's own plan (slurmbench up)
	status *statusFile
	start  time.Time
	// serving is the plan whose servers run now (nil: none run).
	serving *plan.Plan
	since   time.Time
	runs    int
	// refused are request files that could not be taken: tried once.
	refused map[string]bool
	// last is the plan whose servers ran last (stopped or not): a new
	// start proves their ports free first. restarts counts restarts in
	// place; unclean is set when the nodes could not be proven clean,
	// which ends the deployment (the allocation is given up).
	last     *plan.Plan
	restarts int
	unclean  error
}

// serve is a held deployment (plan.Serve, slurmbench up): start the job's
// topology, pass the health gate, then run each queued run in turn —
// against the servers that run, when its plan starts the same ones, or
// after replacing them with its own — until `slurmbench down` or the job
// is cancelled (or reaches its time limit).
func (d *driver) serve(ctx context.Context) Result {
	h := &held{plan: d.plan, status: d.status, start: d.start, refused: map[string]bool{}}
	d.initStatus()
	d.logf("held deployment: job %s on %v; plan %s, %d nodes", d.alloc.JobID, d.alloc.Hosts, d.plan.Name, len(d.alloc.Hosts))
	if err := os.MkdirAll(d.plan.Layout.Steps, 0o755); err != nil {
		return d.finish(ctx, rundir.PhaseStarting, &failure{class: diagnose.Unknown, msg: err.Error(), code: exitcode.Internal})
	}
	phase := rundir.PhaseInfra
	err := d.startServers(ctx, &phase)
	if err == nil {
		phase = rundir.PhaseHealth
		d.setPhase(rundir.PhaseHealth)
		err = d.healthGate(ctx)
	}
	if err == nil {
		err = d.startServices(ctx, plan.StartAfterFrontend)
	}
	if f := d.failureOf(ctx, err); f != nil {
		return d.finish(ctx, phase, f)
	}
	h.serving, h.since, h.last = d.plan, time.Now().UTC(), d.plan
	d.announce(h, "")
	tick := time.NewTicker(requestPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			msg := "held deployment ended: " + context.Cause(ctx).Error()
			d.cancelQueue(h, msg+" (cancelled, or its time limit) before this run started")
			return d.finish(ctx, rundir.PhaseServing, &failure{class: diagnose.Cancelled, code: exitcode.Interrupted, msg: msg})
		case s := <-d.exited:
			if h.serving == nil {
				continue // a late exit of a topology already stopped
			}
			// Nothing but servers runs between runs: the topology is
			// broken. Keep the allocation; the next run starts its own.
			msg := fmt.Sprintf("%s %s on %s exited with code %d while held", s.proc.Role, s.proc.Name, s.host, s.code)
			d.logf("%s: stopping the held topology", msg)
			d.stopAll()
			h.serving = nil
			d.announce(h, msg)
		case <-tick.C:
			if rundir.DownRequested(h.plan.RunDir) {
				d.logf("slurmbench down: stopping the held deployment")
				d.cancelQueue(h, "the held deployment was taken down (slurmbench down) before this run started")
				return d.finish(ctx, rundir.PhaseServing, nil)
			}
			if path := d.nextRequest(h); path != "" {
				d.runQueued(ctx, h, path)
				if h.unclean != nil {
					// The allocation cannot serve another run: give it up,
					// so the runner (matrix) continues in a new one.
					msg := "held deployment ended: " + h.unclean.Error()
					d.cancelQueue(h, msg+" before this run started")
					return d.finish(ctx, rundir.PhaseServing, &failure{class: diagnose.Unknown, code: exitcode.Engine, msg: msg})
				}
				d.announce(h, "")
			}
		}
	}
}

// nextRequest is the first queued request not refused before ("": none).
func (d *driver) nextRequest(h *held) string {
	queue, err := rundir.PendingRequests(h.plan.RunDir)
	if err != nil {
		d.logf("%v", err)
		return ""
	}
	for _, q := range queue {
		if !h.refused[q] {
			return q
		}
	}
	return ""
}

// initStatus writes the plan's first status: every process pending.
func (d *driver) initStatus() {
	d.status.update(func(s *rundir.Status) {
		s.Phase, s.JobID, s.Hosts = rundir.PhaseStarting, d.alloc.JobID, d.alloc.Hosts
		for _, p := range d.plan.Processes {
			s.Processes = append(s.Processes, rundir.ProcessStatus{Name: p.Name, Role: string(p.Role), Host: d.alloc.Hosts[p.Nodes[0]], State: "pending", Log: p.Log})
		}
	})
}

// announce writes the held deployment's status: serving (with the
// endpoint) or idle, and the queue.
func (d *driver) announce(h *held, lastError string) {
	queue, _ := rundir.PendingRequests(h.plan.RunDir)
	phase := rundir.PhaseIdle
	srv := rundir.Serving{Runs: h.runs, LastError: lastError}
	for _, q := range queue {
		srv.Queue = append(srv.Queue, filepath.Base(q))
	}
	if h.serving != nil {
		phase = rundir.PhaseServing
		srv.RunID, srv.Since = h.serving.RunID, h.since
		srv.Endpoint = d.endpoint(h.serving)
	}
	h.status.update(func(s *rundir.Status) {
		if lastError == "" && s.Serving != nil && h.serving == nil {
			srv.LastError = s.Serving.LastError
		}
		s.Phase, s.Serving, s.FrontendURL = phase, &srv, srv.Endpoint
	})
	if phase == rundir.PhaseServing {
		d.logf("serving %s at %s (run %s); %d queued", h.serving.Name, srv.Endpoint, srv.RunID, len(queue))
	} else {
		d.logf("idle: no topology serves; %d queued", len(queue))
	}
}

// endpoint is plan's frontend URL in this allocation.
func (d *driver) endpoint(pl *plan.Plan) string {
	return "http://" + net.JoinHostPort(d.alloc.IPs[pl.Health.Node], strconv.Itoa(pl.Health.Port))
}

// cancelQueue ends every queued run that will not run, so its runner stops
// waiting.
func (d *driver) cancelQueue(h *held, why string) {
	queue, _ := rundir.PendingRequests(h.plan.RunDir)
	for _, path := range queue {
		req, err := rundir.TakeRequest(path)
		if err != nil {
			d.logf("%v", err)
			continue
		}
		d.endUnstarted(filepath.Dir(req.Plan), rundir.Cancelled, diagnose.Cancelled, why)
	}
}

// endUnstarted writes the outcome of a queued run that never started into
// its run directory, so its runner stops waiting.
func (d *driver) endUnstarted(runDir string, result rundir.Result, class diagnose.Class, msg string) {
	now := time.Now().UTC()
	_ = rundir.WriteOutcome(rundir.New(runDir).Outcome, rundir.Outcome{Result: result, Phase: rundir.PhaseQueued,
		Class: class, Message: msg, JobID: d.alloc.JobID, Started: now, Ended: now})
}

// runQueued takes one queued run and runs it to its outcome, written into
// the run's own directory. The held topology serves on if the run ended
// with it healthy.
func (d *driver) runQueued(ctx context.Context, h *held, path string) {
	req, err := rundir.TakeRequest(path)
	if err != nil {
		// It stays in the queue (it cannot be moved), refused: its runner
		// is told, if the request could be read at all.
		h.refused[path] = true
		d.logf("refusing a queued run: %v", err)
		if req.Plan != "" {
			d.endUnstarted(filepath.Dir(req.Plan), rundir.Failed, diagnose.Unknown, "the held deployment could not take the run: "+err.Error())
		}
		return
	}
	h.runs++
	runDir := filepath.Dir(req.Plan)
	pl, err := plan.ReadPlan(req.Plan)
	if err == nil {
		err = pl.Fits(len(d.alloc.Hosts), h.plan.Slurm.GPUsPerNode)
	}
	if err != nil {
		d.logf("run %s refused: %v", req.RunID, err)
		d.endUnstarted(runDir, rundir.Failed, diagnose.Unknown, "the held deployment refused the run: "+err.Error())
		return
	}
	if rundir.CancelRequested(runDir) {
		d.logf("run %s was cancelled before it started", req.RunID)
		d.endUnstarted(runDir, rundir.Cancelled, diagnose.Interrupted, "cancelled by its runner before it started")
		return
	}
	h.status.update(func(s *rundir.Status) {
		if s.Serving != nil {
			s.Serving.Running = req.RunID
		}
	})

	// The run's own status, outcome and driver lines go to its directory;
	// the held deployment's log keeps them too.
	d.plan, d.status, d.start = pl, &statusFile{path: pl.Layout.Status}, time.Now().UTC()
	runLog, err := os.OpenFile(pl.Layout.BatchOut, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err == nil {
		d.setLog(io.MultiWriter(d.opts.Log, runLog))
	}
	defer func() {
		d.setLog(d.opts.Log)
		if runLog != nil {
			runLog.Close()
		}
		d.plan, d.status, d.start = h.plan, h.status, h.start
	}()

	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	go watchRun(runCtx, h.plan.RunDir, runDir, stop)

	d.initStatus()
	reuse := h.serving != nil && plan.SameServing(h.serving, pl)
	hr := &rundir.HeldRun{Run: h.runs, Servers: "held"}
	d.heldRun = hr
	defer func() { d.heldRun, d.keep = nil, nil }()
	phase := rundir.PhaseInfra
	if reuse {
		d.logf("run %s: on the held %s servers (run %s)", pl.RunID, h.serving.Name, h.serving.RunID)
		if ferr := inheritFingerprints(h.serving, pl); ferr != nil {
			d.logf("run %s: the held servers' fingerprints: %v", pl.RunID, ferr)
		}
		err = d.measureOnHeld(runCtx, h, &phase)
	} else {
		hr.Servers = "started"
		var cerr error
		switch {
		case h.serving != nil:
			h.restarts++
			hr.Servers, hr.Restart = "restarted", h.restarts
			d.keep, cerr = d.restartInPlace(runCtx, h.serving, pl, hr)
			h.serving = nil
		case h.last != nil:
			// The servers that ran last are stopped already (one
			// died, or a run failed): their ports must be free too.
			t := time.Now()
			cerr = d.proveClean(runCtx, nil, h.last, pl, nil)
			hr.CleanSeconds = time.Since(t).Seconds()
		}
		if cerr != nil {
			d.logf("run %s: %v", pl.RunID, cerr)
			if runCtx.Err() == nil {
				h.unclean = cerr
			}
			err = cerr
		} else {
			d.logf("run %s: starting %s in the held allocation", pl.RunID, pl.Name)
			healthy := false
			h.last = pl
			t := time.Now()
			err = d.runPhasesTimed(runCtx, &phase, &healthy, func() { hr.StartSeconds = time.Since(t).Seconds() })
			if healthy {
				h.serving, h.since = pl, time.Now().UTC()
			}
		}
	}
	f := d.failureOf(runCtx, err)
	d.setPhase(rundir.PhaseStopping)
	// The servers serve on if they passed their gate and none failed (a
	// failed benchmark or eval, or a cancelled run, leaves them healthy),
	// unless the job itself is ending.
	serverDied := f != nil && f.step != nil && plan.IsServer(f.step.proc.Role)
	if h.serving == nil || serverDied || h.unclean != nil || ctx.Err() != nil {
		d.stopAll()
		d.drainExited()
		h.serving = nil
	}
	d.stopSteps(func(s *step) bool { return !plan.IsServer(s.proc.Role) })
	res := d.conclude(phase, f)
	d.logf("run %s ended %s", pl.RunID, res.Outcome.Result)
}

// watchRun cancels a queued run's context when its runner gives up on it
// or the held deployment is taken down.
func watchRun(ctx context.Context, heldDir, runDir string, stop context.CancelCauseFunc) {
	t := time.NewTicker(requestPoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			switch {
			case rundir.CancelRequested(runDir):
				stop(fmt.Errorf("its runner was interrupted"))
				return
			case rundir.DownRequested(heldDir):
				stop(fmt.Errorf("the held deployment was taken down (slurmbench down)"))
				return
			}
		}
	}
}

// measureOnHeld runs a run's telemetry, benchmark and eval against the
// servers already held.
func (d *driver) measureOnHeld(ctx context.Context, h *held, phase *rundir.Phase) error {
	base := d.endpoint(h.serving)
	d.status.update(func(s *rundir.Status) {
		s.FrontendURL = base
		for i := range s.Processes {
			if plan.IsServer(plan.Role(s.Processes[i].Role)) {
				s.Processes[i].State = "held"
			}
		}
	})
	if err := d.startTelemetry(ctx); err != nil {
		return err
	}
	*phase = rundir.PhaseHealth
	if err := d.awaitTelemetry(ctx); err != nil {
		return err
	}
	return d.measure(ctx, phase)
}

// drainExited drops exits reported by steps that are all stopped now.
func (d *driver) drainExited() {
	for {
		select {
		case <-d.exited:
		default:
			return
		}
	}
}

func (d *driver) setLog(w io.Writer) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	d.log = w
}
