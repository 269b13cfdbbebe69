package driver

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// runPrepare runs the plan's prepare steps (srtctl's pre-worker steps: the
// model pre-download, or the model staging on every worker node) once
// infra is up and before any worker starts, as srtctl's do_sweep does: all
// at once, each to its exit. A step that fails, or the steps outlasting
// PrepareTimeout, end the run before the workers start, the step's log
// classified. (srtctl fails the job when a staging step fails; when the
// pre-download fails or runs past its hour it only warns and starts the
// workers, which then each download the model at once, the contention the
// step exists to prevent, and fail later with the cause buried in every
// worker's log.)
func (d *driver) runPrepare(ctx context.Context, phase *rundir.Phase) error {
	steps := d.notRunYet(d.byRole(plan.RolePrepare))
	if len(steps) == 0 {
		return nil
	}
	*phase = rundir.PhasePrepare
	d.setPhase(rundir.PhasePrepare)
	return d.runToExit(ctx, steps, diagnose.PrepareFailed, exitcode.Engine, "before any worker started")
}

// runImageImports runs the plan's image steps (Image.PerNode: the image
// imported into each node's own squash cache) before anything else starts,
// all at once, each to its exit; one that fails ends the run, an image
// failure (exit 3), naming its node and log.
func (d *driver) runImageImports(ctx context.Context, phase *rundir.Phase) error {
	steps := d.notRunYet(d.byRole(plan.RoleImage))
	if len(steps) == 0 {
		return nil
	}
	*phase = rundir.PhasePrepare
	d.setPhase(rundir.PhasePrepare)
	return d.runToExit(ctx, steps, diagnose.ImageImportFailed, exitcode.Image, "before anything started on the nodes")
}

// runToExit starts steps together and waits for each to exit 0, within
// PrepareTimeout; a failing one ends the run with class and code.
func (d *driver) runToExit(ctx context.Context, steps []plan.Process, class diagnose.Class, code exitcode.Code, when string) error {
	pending := map[string]bool{}
	for _, p := range steps {
		if err := d.startStep(ctx, p); err != nil {
			return err
		}
		pending[p.Name] = true
	}
	limit := time.NewTimer(d.opts.PrepareTimeout)
	defer limit.Stop()
	for len(pending) > 0 {
		select {
		case s := <-d.exited:
			if !pending[s.proc.Name] {
				// Infra (NATS, etcd, the Mooncake master) died meanwhile.
				return d.died(s, diagnose.ExitedBeforeHealthy, exitcode.Engine, "while the steps before the workers ran")
			}
			delete(pending, s.proc.Name)
			if s.code != 0 {
				return d.died(s, class, code, when)
			}
			d.logf("%s finished", s.proc.Name)
		case <-limit.C:
			names := make([]string, 0, len(pending))
			for n := range pending {
				names = append(names, n)
			}
			slices.Sort(names)
			s := d.stepOf(names[0])
			d.stopSteps(func(x *step) bool { return pending[x.proc.Name] })
			return &failure{class: class, step: s, code: code,
				msg: fmt.Sprintf("%s %s on %s (of %v) did not finish within %s; stopped %s", s.proc.Role, s.proc.Name, s.host, names, d.opts.PrepareTimeout, when)}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// notRunYet are the steps of ps a restart in place has not run already
// (the held servers' ones are logged and left out).
func (d *driver) notRunYet(ps []plan.Process) []plan.Process {
	var steps []plan.Process
	for _, p := range ps {
		if d.keep[p.Name] {
			d.logf("%s: already run for the held servers", p.Name)
			continue
		}
		steps = append(steps, p)
	}
	return steps
}
