package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/slurm"
)

// Held is a held deployment (slurmbench up) as run --in and down find it.
type Held struct {
	Job  slurm.Job
	Plan *plan.Plan // the deployment's own plan (Serve set)
}

// Nodes and GPUsPerNode are the allocation's size.
func (h Held) Nodes() int       { return h.Plan.Slurm.Nodes }
func (h Held) GPUsPerNode() int { return h.Plan.Slurm.GPUsPerNode }

// FindHeld looks up job id and reads its plan. Only a running or pending
// held deployment is accepted; the error says what the job is instead.
func FindHeld(ctx context.Context, client *slurm.Client, id slurm.JobID) (Held, error) {
	job, err := client.LookupJob(ctx, id)
	if err != nil {
		return Held{}, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("looking up job %d: %w", id, err))
	}
	dir, err := RunDirOf(job)
	if err != nil {
		return Held{}, exitcode.Errorf(exitcode.Config, "job %d is not a held deployment (start one with slurmbench up, or run inside the allocation, where SLURM_JOB_ID is %d): %w", id, id, err)
	}
	pl, err := ReadPlan(dir)
	if err != nil {
		return Held{}, exitcode.With(exitcode.Config, err)
	}
	if !pl.Serve {
		return Held{Job: job, Plan: pl}, exitcode.Errorf(exitcode.Config, "job %d is run %s, not a held deployment (start one with slurmbench up)", id, pl.RunID)
	}
	return Held{Job: job, Plan: pl}, nil
}

// heldPoll is how often a run queued on a held deployment checks that the
// deployment's job still runs.
const heldPoll = 10 * time.Second

// RunIn runs o.Plan inside held deployment h instead of submitting a job:
// it claims the run's own directory, imports the image, queues the run on
// the deployment and follows it there, then collects and stages exactly as
// Run does. The deployment runs it on its servers when the plan starts the
// same ones, or replaces them with the plan's. An interrupt stops the run,
// not the deployment.
func RunIn(ctx context.Context, o Options, h Held) (*Result, error) {
	o.defaults()
	pl := o.Plan
	r := &runState{o: o, plan: pl, res: &Result{RunDir: pl.RunDir, JobID: h.Job.ID}}
	if h.Job.Terminal() {
		return r.res, exitcode.Errorf(exitcode.Config, "held deployment job %d has ended (%s)", h.Job.ID, h.Job.Outcome())
	}
	cl, err := r.prepareIn(ctx, h.Job.ID, h.Nodes(), h.GPUsPerNode())
	if err != nil {
		return r.res, err
	}
	defer cl.release()
	if ctx.Err() != nil {
		return r.res, exitcode.With(o.Interrupted(), errors.New("interrupted before queueing"))
	}
	_ = rundir.WriteStatus(pl.Layout.Status, rundir.Status{Phase: rundir.PhaseQueued, JobID: h.Job.ID.String(), Updated: time.Now().UTC()})
	if _, err := rundir.QueueRequest(h.Plan.RunDir, rundir.Request{RunID: pl.RunID, Plan: pl.PlanFile}); err != nil {
		return r.res, exitcode.With(exitcode.Submit, err)
	}
	r.progress("queued run %s on held deployment job %d (%s), run dir %s", pl.RunID, h.Job.ID, h.Plan.Name, pl.RunDir)
	r.submitted()
	return r.res, r.finish(ctx, r.followQueued(ctx, h))
}

// prepareIn readies a run for job id's allocation of nodes × gpusPerNode:
// the plan must fit, and its run directory is made fresh (a run that
// submits nothing has no job to adopt), filled and its image imported.
func (r *runState) prepareIn(ctx context.Context, id slurm.JobID, nodes, gpusPerNode int) (*claim, error) {
	pl := r.plan
	if err := pl.Fits(nodes, gpusPerNode); err != nil {
		return nil, exitcode.Errorf(exitcode.Config, "run --in %d: %w", id, err)
	}
	cl, err := claimRunDir(ctx, pl, false)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	if !cl.fresh {
		cl.release()
		return nil, exitcode.Errorf(exitcode.Config, "--run-id %q: run directory %s exists; a run in job %d takes a fresh run id", pl.RunID, pl.RunDir, id)
	}
	if err := r.prepare(ctx); err != nil {
		cl.release()
		return nil, err
	}
	return cl, nil
}

// followQueued follows a run queued on a held deployment to its outcome,
// watching the deployment's job meanwhile.
func (r *runState) followQueued(ctx context.Context, h Held) error {
	o, pl := r.o, r.plan
	w := &watcher{r: r, tail: &logTail{path: pl.Layout.BatchOut, w: o.DriverLog}}
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	jobTick := time.NewTicker(heldPoll)
	defer jobTick.Stop()
	lastQueue := ""
	var unseen, lastSaid time.Time
	for {
		select {
		case <-tick.C:
			if st, ok := w.watch(); ok && st.Phase == rundir.PhaseQueued {
				r.reportQueue(h, &lastQueue)
			}
			if out, err := rundir.ReadOutcome(pl.Layout.Outcome); err == nil {
				w.watch()
				return r.judgeByOutcome(out)
			}
		case <-jobTick.C:
			job, err := o.Client.LookupJob(ctx, h.Job.ID)
			if err != nil {
				// slurmrestd's hiccups are retried at the next tick, for
				// up to heldLostAfter: a held job unseen that long (gone
				// without an outcome, or slurmrestd failing throughout) is
				// a deadline this runner owns. It withdraws its own run,
				// never the deployment.
				now := time.Now()
				if unseen.IsZero() {
					unseen = now
				}
				if now.Sub(unseen) >= heldLostAfter {
					return r.withdraw(h, fmt.Sprintf("held deployment job %d could not be seen for %s (last: %v)", h.Job.ID, heldLostAfter, err))
				}
				if now.Sub(lastSaid) >= time.Minute {
					lastSaid = now
					r.progress("looking up held job %d failed, retrying for up to %s: %v", h.Job.ID, heldLostAfter-now.Sub(unseen).Round(time.Second), err)
				}
				continue
			}
			unseen = time.Time{}
			if !job.Terminal() {
				continue
			}
			r.res.Job = job
			w.watch()
			if out, err := rundir.ReadOutcome(pl.Layout.Outcome); err == nil {
				return r.judgeByOutcome(out)
			}
			msg := fmt.Sprintf("held deployment job %d ended %s before run %s finished", job.ID, job.Outcome(), pl.RunID)
			r.writeOutcome(rundir.Outcome{Result: rundir.Failed, Class: diagnose.Allocation, Message: msg})
			return exitcode.Errorf(exitcode.Queue, "%s", msg)
		case <-ctx.Done():
			layer := o.Interrupted()
			r.progress("interrupted: stopping run %s in held job %d", pl.RunID, h.Job.ID)
			if err := rundir.RequestCancel(pl.RunDir); err != nil {
				r.progress("asking the held deployment to stop run %s: %v", pl.RunID, err)
			}
			r.awaitQueuedEnd()
			w.watch()
			r.writeOutcome(rundir.Outcome{Result: rundir.Cancelled, Class: diagnose.Interrupted, Message: "slurmbench run --in was interrupted; run stopped, the held deployment serves on"})
			return exitcode.With(layer, fmt.Errorf("interrupted: run %s stopped in held job %d", pl.RunID, h.Job.ID))
		}
	}
}

// heldLostAfter is how long run --in keeps looking for a held job it
// cannot see before it gives its run up.
const heldLostAfter = 10 * time.Minute

// withdraw gives up a queued run whose held job is lost: its request is
// taken back (a deployment that comes back does not run it unwatched) and
// the run ends failed, saying why.
func (r *runState) withdraw(h Held, why string) error {
	pl := r.plan
	if err := rundir.RequestCancel(pl.RunDir); err != nil {
		r.progress("withdrawing run %s: %v", pl.RunID, err)
	}
	if q, err := rundir.PendingRequests(h.Plan.RunDir); err == nil {
		for _, path := range q {
			if strings.HasSuffix(path, "-"+pl.RunID+".json") {
				_ = os.Remove(path)
			}
		}
	}
	if out, err := rundir.ReadOutcome(pl.Layout.Outcome); err == nil {
		return r.judgeByOutcome(out)
	}
	msg := why + "; run " + pl.RunID + " withdrawn"
	r.writeOutcome(rundir.Outcome{Result: rundir.Failed, Class: diagnose.Allocation, Message: msg})
	return exitcode.Errorf(exitcode.Queue, "%s", msg)
}

// reportQueue says, when it changed, what the run waits behind.
func (r *runState) reportQueue(h Held, last *string) {
	st, err := rundir.ReadStatus(h.Plan.Layout.Status)
	if err != nil {
		// No driver runs yet: the job waits in Slurm's queue.
		if line := fmt.Sprintf("waiting for held job %d to start", h.Job.ID); line != *last {
			*last = line
			r.progress("%s", line)
		}
		return
	}
	// The queue itself, not the status's copy of it (written only between
	// runs).
	ahead := 0
	queue, _ := rundir.PendingRequests(h.Plan.RunDir)
	for _, q := range queue {
		if strings.HasSuffix(q, "-"+r.plan.RunID+".json") {
			break
		}
		ahead++
	}
	line := fmt.Sprintf("waiting in held job %d: %d queued ahead", h.Job.ID, ahead)
	if st.Serving != nil && st.Serving.Running != "" {
		line += ", running " + st.Serving.Running
	}
	if st.Serving == nil || st.Phase != rundir.PhaseServing && st.Phase != rundir.PhaseIdle {
		line = fmt.Sprintf("waiting for held job %d to serve (%s)", h.Job.ID, st.Phase)
	}
	if line != *last {
		*last = line
		r.progress("%s", line)
	}
}

// awaitQueuedEnd waits, bounded by CancelWait and a second interrupt, for
// the held deployment to write the cancelled run's outcome.
func (r *runState) awaitQueuedEnd() {
	deadline := time.After(r.o.CancelWait)
	for {
		if _, err := rundir.ReadOutcome(r.plan.Layout.Outcome); err == nil {
			return
		}
		select {
		case <-deadline:
			r.progress("run %s: its end was not confirmed within %s", r.plan.RunID, r.o.CancelWait)
			return
		case <-r.o.Hard:
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// judgeByOutcome decides a run in another's job (queued on a held
// deployment, or driven inside an allocation) from its outcome alone: the
// job goes on, so its state says nothing about the run.
func (r *runState) judgeByOutcome(out rundir.Outcome) error {
	r.res.Outcome = out
	if out.Result == rundir.Succeeded {
		return nil
	}
	msg := out.Message
	if out.FirstError != "" {
		msg += ": " + out.FirstError
	}
	layer := layerOf(out.Class)
	switch {
	case out.Class == diagnose.Cancelled || out.Result == rundir.Cancelled:
		// Not this runner's interrupt (that path does not judge): the
		// deployment was taken down or its job ended under the run.
		layer = exitcode.Queue
	case out.Phase == rundir.PhaseQueued:
		layer = exitcode.Config // refused before it started
	}
	return exitcode.With(layer, fmt.Errorf("%s [%s]", msg, out.Class))
}

// DownOptions configure Down.
type DownOptions struct {
	Client *slurm.Client
	// Wait bounds the wait for the deployment to stop by itself before its
	// job is cancelled (default 60 s).
	Wait time.Duration
	// CancelWait bounds the wait after cancelling (default 30 s).
	CancelWait time.Duration
	Progress   io.Writer
}

// Down ends held deployment h: it asks the driver to stop (it stops the run
// it is running, ends the queued ones as cancelled and stops every server),
// waits for the job to end, and cancels the job if it has not ended within
// Wait (at once while it is still pending). It returns the job's end.
func Down(ctx context.Context, h Held, o DownOptions) (slurm.Job, error) {
	if o.Wait == 0 {
		o.Wait = time.Minute
	}
	if o.CancelWait == 0 {
		o.CancelWait = 30 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	say := func(format string, args ...any) {
		fmt.Fprintf(o.Progress, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
	id := h.Job.ID
	if h.Job.Terminal() {
		say("job %d has already ended: %s", id, h.Job.Outcome())
		return h.Job, nil
	}
	if err := rundir.RequestDown(h.Plan.RunDir); err != nil {
		return h.Job, exitcode.Errorf(exitcode.Config, "asking job %d to stop: %w", id, err)
	}
	wait := o.Wait
	if h.Job.State.Base == slurm.StatePending {
		wait = 0 // no driver runs yet to read the request
	} else {
		say("asked held deployment %s (job %d) to stop; waiting up to %s", h.Plan.RunID, id, wait)
	}
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		job, err := o.Client.Wait(wctx, id, slurm.WaitOptions{PollMin: 500 * time.Millisecond, PollMax: 2 * time.Second})
		if err == nil {
			// Down means nothing of the deployment left, in squeue too.
			job, _ = completed(wctx, o.Client, job)
			cancel()
			say("job %d ended %s", id, job.Outcome())
			return job, nil
		}
		cancel()
		if ctx.Err() != nil {
			return h.Job, exitcode.With(exitcode.Interrupted, fmt.Errorf("interrupted while job %d stops (it was asked to; slurmbench cancel %d ends it at once)", id, id))
		}
		say("job %d has not ended within %s: cancelling it", id, wait)
	}
	if err := o.Client.CancelJob(ctx, id); err != nil {
		return h.Job, exitcode.With(exitcode.Slurm, fmt.Errorf("cancelling job %d: %w", id, err))
	}
	wctx, cancel := context.WithTimeout(ctx, o.CancelWait)
	defer cancel()
	job, err := o.Client.Wait(wctx, id, slurm.WaitOptions{PollMin: 250 * time.Millisecond, PollMax: time.Second})
	if err != nil {
		return h.Job, exitcode.With(exitcode.Queue, fmt.Errorf("job %d was cancelled but has not ended within %s: %w", id, o.CancelWait, err))
	}
	job, _ = completed(wctx, o.Client, job)
	say("job %d ended %s", id, job.Outcome())
	return job, nil
}

// Allocation is a Slurm allocation this process runs inside — salloc's
// shell, or a batch script — where srun starts steps and slurmrestd is not
// needed.
type Allocation struct {
	JobID       slurm.JobID
	NodeList    string // SLURM_JOB_NODELIST
	Nodes       int
	GPUsPerNode int
}

// Drive runs a plan's driver in this process, its log to log (the cmd
// passes driver.Run: the runner does not import the driver).
type Drive func(ctx context.Context, pl *plan.Plan, log io.Writer) error

// RunInAllocation runs o.Plan inside allocation a, which this process is
// part of: it claims the run directory, imports the image, runs the driver
// here (its steps go to the allocation's nodes through srun), then
// collects and stages as Run does. An interrupt stops the run's steps; the
// allocation stays.
func RunInAllocation(ctx context.Context, o Options, a Allocation, drive Drive) (*Result, error) {
	o.defaults()
	pl := o.Plan
	r := &runState{o: o, plan: pl, res: &Result{RunDir: pl.RunDir, JobID: a.JobID}}
	cl, err := r.prepareIn(ctx, a.JobID, a.Nodes, a.GPUsPerNode)
	if err != nil {
		return r.res, err
	}
	defer cl.release()
	// Runs in one allocation take turns: two topologies on the same
	// nodes would fight over GPUs and ports.
	turn, err := r.allocationTurn(ctx, a)
	if err != nil {
		return r.res, err
	}
	defer func() { _ = turn.Release() }() // closing the lock file drops the lock
	log, err := os.OpenFile(pl.Layout.BatchOut, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return r.res, exitcode.Errorf(exitcode.Internal, "opening the driver's log: %w", err)
	}
	defer log.Close()
	r.progress("running %s inside allocation %d (%d nodes), run dir %s", pl.Name, a.JobID, a.Nodes, pl.RunDir)
	r.submitted()
	return r.res, r.finish(ctx, r.followLocal(ctx, drive, log))
}

// allocationTurn waits for the allocation's lock, held by the run driven
// in it now (a file beside the run directories); nil where the filesystem
// has no flock.
func (r *runState) allocationTurn(ctx context.Context, a Allocation) (*flock.Lock, error) {
	path := filepath.Join(filepath.Dir(r.plan.RunDir), fmt.Sprintf(".allocation-%d.lock", a.JobID))
	said := false
	l, err := flock.Acquire(ctx, path, flock.Options{Timeout: allocationWait, Every: 5 * time.Second, Waiting: func(time.Duration) {
		if !said {
			said = true
			r.progress("waiting for the run driven in allocation %d now to end", a.JobID)
		}
	}})
	switch {
	case errors.Is(err, flock.ErrUnsupported):
		return nil, nil
	case err != nil && ctx.Err() != nil:
		return nil, exitcode.With(r.o.Interrupted(), fmt.Errorf("interrupted while waiting for allocation %d: %w", a.JobID, err))
	case err != nil:
		return nil, exitcode.Errorf(exitcode.Queue, "allocation %d: %w", a.JobID, err)
	}
	return l, nil
}

// allocationWait bounds the wait for another run in the same allocation:
// longer than any allocation lasts.
const allocationWait = 30 * 24 * time.Hour

// followLocal runs the driver and reports its progress until it ends.
func (r *runState) followLocal(ctx context.Context, drive Drive, log io.Writer) error {
	o, pl := r.o, r.plan
	done := make(chan error, 1)
	go func() { done <- drive(ctx, pl, log) }()
	w := &watcher{r: r, tail: &logTail{path: pl.Layout.BatchOut, w: o.DriverLog}}
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			w.watch()
		case err := <-done:
			w.watch()
			out, oerr := rundir.ReadOutcome(pl.Layout.Outcome)
			switch {
			case ctx.Err() != nil:
				r.res.Outcome = out
				return exitcode.With(o.Interrupted(), fmt.Errorf("interrupted: run %s stopped; the allocation stays", pl.RunID))
			case err != nil:
				return exitcode.Errorf(exitcode.Internal, "driver: %w", err)
			case oerr != nil:
				return exitcode.Errorf(exitcode.Internal, "the driver left no outcome: %w", oerr)
			}
			return r.judgeByOutcome(out)
		}
	}
}

// heldProvenance records in the manifest which allocation and restart
// served a run a held deployment ran (the allocation is the provenance's
// job_id): held_run (the deployment's nth run), held_servers (held,
// restarted or started), held_restart and held_kept.
func heldProvenance(hr *rundir.HeldRun, p *results.Provenance) {
	if hr == nil {
		return
	}
	extra := make(map[string]string, len(p.Extra)+4)
	for k, v := range p.Extra {
		extra[k] = v
	}
	extra["held_run"] = strconv.Itoa(hr.Run)
	extra["held_servers"] = hr.Servers
	if hr.Restart > 0 {
		extra["held_restart"] = strconv.Itoa(hr.Restart)
		extra["held_restart_seconds"] = strconv.FormatFloat(hr.StopSeconds+hr.CleanSeconds+hr.StartSeconds, 'f', 1, 64)
	}
	if len(hr.Kept) > 0 {
		extra["held_kept"] = strings.Join(hr.Kept, ",")
	}
	p.Extra = extra
}
