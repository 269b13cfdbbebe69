package launch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/preflight"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// DoctorOptions are `doctor`'s: the profile (and a recipe) to check, and
// the probe job.
type DoctorOptions struct {
	IO
	Plan         PlanOptions
	Probe        bool
	ProbeTimeout time.Duration
}

// Doctor is `doctor`: the preflight checks of a profile, or of the run a
// recipe makes, one line each (or JSON), then how many failed. The exit
// code is the first failure's layer; the failed lines already say why.
func Doctor(ctx context.Context, o DoctorOptions) error {
	var pl *plan.Plan
	var prof *profile.Profile
	var err error
	if o.Plan.HasRecipe() {
		pl, prof, err = Plan(ctx, o.Plan)
	} else {
		prof, err = LoadProfileFrom(ctx, o.Plan.Source())
	}
	if err != nil {
		return err
	}
	if !o.JSON {
		if err := WriteSources(o.Stdout, prof); err != nil {
			return err
		}
	}
	start := time.Now()
	rep := preflight.Run(ctx, preflight.Options{
		Profile: prof, Plan: pl, Probe: o.Probe, ProbeTimeout: o.ProbeTimeout, Progress: o.Stderr,
	})
	elapsed := time.Since(start)
	if o.JSON {
		if err := WriteJSON(o.Stdout, rep); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(o.Stdout); err != nil {
			return err
		}
		fmt.Fprintf(o.Stdout, "%d checks, %d failed, in %s\n", len(rep.Checks), len(rep.Failed()), elapsed.Round(time.Millisecond))
	}
	if rep.OK() {
		return nil
	}
	// The failed lines above say it all; only the exit code is left.
	return exitcode.With(rep.ExitCode(), errors.New(""))
}
