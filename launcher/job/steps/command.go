package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// BenchCommandOptions are `bench --plan`'s: the plan file, BenchOptions
// from the flags, whether to print the result as JSON, and which signal
// stopped the step once its context is done (nil: SIGTERM's 143).
type BenchCommandOptions struct {
	BenchOptions
	PlanFile    string
	JSON        bool
	Interrupted func() exitcode.Code
}

// BenchCommand is the benchmark step the driver starts: every point of the
// plan, then one line (or JSON object) saying how many are valid. Exit 2
// for a bad plan or flag, 8 for a point invalid or missing, 7 when the
// frontend died, 130/143 when interrupted.
func BenchCommand(ctx context.Context, o BenchCommandOptions) error {
	pl, err := loadStepPlan(o.PlanFile, o.Frontend)
	if err != nil {
		return err
	}
	if err := CheckBench(pl, o.BenchOptions); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	points, err := Bench(ctx, pl, o.BenchOptions)
	if err != nil {
		return exitcode.With(ExitCode(ctx, err, exitcode.Benchmark, o.Interrupted), err)
	}
	if o.JSON {
		enc := json.NewEncoder(o.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"valid": len(points), "points": len(pl.Points), "result_dir": pl.Benchmark.ResultDir})
	}
	fmt.Fprintf(o.Out, "benchmark: %d of %d points valid in %s\n", len(points), len(pl.Points), pl.Benchmark.ResultDir)
	return nil
}

// EvalCommandOptions are `eval --plan`'s, as BenchCommandOptions.
type EvalCommandOptions struct {
	EvalOptions
	PlanFile    string
	Interrupted func() exitcode.Code
}

// EvalCommand is the eval step the driver starts. Exit 9 for a score
// below the threshold or an eval that could not finish, 2 for a bad plan
// or flag, 7 when the frontend died, 130/143 when interrupted.
func EvalCommand(ctx context.Context, o EvalCommandOptions) error {
	pl, err := loadStepPlan(o.PlanFile, o.Frontend)
	if err != nil {
		return err
	}
	if err := CheckEval(pl, o.EvalOptions); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	_, err = Eval(ctx, pl, o.EvalOptions)
	if err == nil {
		return nil
	}
	var below *gsm8k.ThresholdError
	if errors.As(err, &below) {
		return exitcode.With(exitcode.Eval, err)
	}
	return exitcode.With(ExitCode(ctx, err, exitcode.Eval, o.Interrupted), err)
}

// loadStepPlan checks the flags every step needs and loads the plan. A
// missing flag is a config error here (urfave's Required would exit 1).
func loadStepPlan(planFile, frontend string) (*plan.Plan, error) {
	for _, f := range []struct{ name, value string }{{"plan", planFile}, {"frontend", frontend}} {
		if f.value == "" {
			return nil, exitcode.Errorf(exitcode.Config, "--%s is required", f.name)
		}
	}
	pl, err := plan.ReadPlan(planFile)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	return pl, nil
}

// ExitCode classifies a failed step: a signal (once ctx is done; nil
// interrupted is SIGTERM's 143), a dead frontend (the engine layer), or
// the step's own failure.
func ExitCode(ctx context.Context, err error, own exitcode.Code, interrupted func() exitcode.Code) exitcode.Code {
	if ctx.Err() != nil {
		if interrupted != nil {
			return interrupted()
		}
		return exitcode.Terminated
	}
	var frontend *FrontendError
	if errors.As(err, &frontend) {
		return exitcode.Engine
	}
	return own
}
