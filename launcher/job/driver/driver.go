package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/tailbuf"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/job/health"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results/power"
	"github.com/slurmbench/slurmbench/slurm/hostlist"
)

// Options configure a driver run. Zero values take the defaults noted.
type Options struct {
	PlanFile string
	JobID    string // SLURM_JOB_ID
	NodeList string // SLURM_JOB_NODELIST
	// Srun is the srun program (default "srun").
	Srun string
	// Lookup resolves a hostname (default net.LookupHost).
	Lookup func(string) ([]string, error)
	// RunNodeAddr runs the step that asks each node its address (default:
	// srun); used when the plan names a network interface.
	RunNodeAddr func(ctx context.Context, argv []string) ([]byte, error)
	// Getenv supplies passthrough variables (default os.Getenv).
	Getenv func(string) string
	// Log receives the driver's own timestamped lines (default os.Stderr).
	Log io.Writer
	// StopGrace is how long a stopped step gets between SIGTERM and
	// SIGKILL (default 10 s, srtctl's).
	StopGrace time.Duration
	// ReadyTimeout bounds the wait for infra ports (default 300 s, srtctl's).
	ReadyTimeout time.Duration
	// PrepareTimeout bounds each step that runs before the workers, the
	// model pre-download (default 1 h, srtctl's).
	PrepareTimeout time.Duration
	// CleanWait bounds the proof that a held deployment's nodes are clean
	// (stopped steps exited, their ports free) before other servers
	// start in place (default 60 s).
	CleanWait  time.Duration
	HTTPClient *http.Client
	// ProducerVersion and ProducerCommit identify this binary in the power
	// package's manifest.
	ProducerVersion, ProducerCommit string
}

// Result is the driver's outcome plus the exit code the job should end with.
type Result struct {
	Outcome rundir.Outcome
	// ExitCode is the layer that failed; it is slurmbench's own exit code,
	// so `sacct` alone tells where a run failed.
	ExitCode exitcode.Code
}

type step struct {
	proc  plan.Process
	host  string
	cmd   *exec.Cmd
	start time.Time
	end   time.Time
	code  int
	err   error
	// done is closed once the step's srun has exited and end, code and err
	// are set.
	done chan struct{}
	// status is the status file of the run that started the step.
	status *statusFile
	// stopping is set (under driver.mu) when the driver stops the step: its
	// exit is then expected and not reported on driver.exited.
	stopping bool
	// srunOut keeps the tail of srun's own output (the tasks' goes to the
	// step's log): where srun says Slurm is ending the job.
	srunOut *tailbuf.Buffer
}

type driver struct {
	opts Options
	// plan is the plan being driven: the job's own, or in a held
	// deployment the queued run being run now; status and start are its.
	plan   *plan.Plan
	alloc  Allocation
	status *statusFile
	log    io.Writer // guarded by logMu
	logMu  sync.Mutex
	start  time.Time

	mu    sync.Mutex
	steps map[string]*step
	// exited reports every step that exited unless the driver stopped it.
	exited chan *step

	// power is the run's power collection, nil when not collecting.
	power *power.Session

	// keep names the processes a restart in place kept running (or
	// already ran): startServers does not start them again.
	keep map[string]bool
	// heldRun is how a held deployment serves the run being driven
	// (written into its outcome).
	heldRun *rundir.HeldRun
	// teardown is the plan whose host_setup teardown runs when the job
	// ends (nil: none armed).
	teardown *plan.Plan
}

// Run drives the plan to its end and returns the outcome; the outcome is
// also written to the plan's outcome.json before Run returns.
func Run(ctx context.Context, opts Options) (Result, error) {
	if opts.Srun == "" {
		opts.Srun = "srun"
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.StopGrace == 0 {
		opts.StopGrace = 10 * time.Second
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 300 * time.Second
	}
	if opts.PrepareTimeout == 0 {
		opts.PrepareTimeout = time.Hour
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{Proxy: nil}}
	}
	pl, err := plan.ReadPlan(opts.PlanFile)
	if err != nil {
		return Result{ExitCode: exitcode.Internal}, err
	}
	hosts, err := hostlist.Expand(opts.NodeList)
	if err != nil {
		return Result{ExitCode: exitcode.Internal}, fmt.Errorf("SLURM_JOB_NODELIST: %w", err)
	}
	if len(hosts) < pl.Nodes {
		return Result{ExitCode: exitcode.Internal}, fmt.Errorf("allocation has %d nodes (%s), the plan needs %d", len(hosts), opts.NodeList, pl.Nodes)
	}
	d := &driver{
		opts: opts, plan: pl, log: opts.Log, start: time.Now().UTC(),
		alloc:  Allocation{JobID: opts.JobID, Hosts: hosts, IPs: resolveIPs(hosts, opts.Lookup)},
		status: &statusFile{path: pl.Layout.Status},
		steps:  map[string]*step{},
		// Every step reports at most one exit; a held deployment starts
		// steps for many runs, and a send must never block a step's waiter.
		exited: make(chan *step, exitedBuffer),
	}
	d.learnAddrs(ctx)
	if pl.Serve {
		return d.serve(ctx), nil
	}
	return d.run(ctx), nil
}

// exitedBuffer bounds the exits reported and not yet read.
const exitedBuffer = 4096

func (d *driver) logf(format string, args ...any) {
	d.logMu.Lock()
	defer d.logMu.Unlock()
	fmt.Fprintf(d.log, "%s driver: %s\n", time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), fmt.Sprintf(format, args...))
}

func (d *driver) setPhase(phase rundir.Phase) {
	d.logf("phase %s", phase)
	d.status.update(func(s *rundir.Status) { s.Phase = phase })
}

// failure is how a run ends early.
type failure struct {
	class diagnose.Class
	step  *step
	msg   string
	code  exitcode.Code
	// slurmLine is Slurm's line that the job or step was being ended,
	// when that is why the step died: the outcome's first error.
	slurmLine string
}

func (f *failure) Error() string { return f.msg }

func (d *driver) run(ctx context.Context) Result {
	pl := d.plan
	d.initStatus()
	d.logf("job %s on %v (%v); plan %s, %d processes", d.alloc.JobID, d.alloc.Hosts, d.alloc.IPs, pl.Name, len(pl.Processes))
	if err := os.MkdirAll(pl.Layout.Steps, 0o755); err != nil {
		return d.finish(ctx, rundir.PhaseStarting, &failure{class: diagnose.Unknown, msg: err.Error(), code: exitcode.Internal})
	}

	phase := rundir.PhaseInfra
	err := d.runPhases(ctx, &phase, nil)
	return d.finish(ctx, phase, d.failureOf(ctx, err))
}

// failureOf turns how the phases ended into the run's failure (nil:
// success). The power package is finalized first, while every step still
// runs, so the last window is bracketed by samples.
func (d *driver) failureOf(ctx context.Context, err error) *failure {
	if tf := d.finishTelemetry(ctx.Err() != nil); tf != nil && err == nil {
		err = tf
	}
	if err == nil {
		return nil
	}
	var f *failure
	if !errors.As(err, &f) {
		if ctx.Err() != nil {
			f = &failure{class: diagnose.Cancelled, msg: "cancelled: " + context.Cause(ctx).Error(), code: exitcode.Interrupted}
		} else {
			f = &failure{class: diagnose.Unknown, msg: err.Error(), code: exitcode.Internal}
		}
	}
	if f.class != diagnose.Cancelled && f.step != nil {
		if line, ok := f.step.slurmEnded(); ok {
			// Slurm said it is ending the job (or the step): the step died
			// of the cancellation, however late the driver's own SIGTERM.
			return &failure{class: diagnose.Cancelled, step: f.step, code: exitcode.Interrupted, slurmLine: line,
				msg: fmt.Sprintf("cancelled by Slurm: %s (%s)", line, f.msg)}
		}
	}
	if f.class != diagnose.Cancelled && cancelledWithin(ctx, cancelGrace) {
		// Cancelling a job signals its steps and this driver at once; a
		// step often dies first (or its srun finds the job gone) and the
		// driver's own SIGTERM lands a moment later. That failure is the
		// cancellation, not an engine fault.
		f = &failure{class: diagnose.Cancelled, msg: "cancelled: " + context.Cause(ctx).Error() + " (" + f.msg + ")", code: exitcode.Interrupted}
	}
	return f
}

// cancelGrace is how long after a step failure with no word from Slurm the
// driver waits to learn that the job itself is being cancelled.
const cancelGrace = time.Second

// srunTailBytes bounds the srun output a step keeps for diagnosis; srun's
// own lines are few (the tasks' output goes to the step's log).
const srunTailBytes = 8 << 10

// srunPipeDelay bounds how long an exited srun's output pipe may stay open.
const srunPipeDelay = 5 * time.Second

// slurmEnded finds Slurm's word that it is ending the step's job or the
// step itself: in srun's own output, or in the step's log (where
// slurmstepd's "*** STEP ... CANCELLED AT ... ***" goes with --output).
func (s *step) slurmEnded() (string, bool) {
	if s.srunOut != nil {
		if line, ok := diagnose.SlurmEnded(s.srunOut.Lines(0)); ok {
			return line, true
		}
	}
	lines, err := diagnose.Tail(s.proc.Log, 50)
	if err != nil {
		return "", false
	}
	return diagnose.SlurmEnded(lines)
}

func cancelledWithin(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
	}
}

// byRole lists the plan's processes of the given roles, in plan order.
func (d *driver) byRole(roles ...plan.Role) []plan.Process {
	var out []plan.Process
	for _, p := range d.plan.Processes {
		for _, r := range roles {
			if p.Role == r {
				out = append(out, p)
			}
		}
	}
	return out
}

// runPhases runs a whole run: the servers, telemetry, the health gate, the
// benchmark and the eval. phase says how far it got; healthy, if not nil,
// is set once the health gate passed.
func (d *driver) runPhases(ctx context.Context, phase *rundir.Phase, healthy *bool) error {
	return d.runPhasesTimed(ctx, phase, healthy, nil)
}

// runPhasesTimed is runPhases calling onHealthy once the health gate
// passed (a held deployment times its restarts by it).
func (d *driver) runPhasesTimed(ctx context.Context, phase *rundir.Phase, healthy *bool, onHealthy func()) error {
	if err := d.startServers(ctx, phase); err != nil {
		return err
	}
	if err := d.startTelemetry(ctx); err != nil {
		return err
	}
	*phase = rundir.PhaseHealth
	d.setPhase(rundir.PhaseHealth)
	if err := d.healthGate(ctx); err != nil {
		return err
	}
	if healthy != nil {
		*healthy = true
	}
	if onHealthy != nil {
		onHealthy()
	}
	if err := d.startServices(ctx, plan.StartAfterFrontend); err != nil {
		return err
	}
	if err := d.awaitTelemetry(ctx); err != nil {
		return err
	}
	return d.measure(ctx, phase)
}

// startServers starts infra, runs the prepare steps to their end, then
// starts workers and routers, in that order.
func (d *driver) startServers(ctx context.Context, phase *rundir.Phase) error {
	byRole := d.byRole
	// srtctl's stage 0: the bare hosts, before anything else.
	if err := d.runHostSetup(ctx, phase); err != nil {
		return err
	}
	// A node-local image first: nothing starts on a node before its copy.
	if err := d.runImageImports(ctx, phase); err != nil {
		return err
	}
	// Infra first, each checked ready before anything depends on it.
	*phase = rundir.PhaseInfra
	if infra := byRole(plan.RoleInfra); len(infra) > 0 {
		d.setPhase(rundir.PhaseInfra)
		for _, p := range infra {
			if d.keep[p.Name] {
				d.logf("%s: kept from the held servers", p.Name)
				continue
			}
			if err := d.startStep(ctx, p); err != nil {
				return err
			}
		}
		for _, p := range infra {
			if p.Ready != nil {
				if err := d.waitTCP(ctx, p); err != nil {
					return err
				}
			}
		}
	}
	if err := d.runPrepare(ctx, phase); err != nil {
		return err
	}
	*phase = rundir.PhaseWorkers
	d.setPhase(rundir.PhaseWorkers)
	// Services the workers connect to at startup come first.
	if err := d.startServices(ctx, plan.StartBeforeWorkers); err != nil {
		return err
	}
	if err := makeProfileDirs(d.plan); err != nil {
		return err
	}
	if err := d.startWorkers(ctx); err != nil {
		return err
	}
	*phase = rundir.PhaseFrontend
	d.setPhase(rundir.PhaseFrontend)
	for _, p := range byRole(plan.RoleNginx, plan.RoleFrontend) {
		if err := d.waitWorkersServe(ctx, p); err != nil { // after.go
			return err
		}
		if err := d.startStep(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// measure runs the benchmark and the eval against the servers.
func (d *driver) measure(ctx context.Context, phase *rundir.Phase) error {
	byRole := d.byRole
	if p := byRole(plan.RoleBenchmark); len(p) > 0 {
		*phase = rundir.PhaseBenchmark
		d.setPhase(rundir.PhaseBenchmark)
		if profilesTriggered(d.plan) {
			d.startProfiles(ctx)
		}
		err := d.runToEnd(ctx, p[0], diagnose.BenchmarkInvalid, exitcode.Benchmark)
		if profilesTriggered(d.plan) {
			// Stop even when the run is being cancelled, bounded.
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), profileRequestTimeout)
			d.stopProfiles(sctx)
			cancel()
		}
		if err != nil {
			return err
		}
	}
	if p := byRole(plan.RoleEval); len(p) > 0 {
		*phase = rundir.PhaseEval
		d.setPhase(rundir.PhaseEval)
		if err := d.runToEnd(ctx, p[0], diagnose.EvalFailed, exitcode.Eval); err != nil {
			return err
		}
	}
	*phase = rundir.PhaseDone
	return nil
}

// startStep writes the process's spec and starts its srun.
func (d *driver) startStep(ctx context.Context, p plan.Process) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	st, err := BuildStep(d.plan, p, d.alloc, d.opts.Getenv)
	if err != nil {
		return err
	}
	if err := WriteSpec(d.plan.Layout.StepSpec(p.Name), st.Spec); err != nil {
		return fmt.Errorf("process %s: writing spec: %w", p.Name, err)
	}
	for path, content := range st.Files {
		// Several processes may carry one file (nginx.conf, an engine
		// config); the content is the same, so rewriting it is harmless.
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("process %s: %w", p.Name, err)
		}
		if err := atomicfile.WriteFile(path, []byte(content), atomicfile.Options{Overwrite: true, Perm: 0o644}); err != nil {
			return fmt.Errorf("process %s: writing %s: %w", p.Name, path, err)
		}
	}
	argv := append([]string{d.opts.Srun}, st.Argv[1:]...)
	// Not CommandContext: a cancelled run stops its steps itself, SIGTERM to
	// the process group and SIGKILL after StopGrace (stopAll), never a bare kill.
	cmd := exec.Command(argv[0], argv[1:]...) //nolint:noctx // see above
	cmd.Env = append(os.Environ(), st.Env...)
	s := &step{proc: p, host: d.alloc.Hosts[p.Nodes[0]], cmd: cmd, start: time.Now().UTC(), done: make(chan struct{}), status: d.status,
		srunOut: tailbuf.New(srunTailBytes)}
	// The job's log, never a queued run's: a server outlives the run that
	// started it, and srun must not lose its stdout when that run's log
	// closes. One writer for both streams, so one goroutine copies them.
	out := io.MultiWriter(d.opts.Log, s.srunOut)
	cmd.Stdout, cmd.Stderr = out, out
	// Bounds Wait should anything srun started keep the pipe open.
	cmd.WaitDelay = srunPipeDelay
	// srun gets its own process group, so a terminal's ^C reaches the
	// driver alone and the driver decides how steps stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The full srun line is kept beside the spec; the log names the program.
	_ = os.WriteFile(strings.TrimSuffix(d.plan.Layout.StepSpec(p.Name), ".json")+".srun.json", []byte(quote(argv)+"\n"), 0o644)
	d.logf("start %s on %s (%s): %s", p.Name, s.host, runtimeOf(d.plan, p), plan.QuoteArgv(st.Spec.Argv))
	if err := cmd.Start(); err != nil {
		return &failure{class: diagnose.Unknown, step: s, msg: fmt.Sprintf("starting %s: %v", p.Name, err), code: exitcode.Engine}
	}
	d.mu.Lock()
	d.steps[p.Name] = s
	d.mu.Unlock()
	s.setState(func(ps *rundir.ProcessStatus) { ps.State, ps.Started = "running", &s.start })
	go func() {
		err := cmd.Wait()
		s.end = time.Now().UTC()
		s.err = err
		s.code = exitCode(cmd.ProcessState, err)
		d.mu.Lock()
		stopped := s.stopping
		d.mu.Unlock()
		state := "exited"
		if stopped {
			state = "stopped"
		}
		code := s.code
		s.setState(func(ps *rundir.ProcessStatus) { ps.State, ps.ExitCode, ps.Ended = state, &code, &s.end })
		close(s.done)
		switch {
		case stopped:
			// The stopper waits on done.
		case p.Role == plan.RoleTelemetry:
			// An exporter is never critical: its exit invalidates the
			// power package, not the run.
			d.telemetryExited(s)
		case p.Role == plan.RoleHostTeardown:
			// The teardown waits on done; the job is ending.
			d.logf("%s on %s exited with code %d", p.Name, s.host, s.code)
		case p.Role == plan.RoleService && !p.Critical:
			// srtctl: a dead non-critical sidecar costs its own log, not
			// the run (its readiness wait watches done itself).
			d.logf("service %s on %s exited with code %d (not critical: the run goes on)", p.Name, s.host, s.code)
		default:
			d.logf("%s on %s exited with code %d", p.Name, s.host, s.code)
			d.exited <- s
		}
	}()
	return nil
}

func exitCode(ps *os.ProcessState, err error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// setState updates the step's line in the status of the run that started
// it (in a held deployment, a later run may be the one being driven).
func (s *step) setState(fn func(*rundir.ProcessStatus)) {
	name := s.proc.Name
	s.status.update(func(s *rundir.Status) {
		for i := range s.Processes {
			if s.Processes[i].Name == name {
				fn(&s.Processes[i])
			}
		}
	})
}

// died turns an unexpected step exit into a failure, classified from its log.
func (d *driver) died(s *step, fallback diagnose.Class, code exitcode.Code, what string) *failure {
	return &failure{class: fallback, step: s, code: code,
		msg: fmt.Sprintf("%s %s on %s exited with code %d %s", s.proc.Role, s.proc.Name, s.host, s.code, what)}
}

// waitTCP waits for an infra port while watching every step.
func (d *driver) waitTCP(ctx context.Context, p plan.Process) error {
	addr := net.JoinHostPort(d.alloc.IPs[p.Ready.Node], strconv.Itoa(p.Ready.Port))
	deadline := time.Now().Add(d.opts.ReadyTimeout)
	for {
		conn, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			conn.Close()
			d.logf("%s ready at %s", p.Name, addr)
			return nil
		}
		if time.Now().After(deadline) {
			return &failure{class: diagnose.HealthDeadline, step: d.stepOf(p.Name), code: exitcode.Health,
				msg: fmt.Sprintf("%s did not open %s within %s", p.Name, addr, d.opts.ReadyTimeout)}
		}
		select {
		case s := <-d.exited:
			return d.died(s, diagnose.ExitedBeforeHealthy, exitcode.Engine, "before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func (d *driver) stepOf(name string) *step {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.steps[name]
}

// watchExits ends a wait at once when a step exits: the exit arrives on
// abort. stop ends the watch and returns the step that exited (nil:
// none), settled from then on; a caller whose wait passed all the same
// puts it back on d.exited, so the next phase sees it.
func (d *driver) watchExits(ctx context.Context) (abort <-chan error, stop func() *step) {
	ch := make(chan error, 1)
	ctx, cancel := context.WithCancel(ctx)
	var dead *step
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case s := <-d.exited:
			dead = s
			ch <- fmt.Errorf("%s exited with code %d", s.proc.Name, s.code)
		case <-ctx.Done():
		}
	}()
	return ch, func() *step { cancel(); <-done; return dead }
}

// healthGate polls the frontend; any step exiting ends the wait at once.
func (d *driver) healthGate(ctx context.Context) error {
	h := d.plan.Health
	base := d.endpoint(d.plan)
	d.status.update(func(s *rundir.Status) { s.FrontendURL = base })
	abort, stopWatch := d.watchExits(ctx)
	want := health.Expect{Prefill: h.Prefill, Decode: h.Decode}
	last := time.Time{}
	seen, err := health.Wait(ctx, health.WaitOptions{
		Client: d.opts.HTTPClient, BaseURL: base, Kind: health.Kind(h.Kind), Expect: want,
		Interval: time.Duration(h.IntervalSeconds) * time.Second, MaxAttempts: h.MaxAttempts, Abort: abort,
		OnPoll: func(attempt int, s health.Seen, err error) {
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			d.status.update(func(st *rundir.Status) {
				st.Health = &rundir.HealthStatus{Attempt: attempt, MaxAttempts: h.MaxAttempts, PrefillSeen: s.Prefill, DecodeSeen: s.Decode,
					PrefillWant: h.Prefill, DecodeWant: h.Decode, LastError: msg, Ready: s.Ready(want)}
			})
			if time.Since(last) >= 10*time.Second || s.Ready(want) {
				last = time.Now()
				d.logf("health %d/%d: prefill %d/%d, decode %d/%d %s", attempt, h.MaxAttempts, s.Prefill, h.Prefill, s.Decode, h.Decode, msg)
			}
		},
	})
	dead := stopWatch()
	if err == nil && dead != nil {
		// The gate passed as a step exited: the exit is not lost, the next
		// phase sees it.
		d.exited <- dead
	}
	switch {
	case err == nil:
		d.logf("health gate passed: prefill %d, decode %d at %s", seen.Prefill, seen.Decode, base)
		return d.workerGate(ctx)
	case dead != nil:
		return d.died(dead, diagnose.ExitedBeforeHealthy, exitcode.Engine, "before the workers were healthy")
	case errors.Is(err, health.ErrDeadline):
		return &failure{class: diagnose.HealthDeadline, code: exitcode.Health,
			msg: fmt.Sprintf("health deadline passed: %v (saw prefill %d/%d, decode %d/%d after %d × %ds)",
				err, seen.Prefill, h.Prefill, seen.Decode, h.Decode, h.MaxAttempts, h.IntervalSeconds)}
	default:
		return err
	}
}

// runToEnd runs a finite step (benchmark, eval) to its exit while watching
// the servers; a server that exits meanwhile ends the run.
func (d *driver) runToEnd(ctx context.Context, p plan.Process, class diagnose.Class, code exitcode.Code) error {
	if err := d.startStep(ctx, p); err != nil {
		return err
	}
	for {
		select {
		case s := <-d.exited:
			if s.proc.Name != p.Name {
				return d.died(s, diagnose.DiedAfterHealthy, exitcode.Engine, "after the health gate")
			}
			if s.code != 0 {
				// A benchmark fails when a server under it dies, and srun
				// reports the two exits in either order: the server's
				// death is the cause.
				if dead := d.exitWithin(serverExitGrace); dead != nil {
					return d.died(dead, diagnose.DiedAfterHealthy, exitcode.Engine, "after the health gate")
				}
				return d.died(s, class, code, "")
			}
			d.logf("%s finished", p.Name)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// serverExitGrace is how long after a failed benchmark or eval step the
// driver waits for a server's exit to be reported.
const serverExitGrace = 2 * time.Second

// exitWithin returns a step that exits within d, or nil.
func (d *driver) exitWithin(wait time.Duration) *step {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s := <-d.exited:
		return s
	case <-t.C:
		return nil
	}
}

// stopAll ends every running step.
func (d *driver) stopAll() { d.stopSteps(func(*step) bool { return true }) }

// stopSteps ends the running steps that which selects: SIGTERM to srun
// (which cancels the step and signals its tasks), then SIGKILL after the
// grace period. Their exits are expected and not reported on exited.
func (d *driver) stopSteps(which func(*step) bool) {
	d.mu.Lock()
	var running []*step
	for _, s := range d.steps {
		select {
		case <-s.done:
			continue
		default:
		}
		if which(s) {
			s.stopping = true
			running = append(running, s)
		}
	}
	d.mu.Unlock()
	if len(running) == 0 {
		return
	}
	d.logf("stopping %d steps (srun then reports each task as Killed: expected)", len(running))
	for _, s := range running {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, s := range running {
		select {
		case <-s.done:
			continue
		case <-time.After(d.opts.StopGrace):
		}
		for _, s := range running {
			select {
			case <-s.done:
			default:
				_ = s.cmd.Process.Signal(syscall.SIGKILL)
			}
		}
		<-s.done
	}
}

func (d *driver) finish(ctx context.Context, phase rundir.Phase, f *failure) Result {
	d.setPhase(rundir.PhaseStopping)
	d.stopAll()
	// After every step stopped, so the GPUs are idle before the hosts
	// are reverted.
	d.runHostTeardown(ctx)
	return d.conclude(phase, f)
}

// conclude writes the outcome of the plan being driven, once its steps are
// stopped, and sets the final phase.
func (d *driver) conclude(phase rundir.Phase, f *failure) Result {
	o := rundir.Outcome{Result: rundir.Succeeded, Phase: phase, JobID: d.alloc.JobID, Started: d.start, Held: d.heldRun}
	res := Result{ExitCode: exitcode.OK}
	if f != nil {
		o.Result, o.Class, o.Message = rundir.Failed, f.class, f.msg
		if f.class == diagnose.Cancelled {
			o.Result = rundir.Cancelled
		}
		res.ExitCode = f.code
		if s := f.step; s != nil {
			code := s.code
			o.Process, o.Host, o.Log = s.proc.Name, s.host, s.proc.Log
			if !s.end.IsZero() {
				o.ExitCode = &code
			}
			// A traceback can sit far above the shutdown noise: classify a
			// long tail, keep the last 50 lines for people.
			if lines, err := diagnose.Tail(s.proc.Log, 500); err == nil {
				o.LastLines = lines
				if len(lines) > 50 {
					o.LastLines = lines[len(lines)-50:]
				}
				diag := diagnose.Classify(engineLines(lines))
				// A cancelled step's log may show its peers dying (NCCL,
				// a broken connection): the cancellation stays the class.
				if diag.Class != diagnose.Unknown && f.class != diagnose.Cancelled {
					o.Class = diag.Class
				}
				o.FirstError = diag.FirstError
				o.RuntimeLog = diagnose.RuntimeLog(lines)
				if rl, ok := ociStartFailure(d.plan, s.proc, lines); ok && f.class != diagnose.Cancelled {
					o.Class, o.FirstError, o.RuntimeLog = diagnose.ContainerRuntime, rl[0], rl
				}
			}
		}
		if f.slurmLine != "" {
			o.FirstError = f.slurmLine
		}
		o.Hint = o.Class.Hint()
		d.logf("FAILED in phase %s: %s [%s] %s", phase, o.Message, o.Class, o.FirstError)
	}
	o.Ended = time.Now().UTC()
	if err := rundir.WriteOutcome(d.plan.Layout.Outcome, o); err != nil {
		d.logf("writing outcome: %v", err)
	}
	final := rundir.PhaseDone
	if f != nil {
		final = rundir.PhaseFailed
	}
	d.setPhase(final)
	res.Outcome = o
	return res
}

func quote(argv []string) string {
	b, _ := json.Marshal(argv)
	return string(b)
}

// engineLines drops slurmbench's own exec line (it quotes the argv, which
// may carry fault text) so only the program's output is classified.
func engineLines(lines []string) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if !strings.HasPrefix(l, "slurmbench exec: ") {
			out = append(out, l)
		}
	}
	return out
}

func runtimeOf(pl *plan.Plan, p plan.Process) string {
	if !p.Container || pl.Runtime == profile.RuntimeNone {
		return "host"
	}
	return string(pl.Runtime)
}
