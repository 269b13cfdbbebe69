package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher"
	"github.com/slurmbench/slurmbench/launcher/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/launcher/steps"
)

func stepFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "plan", Usage: "the run's plan `FILE` (plan.json); required"},
		&cli.StringFlag{Name: "frontend", Usage: "frontend `URL`, http://host:port; required"},
		&cli.StringFlag{Name: "workspace", Usage: "InferenceX checkout `DIR` as the container sees it (sa-bench and lm-eval clients only)", EnvVars: []string{"SLURMBENCH_WORKSPACE"}},
	}
}

// loadStepPlan checks the flags every step needs and loads the plan. A
// missing flag is a config error here (urfave's Required would exit 1).
func loadStepPlan(c *cli.Context) (*launcher.Plan, error) {
	for _, name := range []string{"plan", "frontend"} {
		if c.String(name) == "" {
			return nil, configErrorf("--%s is required", name)
		}
	}
	plan, err := launcher.ReadPlan(c.String("plan"))
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	return plan, nil
}

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:         "bench",
		OnUsageError: usageError,
		Usage:        "run the plan's SA-Bench points against the frontend (runs inside the allocation; the driver starts it)",
		UsageText:    "slurmbench bench --plan FILE --frontend URL [--progress-file FILE]",
		Description: `Runs every benchmark point of the plan in order with the plan's client (native:
the built-in Go client; sa-bench: benchmark_serving.py, this step then runs in
the engine container), writes each result file into the plan's result
directory marked valid or invalid, prints one line per point, and keeps a
progress file ({"point", "of", "concurrency", "state"}) for the launcher.
Every point runs even when an earlier one fails.

Exit codes: 0 every point valid; 8 a point invalid or missing (all named);
7 the frontend is not reachable; 2 a bad plan or flag; 130/143 interrupted
(the running point's result is kept, marked partial).`,
		Flags: append(stepFlags(),
			&cli.StringFlag{Name: "progress-file", Usage: "progress `FILE` (default <results>/" + rundir.ProgressName + ")"},
			&cli.StringFlag{Name: "sa-bench-script", Usage: "benchmark_serving.py `PATH` (default <workspace>/" + steps.DefaultSABenchScript + ")"},
		),
		Action: func(c *cli.Context) error {
			plan, err := loadStepPlan(c)
			if err != nil {
				return err
			}
			opts := steps.BenchOptions{
				Frontend: c.String("frontend"), ProgressFile: c.String("progress-file"),
				Out: c.App.Writer, Log: c.App.ErrWriter,
				Workspace: c.String("workspace"), Script: c.String("sa-bench-script"),
			}
			if err := steps.CheckBench(plan, opts); err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			points, err := steps.Bench(c.Context, plan, opts)
			if err != nil {
				return exitcode.With(stepExitCode(c.Context, err, exitcode.Benchmark), err)
			}
			fmt.Fprintf(c.App.Writer, "benchmark: %d of %d points valid in %s\n", len(points), len(plan.Points), plan.Benchmark.ResultDir)
			return nil
		},
	}
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:         "eval",
		OnUsageError: usageError,
		Usage:        "run the plan's gsm8k eval against the frontend (runs inside the allocation; the driver starts it)",
		UsageText:    "slurmbench eval --plan FILE --frontend URL [--model-prefix P] [--limit N]",
		Description: `Runs gsm8k with the plan's client (native: built in, reading the plan's
data directory; lm-eval: InferenceX's lm-eval invocation, this step then runs
in the engine container), writes lm-eval's results_<date>.json,
samples_gsm8k_<date>.jsonl and meta_env.json into the eval result directory,
and gates both filters (strict-match, flexible-extract) with InferenceX's
thresholds for the model prefix (default 0.90, dsr1 0.91, ...).
max_tokens follows InferenceX: context ISL+OSL+256 (capped at the model's
max_position_embeddings), else MAX_MODEL_LEN, else 16384.

Exit codes: 0 scores at or above the threshold; 9 a score below it, or the
eval could not finish; 7 the frontend is not reachable; 2 a bad plan or flag;
130/143 interrupted.`,
		Flags: append(stepFlags(),
			&cli.StringFlag{Name: "model-prefix", Usage: "InferenceX model prefix picking the threshold, e.g. dsr1", EnvVars: []string{"MODEL_PREFIX"}},
			&cli.IntFlag{Name: "limit", Usage: "evaluate only the first `N` documents (0: all)", EnvVars: []string{"EVAL_LIMIT"}},
			&cli.IntFlag{Name: "context-length", Usage: "context length `TOKENS` for max_tokens (default derived as above)", EnvVars: []string{"EVAL_MAX_MODEL_LEN"}},
			&cli.BoolFlag{Name: "skip-install", Usage: "lm-eval client: do not pip install the pinned lm-eval first"},
		),
		Action: func(c *cli.Context) error {
			plan, err := loadStepPlan(c)
			if err != nil {
				return err
			}
			opts := steps.EvalOptions{
				Frontend: c.String("frontend"), ModelPrefix: c.String("model-prefix"),
				Limit: c.Int("limit"), ContextLength: c.Int("context-length"),
				Out: c.App.Writer, Log: c.App.ErrWriter,
				Workspace: c.String("workspace"), InstallLMEval: !c.Bool("skip-install"),
			}
			if err := steps.CheckEval(plan, opts); err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			_, err = steps.Eval(c.Context, plan, opts)
			if err == nil {
				return nil
			}
			var below *gsm8k.ThresholdError
			if errors.As(err, &below) {
				return exitcode.With(exitcode.Eval, err)
			}
			return exitcode.With(stepExitCode(c.Context, err, exitcode.Eval), err)
		},
	}
}

// stepExitCode classifies a failed in-job step: a signal, a dead frontend
// (the engine layer), or the step's own failure.
func stepExitCode(ctx context.Context, err error, own exitcode.Code) exitcode.Code {
	if sig := signalOf(ctx); sig != nil {
		return signalExit(sig)
	}
	if ctx.Err() != nil {
		return exitcode.Terminated
	}
	var frontend *steps.FrontendError
	if errors.As(err, &frontend) {
		return exitcode.Engine
	}
	return own
}
