package driver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// hostFailure is one node whose host steps failed.
type hostFailure struct {
	step *step
	why  string
}

func (f hostFailure) String() string {
	return fmt.Sprintf("%s (%s; %s)", f.step.host, f.why, f.step.proc.Log)
}

// runHostSetup runs the plan's host_setup steps, one per node on its bare
// host, all at once and before anything else of the job starts, as
// srtctl's do_sweep runs them (do_sweep.py@01aebde8 _run_host_setup, its
// stage 0): a node whose commands exit non-zero, or outlast
// timeout_seconds (a command waiting for input, such as a sudo that
// prompts, hangs until then and is killed), fails the run with class
// host_setup_failed naming every such node, unless ignore_failure, which
// logs them and goes on. Reaching this stage arms the teardown, which then
// runs at the end whatever happens.
func (d *driver) runHostSetup(ctx context.Context, phase *rundir.Phase) error {
	hs := d.plan.HostSetup
	if hs == nil {
		return nil
	}
	d.armTeardown(d.plan)
	steps := d.notRunYet(d.plan.HostSteps(plan.RoleHostSetup))
	if len(steps) == 0 {
		return nil
	}
	*phase = rundir.PhaseHostSetup
	d.setPhase(rundir.PhaseHostSetup)
	d.logf("host_setup (%s): %d node(s), at most %ds each", hs.Source, len(steps), hs.TimeoutSeconds)
	pending := map[string]bool{}
	for _, p := range steps {
		if err := d.startStep(ctx, p); err != nil {
			return err
		}
		pending[p.Name] = true
	}
	failed := d.awaitHostSteps(ctx, pending, time.Duration(hs.TimeoutSeconds)*time.Second)
	if err := ctx.Err(); err != nil {
		return err
	}
	if failed.other != nil {
		// A held server (infra kept from the last run) died meanwhile.
		return d.died(failed.other, diagnose.ExitedBeforeHealthy, exitcode.Engine, "while the host_setup steps ran")
	}
	if len(failed.nodes) == 0 {
		d.logf("host_setup complete on %d node(s)", len(steps))
		return nil
	}
	list := joinFailures(failed.nodes)
	if hs.IgnoreFailure {
		d.logf("host_setup failed on %s (ignore_failure: true, continuing)", list)
		return nil
	}
	return &failure{class: diagnose.HostSetupFailed, step: failed.nodes[0].step, code: exitcode.Engine,
		msg: fmt.Sprintf("host_setup failed on %d of %d node(s): %s; stopped before anything else started", len(failed.nodes), len(steps), list)}
}

// hostResult is how a set of host steps ended: the nodes that failed, or
// another step's exit that interrupted the wait.
type hostResult struct {
	nodes []hostFailure
	other *step
}

// awaitHostSteps waits for the pending steps to exit, within limit; steps
// still running then are stopped and count as failed.
func (d *driver) awaitHostSteps(ctx context.Context, pending map[string]bool, limit time.Duration) hostResult {
	var res hostResult
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for len(pending) > 0 {
		select {
		case s := <-d.exited:
			if !pending[s.proc.Name] {
				res.other = s
				d.stopSteps(func(x *step) bool { return pending[x.proc.Name] })
				return res
			}
			delete(pending, s.proc.Name)
			if s.code != 0 {
				res.nodes = append(res.nodes, hostFailure{s, fmt.Sprintf("exit %d", s.code)})
				continue
			}
			d.logf("%s on %s finished", s.proc.Name, s.host)
		case <-timer.C:
			names := make([]string, 0, len(pending))
			for n := range pending {
				names = append(names, n)
			}
			slices.Sort(names)
			d.stopSteps(func(x *step) bool { return pending[x.proc.Name] })
			for _, n := range names {
				res.nodes = append(res.nodes, hostFailure{d.stepOf(n), fmt.Sprintf("timed out after %s", limit)})
			}
			return res
		case <-ctx.Done():
			d.stopSteps(func(x *step) bool { return pending[x.proc.Name] })
			return res
		}
	}
	return res
}

func joinFailures(fs []hostFailure) string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return strings.Join(out, ", ")
}

// armTeardown records the plan whose teardown runs when the job ends:
// the first to reach host_setup (a held deployment's later runs keep the
// hosts as that one left them).
func (d *driver) armTeardown(pl *plan.Plan) {
	if d.teardown == nil {
		d.teardown = pl
	}
}

// runHostTeardown undoes host_setup once every step has stopped, on the
// way out of every job that reached host_setup, failed and cancelled ones
// too (do_sweep.py@01aebde8 _run_host_teardown, after registry.cleanup):
// state such as locked GPU clocks outlives the allocation. It never
// changes the outcome: a failure is logged, naming the nodes that may be
// left modified. It runs under its own deadline (timeout_seconds), not
// ctx's cancellation: the job's context is cancelled by then when the job
// is, and the hosts still need reverting.
func (d *driver) runHostTeardown(ctx context.Context) {
	pl := d.teardown
	if pl == nil || pl.HostSetup == nil {
		return
	}
	steps := pl.HostSteps(plan.RoleHostTeardown)
	if len(steps) == 0 {
		return
	}
	d.teardown = nil
	limit := time.Duration(pl.HostSetup.TimeoutSeconds) * time.Second
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
	defer cancel()
	d.logf("host_setup teardown: %d node(s), at most %s", len(steps), limit)
	var started []*step
	var failed []hostFailure
	for _, p := range steps {
		if err := d.startStep(ctx, p); err != nil {
			d.logf("host_setup teardown: %s: %v", p.Name, err)
			continue
		}
		started = append(started, d.stepOf(p.Name))
	}
	for _, s := range started {
		select {
		case <-s.done:
			if s.code != 0 {
				failed = append(failed, hostFailure{s, fmt.Sprintf("exit %d", s.code)})
			}
		case <-ctx.Done():
			d.stopSteps(func(x *step) bool { return x == s })
			failed = append(failed, hostFailure{s, fmt.Sprintf("timed out after %s", limit)})
		}
	}
	if len(failed) > 0 {
		d.logf("host_setup teardown failed on %s: those nodes may be left in a modified state", joinFailures(failed))
		return
	}
	d.logf("host_setup teardown complete on %d node(s)", len(started))
}
