package endpoint

import (
	"context"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/job/steps"
)

// BenchCommandOptions are `bench`'s: against an endpoint (URL mode, when
// URL.URLBench.URL is set) or a plan's step inside the allocation.
type BenchCommandOptions struct {
	URL  BenchOptions
	Step steps.BenchCommandOptions
}

// BenchCommand is `bench`: the URL mode's pipeline, or the plan's
// benchmark step; a mix of the two modes' flags is refused.
func BenchCommand(ctx context.Context, o BenchCommandOptions) error {
	if o.URL.URLBench.URL == "" {
		return steps.BenchCommand(ctx, o.Step)
	}
	if err := oneMode(o.Step.PlanFile, o.Step.Frontend); err != nil {
		return err
	}
	return Bench(ctx, o.URL)
}

// EvalCommandOptions are `eval`'s, as BenchCommandOptions.
type EvalCommandOptions struct {
	URL  EvalOptions
	Step steps.EvalCommandOptions
}

// EvalCommand is `eval`: the URL mode, or the plan's eval step.
func EvalCommand(ctx context.Context, o EvalCommandOptions) error {
	if o.URL.URLEval.URL == "" {
		return steps.EvalCommand(ctx, o.Step)
	}
	if err := oneMode(o.Step.PlanFile, o.Step.Frontend); err != nil {
		return err
	}
	return Eval(ctx, o.URL)
}

// oneMode refuses a plan's flags beside --url.
func oneMode(planFile, frontend string) error {
	for _, f := range []struct{ name, value string }{{"plan", planFile}, {"frontend", frontend}} {
		if f.value != "" {
			return exitcode.Errorf(exitcode.Config, "--url and --%s: give a plan (--plan, --frontend) or a URL, not both", f.name)
		}
	}
	return nil
}
