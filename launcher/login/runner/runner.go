// Package runner is `slurmbench run`: plan → image → run directory →
// submit → follow → collect, with every exit path ending the job. Errors
// carry the layer that failed, so the command's exit code says where.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// Options are a run's dependencies.
type Options struct {
	Plan   *plan.Plan
	Binary string // this slurmbench, copied into the run directory
	Client *slurm.Client
	// Import makes the plan's squash file exist (nil: the file must exist).
	Import func(ctx context.Context, pl *plan.Plan) error
	// JobEnv is the job's environment (PATH, passthrough values).
	JobEnv []string
	// Progress gets timestamped progress lines; DriverLog the driver's log
	// as it grows.
	Progress  io.Writer
	DriverLog io.Writer
	// Poll is how often the run directory is read while following (1 s).
	Poll time.Duration
	// CancelWait bounds the wait for a cancelled job to leave the running
	// states (default 30 s).
	CancelWait time.Duration
	// Interrupted reports how the run was interrupted once ctx is done:
	// exitcode.Interrupted or exitcode.Terminated (default exitcode.Interrupted).
	Interrupted func() exitcode.Code
	// Hard is closed when the user insists (a second ^C): stop waiting for
	// the cancelled job and return as soon as the cancel request is sent.
	Hard <-chan struct{}
	// OnSubmitted is told the job id as soon as it is known (submitted,
	// found by its key, or adopted from the run directory's journal).
	OnSubmitted func(slurm.JobID)
	// Stage says where results go once the job ended; Stage.Provenance's
	// job id, nodes and Slurm versions are filled in here.
	Stage CollectOptions
	// OnPhase is told each phase change of the driver.
	OnPhase func(phase rundir.Phase, st rundir.Status)
	// Hold (slurmbench up, a plan.Serve plan): Run returns once the job
	// serves, leaving it running, and collects nothing.
	Hold bool
}

// Result is a finished run.
type Result struct {
	JobID   slurm.JobID
	Job     slurm.Job
	Outcome rundir.Outcome // the driver's, or one written by the runner
	RunDir  string
	// Adopted: the job was submitted by an earlier runner of this run id.
	Adopted bool
	// Collected is what collection found and staged (nil if no job ran).
	Collected *Collected
	// Serving is a held deployment's state once it serves (Options.Hold).
	Serving *rundir.Serving
}

func (o *Options) defaults() {
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	if o.CancelWait == 0 {
		o.CancelWait = 30 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.DriverLog == nil {
		o.DriverLog = io.Discard
	}
	if o.Interrupted == nil {
		o.Interrupted = func() exitcode.Code { return exitcode.Interrupted }
	}
}

// Run runs the plan to its end: it claims the run directory, imports the
// image, submits (or adopts the job an earlier runner of the same run id
// submitted, from the directory's journal), follows the job, then collects
// and stages. It returns a *Error for every failure after planning; the job
// is never left running when Run returns.
func Run(ctx context.Context, o Options) (*Result, error) {
	o.defaults()
	pl := o.Plan
	r := &runState{o: o, plan: pl, res: &Result{RunDir: pl.RunDir}}
	cl, err := claimRunDir(ctx, pl, false)
	if err != nil {
		return r.res, exitcode.With(exitcode.Config, err)
	}
	defer cl.release()
	if !cl.fresh {
		if held, ok := queuedIn(pl, cl.journal); ok {
			// A run --in runner killed before its run ended: the run
			// may still be queued or running in the held job. Submitting
			// it as a job of its own would run it twice in one directory.
			return r.res, exitcode.Errorf(exitcode.Config, "run %s was queued in held deployment job %d (run --in) and may still run there: `slurmbench attach --run-id %s` follows it; a new run takes a new run id", pl.RunID, held, pl.RunID)
		}
		id, found, err := r.adopt(ctx, cl.journal)
		if err != nil {
			return r.res, exitcode.With(exitcode.Submit, err)
		}
		if found {
			r.res.JobID, r.res.Adopted = id, true
			r.key = cl.journal.SubmitKey
			r.progress("adopted job %d of run %s (submitted by an earlier runner), run dir %s", id, pl.RunID, pl.RunDir)
			r.submitted()
			return r.res, r.end(ctx)
		}
	}
	if err := r.prepare(ctx); err != nil {
		return r.res, err
	}
	spec, err := submit.JobSpec(pl, o.JobEnv)
	if err != nil {
		return r.res, exitcode.With(exitcode.Config, err)
	}
	if ctx.Err() != nil {
		return r.res, exitcode.With(o.Interrupted(), errors.New("interrupted before submitting"))
	}
	if err := r.submit(ctx, spec); err != nil {
		if ctx.Err() != nil {
			return r.res, exitcode.With(o.Interrupted(), fmt.Errorf("interrupted while submitting: %w", err))
		}
		return r.res, exitcode.With(slurm.ExitCode(err, exitcode.Submit), err)
	}
	return r.res, r.end(ctx)
}

// end follows the job and, unless it is held, collects and stages.
func (r *runState) end(ctx context.Context) error {
	err := r.follow(ctx)
	if !r.o.Hold {
		return r.finish(ctx, err)
	}
	if err == nil && r.res.Serving == nil {
		return exitcode.Errorf(exitcode.Queue, "job %d ended %s before it served", r.res.JobID, r.res.Job.Outcome())
	}
	return err
}

// prepare fills the claimed run directory and makes the image exist.
func (r *runState) prepare(ctx context.Context) error {
	o, pl := r.o, r.plan
	if err := submit.Prepare(pl, o.Binary); err != nil {
		return exitcode.Errorf(exitcode.Submit, "preparing run directory: %w", err)
	}
	r.progress("image %s → %s", orLocal(pl.Image.Ref), pl.Image.Squash)
	if o.Import != nil {
		if err := o.Import(ctx, pl); err != nil {
			if ctx.Err() != nil {
				return exitcode.With(o.Interrupted(), fmt.Errorf("interrupted while importing the image: %w", err))
			}
			return exitcode.With(exitcode.Image, err)
		}
	}
	if _, err := os.Stat(pl.Image.Squash); pl.Runtime != profile.RuntimeNone && !pl.Image.PerNode && err != nil {
		return exitcode.Errorf(exitcode.Image, "image squash file: %v", err)
	}
	return nil
}

// submit sends the job, journaling its key and each attempt's time before
// the request leaves and the job id once known: a runner killed at any
// point leaves what a later one needs to find the job instead of making a
// second. A signal stops further attempts; Submit itself cancels a job an
// interrupted attempt may have made.
func (r *runState) submit(ctx context.Context, spec slurm.JobSpec) error {
	pl := r.plan
	j := rundir.Journal{RunID: pl.RunID, JobName: spec.Name, SubmitKey: slurm.NewSubmitKey()}
	spec.SubmitKey = j.SubmitKey
	spec.BeforeSend = func(_ int, start time.Time) error {
		j.Sending = start.UTC()
		return rundir.WriteJournal(pl.Layout.Journal, j)
	}
	r.key = j.SubmitKey
	sub, err := r.o.Client.Submit(slurm.WithHardStop(ctx, r.o.Hard), spec)
	if errors.Is(err, slurm.ErrSubmitOutcomeUnknown) {
		return fmt.Errorf("%w; the key is in %s: `slurmbench run` or `attach --run-id %s` finds the job by it once slurmrestd answers", err, pl.Layout.Journal, pl.RunID)
	}
	if err != nil {
		return err
	}
	r.res.JobID = sub.JobID
	r.ambiguous = sub.Recovered || sub.Attempts > 1
	j.JobID, j.Submitted, j.Recovered = sub.JobID.String(), time.Now().UTC(), sub.Recovered
	if err := rundir.WriteJournal(pl.Layout.Journal, j); err != nil {
		r.progress("warning: %v", err)
	}
	r.progress("submitted job %d (%s), run dir %s", sub.JobID, pl.Slurm.JobName, pl.RunDir)
	r.submitted()
	return nil
}

// submitted tells the caller the job id.
func (r *runState) submitted() {
	if r.o.OnSubmitted != nil {
		r.o.OnSubmitted(r.res.JobID)
	}
}

// DuplicateSweep is how often a job that may have a duplicate (see
// runState.ambiguous) has its submit key swept for others while it runs.
const DuplicateSweep = 5 * time.Minute

type runState struct {
	o    Options
	plan *plan.Plan
	res  *Result
	mu   sync.Mutex
	// key is the submit key the job was made under; ambiguous is set when
	// an earlier attempt under it may have made another job.
	key       string
	ambiguous bool
	// swept is when the last duplicate sweep began (zero before the first).
	swept time.Time
}

func (r *runState) progress(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.o.Progress, "%s %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func orLocal(ref string) string {
	if ref == "" {
		return "(local squash)"
	}
	return ref
}

// follow waits for the job, streaming the driver log and reporting phases,
// then judges the end.
func (r *runState) follow(ctx context.Context) error {
	o, pl := r.o, r.plan
	waitCtx, stopWait := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWait()
	type waited struct {
		job slurm.Job
		err error
	}
	done := make(chan waited, 1)
	var lastPollError time.Time
	queue := &queueWait{}
	// The driver's last phase says the job is about to end: the waiter
	// then polls at once and soon after, instead of up to 10 s later.
	wake := make(chan struct{}, 1)
	go func() {
		job, err := o.Client.Wait(waitCtx, r.res.JobID, slurm.WaitOptions{
			PollMax: 10 * time.Second,
			Wake:    wake,
			OnChange: func(j slurm.Job) {
				note := j.Reason
				if note == "None" {
					note = ""
				}
				r.progress("job %d %s %s", j.ID, j.State, note)
				queue.seen(j, note)
			},
			// A failing slurmrestd, or a job it does not find, is looked
			// up again with backoff for as long as it takes; say so, at
			// most once a minute, rather than go quiet.
			OnError: func(err error) {
				if now := time.Now(); now.Sub(lastPollError) >= time.Minute {
					lastPollError = now
					r.progress("polling job %d failed, retrying: %v", r.res.JobID, err)
				}
			},
		})
		done <- waited{job, err}
	}()
	w := &watcher{r: r, tail: &logTail{path: pl.Layout.BatchOut, w: o.DriverLog}, ending: wake}
	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	// After an ambiguous submit (or an adoption) a job of an earlier
	// attempt may still appear, later than any bound; sweep for it while
	// the job runs, so a duplicate never holds nodes for long.
	var sweep <-chan time.Time
	if r.key != "" && (r.ambiguous || r.res.Adopted) {
		t := time.NewTicker(DuplicateSweep)
		defer t.Stop()
		sweep = t.C
	}
	for {
		select {
		case wt := <-done:
			w.watch()
			if wt.err != nil {
				// The job's end could not be read. That is no reason to
				// end it: slurmbench cancels only on an interrupt, a failed
				// start or a deadline of its own. It may still run.
				return exitcode.Errorf(exitcode.Queue, "following job %d: %w; slurmbench stopped following and did not cancel it: it may still run (`slurmbench attach --run-id %s` follows it again, scancel %d ends it)",
					r.res.JobID, wt.err, pl.RunID, r.res.JobID)
			}
			r.res.Job = wt.job
			return r.judge()
		case <-tick.C:
			queue.report(r)
			if st, ok := w.watch(); ok && o.Hold && st.Phase == rundir.PhaseServing && st.Serving != nil {
				r.res.Serving = st.Serving
				return nil // the job serves on: Run returns, the job stays
			}
		case <-sweep:
			// Each sweep looks through the jobs submitted since the
			// previous one began: bounded however long the job runs.
			start := time.Now()
			o.Client.DropDuplicates(ctx, pl.Slurm.JobName, r.key, r.res.JobID, r.swept)
			r.swept = start
		case <-ctx.Done():
			stopWait()
			layer := o.Interrupted()
			r.progress("interrupted: cancelling job %d", r.res.JobID)
			r.cancel(ctx, "interrupted")
			w.tail.pump()
			r.writeOutcome(rundir.Outcome{Result: rundir.Cancelled, Class: diagnose.Interrupted, Message: "slurmbench run was interrupted; job cancelled"})
			return exitcode.With(layer, fmt.Errorf("interrupted: job %d cancelled", r.res.JobID))
		}
	}
}

// watcher reports a run directory's progress: the driver's log, phase
// changes, the health wait and benchmark progress, each once.
type watcher struct {
	r                     *runState
	tail                  *logTail
	lastPhase             rundir.Phase
	lastHealth, lastBench string
	// ending, when set, is told (without blocking) that the driver
	// reached its last phase.
	ending chan<- struct{}
}

// watch reports what changed and returns the status read, if any.
func (w *watcher) watch() (rundir.Status, bool) {
	r, o, pl := w.r, w.r.o, w.r.plan
	w.tail.pump()
	st, err := rundir.ReadStatus(pl.Layout.Status)
	if err != nil {
		return st, false
	}
	if st.Phase != w.lastPhase {
		w.lastPhase = st.Phase
		r.progress("phase %s", st.Phase)
		if o.OnPhase != nil {
			o.OnPhase(st.Phase, st)
		}
		if (st.Phase == rundir.PhaseDone || st.Phase == rundir.PhaseFailed) && w.ending != nil {
			select {
			case w.ending <- struct{}{}:
			default:
			}
		}
	}
	if h := st.Health; h != nil && st.Phase == rundir.PhaseHealth {
		line := fmt.Sprintf("health wait: prefill %d/%d, decode %d/%d (poll %d of %d)", h.PrefillSeen, h.PrefillWant, h.DecodeSeen, h.DecodeWant, h.Attempt, h.MaxAttempts)
		if key := fmt.Sprint(h.PrefillSeen, h.DecodeSeen); key != w.lastHealth {
			w.lastHealth = key
			r.progress("%s", line)
		}
	}
	if bp, err := rundir.ReadBenchProgress(pl.Layout.Progress); err == nil {
		line := fmt.Sprintf("benchmark point %d of %d: c%d %s", bp.Point, bp.Of, bp.Concurrency, bp.State)
		if line != w.lastBench {
			w.lastBench = line
			r.progress("%s", line)
		}
	}
	return st, true
}

// cancel cancels the job and waits, bounded, until it has left the running
// states (unless the user insists).
func (r *runState) cancel(ctx context.Context, why string) {
	// ctx is done (that is why we cancel): the cancel and the wait for the
	// job to end are bounded by CancelWait and a second SIGINT instead.
	bg := context.WithoutCancel(ctx)
	if err := r.o.Client.CancelJob(bg, r.res.JobID); err != nil {
		r.progress("cancelling job %d (%s): %v", r.res.JobID, why, err)
	}
	waitCtx, cancel := context.WithTimeout(bg, r.o.CancelWait)
	defer cancel()
	go func() {
		select {
		case <-r.o.Hard:
			cancel()
		case <-waitCtx.Done():
		}
	}()
	job, err := r.o.Client.Wait(waitCtx, r.res.JobID, slurm.WaitOptions{PollMin: 250 * time.Millisecond, PollMax: time.Second})
	if err != nil {
		r.progress("job %d: end not confirmed after cancel: %v", r.res.JobID, err)
		return
	}
	// A cancelled job is CANCELLED at once, while its processes (the
	// driver writing its outcome and logs) are still being stopped: wait
	// for COMPLETING to clear before the logs are bundled.
	job, done := completed(waitCtx, r.o.Client, job)
	r.res.Job = job
	if !done {
		r.progress("job %d: still %s after cancel", job.ID, job.State)
		return
	}
	r.progress("job %d ended %s", job.ID, job.Outcome())
}

// completed waits, until ctx ends, for an ended job's COMPLETING flag to
// clear: until then its processes are still being stopped and squeue still
// lists it. done is false when ctx ended first.
func completed(ctx context.Context, client *slurm.Client, job slurm.Job) (_ slurm.Job, done bool) {
	for job.State.Has(slurm.FlagCompleting) {
		select {
		case <-ctx.Done():
			return job, false
		case <-time.After(250 * time.Millisecond):
		}
		if j, err := client.LookupJob(ctx, job.ID); err == nil {
			job = j
		}
	}
	return job, true
}

// judge decides a finished job: success needs COMPLETED 0:0 and the
// driver's outcome "succeeded".
func (r *runState) judge() error {
	job := r.res.Job
	out, err := rundir.ReadOutcome(r.plan.Layout.Outcome)
	if err != nil {
		// No driver outcome: the job never got to run it, or died under it.
		o := rundir.Outcome{Result: rundir.Failed, Class: diagnose.Allocation, JobID: job.ID.String(),
			Message: fmt.Sprintf("job %d ended %s without a driver outcome", job.ID, job.Outcome())}
		r.writeOutcome(o)
		return exitcode.Errorf(exitcode.Queue, "%s", o.Message)
	}
	r.res.Outcome = out
	if job.Success() && out.Result == rundir.Succeeded {
		return nil
	}
	if out.Result == rundir.Succeeded {
		return exitcode.Errorf(exitcode.Queue, "driver succeeded but job %d ended %s", job.ID, job.Outcome())
	}
	msg := out.Message
	if out.FirstError != "" {
		msg += ": " + out.FirstError
	}
	return exitcode.With(layerOf(out.Class), fmt.Errorf("%s [%s]", msg, out.Class))
}

// layerOf maps the driver's failure class to the run's layer.
func layerOf(c diagnose.Class) exitcode.Code {
	switch c {
	case diagnose.HealthDeadline:
		return exitcode.Health
	case diagnose.BenchmarkInvalid:
		return exitcode.Benchmark
	case diagnose.EvalFailed:
		return exitcode.Eval
	case diagnose.Cancelled:
		return exitcode.Interrupted
	}
	return exitcode.Engine
}

// writeOutcome records the runner's view when the driver could not.
func (r *runState) writeOutcome(o rundir.Outcome) {
	if o.JobID == "" {
		o.JobID = r.res.JobID.String()
	}
	o.Ended = time.Now().UTC()
	if prev, err := rundir.ReadOutcome(r.plan.Layout.Outcome); err == nil && prev.Result != "" {
		r.res.Outcome = prev
		return // the driver's own account wins
	}
	r.res.Outcome = o
	_ = rundir.WriteOutcome(r.plan.Layout.Outcome, o)
}

// logTail copies what was appended to a file since the last pump.
type logTail struct {
	path string
	off  int64
	w    io.Writer
	part []byte
}

func (t *logTail) pump() {
	f, err := os.Open(t.path)
	if err != nil {
		return
	}
	defer f.Close()
	if _, err := f.Seek(t.off, io.SeekStart); err != nil {
		return
	}
	b, _ := io.ReadAll(io.LimitReader(f, 8<<20))
	t.off += int64(len(b))
	b = append(t.part, b...)
	i := strings.LastIndexByte(string(b), '\n')
	if i < 0 {
		t.part = b
		return
	}
	_, _ = t.w.Write(b[:i+1]) // the driver log echoed to the user, best effort
	t.part = append([]byte(nil), b[i+1:]...)
}

// RunDirOf finds a job's run directory: its working directory holds plan.json.
func RunDirOf(job slurm.Job) (string, error) {
	if job.WorkDir == "" {
		return "", fmt.Errorf("job %d has no working directory", job.ID)
	}
	if err := rundir.IsRunDir(job.WorkDir); err != nil {
		return "", fmt.Errorf("job %d: %w", job.ID, err)
	}
	return job.WorkDir, nil
}

// Attach is run for a job submitted earlier (the runner restarted, was
// killed, or a workflow re-ran): from o.Plan's run directory it follows
// the job, cancels it on a signal, judges, collects and stages exactly as
// Run does. id names the job; 0 takes it from the run directory's submit
// journal (attach --run-id).
//
// A held deployment is refused: attach cancels the job it follows on ^C,
// which would take the deployment down (slurmbench down does that, on
// purpose). A run queued in a held deployment (run --in) whose runner
// died is followed there, as run --in would have: ^C withdraws the run,
// never the deployment.
func Attach(ctx context.Context, o Options, id slurm.JobID) (*Result, error) {
	o.defaults()
	pl := o.Plan
	r := &runState{o: o, plan: pl, res: &Result{RunDir: pl.RunDir, JobID: id, Adopted: true}}
	if pl.Serve {
		return r.res, exitcode.Errorf(exitcode.Config, "run %s is a held deployment (slurmbench up), not a run to attach to: `slurmbench runs show %s` shows it, `slurmbench run --in JOB` runs in it, `slurmbench down JOB` ends it", pl.RunID, pl.RunID)
	}
	cl, err := claimRunDir(ctx, pl, true)
	if err != nil {
		return r.res, exitcode.With(exitcode.Config, err)
	}
	defer cl.release()
	r.key = cl.journal.SubmitKey
	if held, ok := queuedIn(pl, cl.journal); ok && (id == 0 || id == held) {
		return r.attachQueued(ctx, held)
	}
	if id == 0 {
		jid, found, err := r.adopt(ctx, cl.journal)
		switch {
		case err != nil:
			return r.res, exitcode.With(exitcode.Submit, err)
		case !found:
			return r.res, exitcode.Errorf(exitcode.Config, "run %s has no job: nothing was submitted from %s (run it with slurmbench run --run-id %s)", pl.RunID, pl.RunDir, pl.RunID)
		}
		r.res.JobID = jid
	}
	r.progress("attached to job %d, run dir %s", r.res.JobID, pl.RunDir)
	r.submitted()
	return r.res, r.finish(ctx, r.follow(ctx))
}

// queuedIn reports the held job a run was queued in by run --in: its
// status names a job and no submit of its own was journaled.
func queuedIn(pl *plan.Plan, j rundir.Journal) (slurm.JobID, bool) {
	if j.SubmitKey != "" || j.JobID != "" {
		return 0, false
	}
	st, err := rundir.ReadStatus(pl.Layout.Status)
	if err != nil || st.JobID == "" {
		return 0, false
	}
	id, err := slurm.ParseJobID(st.JobID)
	return id, err == nil
}

// requestSeen reports whether held deployment root has run id's request,
// pending or taken.
func requestSeen(root, id string) bool {
	suffix := "-" + id + ".json"
	for _, dir := range []string{rundir.RequestsDir(root), filepath.Join(rundir.RequestsDir(root), rundir.TakenName)} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), suffix) && !strings.HasPrefix(e.Name(), ".") {
				return true
			}
		}
	}
	return false
}

// attachQueued follows a run queued in held job id to its end, then
// collects and stages as RunIn does.
func (r *runState) attachQueued(ctx context.Context, id slurm.JobID) (*Result, error) {
	r.res.JobID = id
	if out, err := rundir.ReadOutcome(r.plan.Layout.Outcome); err == nil {
		r.progress("run %s ended in held job %d: %s", r.plan.RunID, id, out.Result)
		return r.res, r.finish(ctx, r.judgeByOutcome(out))
	}
	h, err := FindHeld(ctx, r.o.Client, id)
	if err != nil {
		return r.res, err
	}
	if !requestSeen(h.Plan.RunDir, r.plan.RunID) {
		// The earlier runner died between writing the run's status and
		// queueing it: neither pending nor taken, so the deployment cannot
		// have it. Queue it now, once.
		if _, err := rundir.QueueRequest(h.Plan.RunDir, rundir.Request{RunID: r.plan.RunID, Plan: r.plan.PlanFile}); err != nil {
			return r.res, exitcode.With(exitcode.Submit, err)
		}
		r.progress("run %s had not reached held job %d's queue: queued it", r.plan.RunID, id)
	}
	r.progress("attached to run %s, queued in held deployment job %d, run dir %s", r.plan.RunID, id, r.plan.RunDir)
	r.submitted()
	return r.res, r.finish(ctx, r.followQueued(ctx, h))
}

// ReadPlan reads a run directory's plan.
func ReadPlan(runDir string) (*plan.Plan, error) {
	return plan.ReadPlan(rundir.PlanPath(runDir))
}
