package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/sigctx"
	"github.com/slurmbench/slurmbench/launcher/endpoint"
	"github.com/slurmbench/slurmbench/launcher/job/steps"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

func stepFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "plan", Usage: "the run's plan `FILE` (plan.json); required"},
		&cli.StringFlag{Name: "frontend", Usage: "frontend `URL`, http://host:port; required"},
		&cli.StringFlag{Name: "workspace", Usage: "InferenceX checkout `DIR` as the container sees it (sa-bench and lm-eval clients only)", EnvVars: []string{"SLURMBENCH_WORKSPACE"}},
	}
}

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:         "bench",
		OnUsageError: cliargs.UsageError,
		Usage:        "run SA-Bench points: a plan's inside the allocation, or against any endpoint with --url",
		UsageText: `slurmbench bench --url URL --model NAME --isl N --osl N --conc LIST [--out DIR] [flags]
slurmbench bench --plan FILE --frontend URL [--progress-file FILE]`,
		Description: `With --url (no plan): runs SA-Bench points with the native client against an
endpoint that is already serving, e.g. a deployment you started yourself:

  slurmbench bench --url http://10.0.0.1:8000 --model deepseek-ai/DeepSeek-R1     --isl 1024 --osl 128 --conc 8x32 --gpus 12 --prefill-gpus 8 --decode-gpus 4 --out res/

Each point writes the result file a run writes (benchmark_serving.py's JSON,
named results_concurrency_<C>_gpus_<T>[_ctx_<P>_gen_<D>].json) into
<out>/sa-bench_isl_<I>_osl_<O>/, and the end prints the table 'slurmbench run'
prints and writes the Pareto picture (tput/GPU against output tok/s per user)
as <out>/pareto.svg and its data as pareto.csv. --result-filename NAME also
stages InferenceX's names into --out.
Progress: one line rewritten in place on a terminal (requests done, tok/s,
p50 TTFT), a plain line every 5 s otherwise. One short request first checks
the endpoint streams and reports usage; if not, it exits 2 naming what is
missing, before anything is timed.

Exit codes (--url): 0 every point valid; 8 a point invalid; 7 the endpoint
is not reachable; 2 a bad flag or an endpoint that cannot be measured.

With --plan (the in-job step the driver starts): runs every benchmark point
of the plan in order with the plan's client (native:
the built-in Go client; sa-bench: benchmark_serving.py, this step then runs in
the engine container), writes each result file into the plan's result
directory marked valid or invalid, prints one line per point, and keeps a
progress file ({"point", "of", "concurrency", "state"}) for the launcher.
Every point runs even when an earlier one fails.

Exit codes: 0 every point valid; 8 a point invalid or missing (all named);
7 the frontend is not reachable; 2 a bad plan or flag; 130/143 interrupted
(the running point's result is kept, marked partial).`,
		Flags: append(append(stepFlags(),
			&cli.StringFlag{Name: "progress-file", Usage: "progress `FILE` (default <results>/" + rundir.ProgressName + ")"},
			&cli.StringFlag{Name: "sa-bench-script", Usage: "benchmark_serving.py `PATH` (default <workspace>/" + steps.DefaultSABenchScript + ")"},
		), benchURLFlags()...),
		Action: func(c *cli.Context) error {
			return endpoint.BenchCommand(c.Context, endpoint.BenchCommandOptions{URL: benchURLOptions(c), Step: steps.BenchCommandOptions{
				PlanFile: c.String("plan"), JSON: c.Bool("json"), Interrupted: sigctx.Interrupted(c.Context),
				BenchOptions: steps.BenchOptions{
					Frontend: c.String("frontend"), ProgressFile: c.String("progress-file"),
					Out: c.App.Writer, Log: c.App.ErrWriter,
					Workspace: c.String("workspace"), Script: c.String("sa-bench-script"),
				},
			}})
		},
	}
}

func evalCommand() *cli.Command {
	return &cli.Command{
		Name:         "eval",
		OnUsageError: cliargs.UsageError,
		Usage:        "run gsm8k: a plan's inside the allocation, or against any endpoint with --url",
		UsageText: `slurmbench eval --url URL --model NAME [--data-dir DIR] [--out DIR] [--limit N]
slurmbench eval --plan FILE --frontend URL [--model-prefix P] [--limit N]`,
		Description: `With --url (no plan): runs the native gsm8k eval against an endpoint that is
already serving and writes a run's eval files into <out>/eval/:

  slurmbench eval --url http://10.0.0.1:8000 --model deepseek-ai/DeepSeek-R1 --model-prefix dsr1 --out res/

gsm8k's test and train splits are built in; --data-dir DIR reads others.

With --plan (the in-job step): runs gsm8k with the plan's client (native: built in, reading the plan's
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
		Flags: append(append(stepFlags(),
			&cli.StringFlag{Name: "model-prefix", Usage: "InferenceX model prefix picking the threshold, e.g. dsr1", EnvVars: []string{"MODEL_PREFIX"}},
			&cli.IntFlag{Name: "limit", Usage: "evaluate only the first `N` documents (0: all)", EnvVars: []string{"EVAL_LIMIT"}},
			&cli.IntFlag{Name: "context-length", Usage: "context length `TOKENS` for max_tokens (default derived as above)", EnvVars: []string{"EVAL_MAX_MODEL_LEN"}},
			&cli.BoolFlag{Name: "skip-install", Usage: "lm-eval client: do not pip install the pinned lm-eval first"},
		), evalURLFlags()...),
		Action: func(c *cli.Context) error {
			return endpoint.EvalCommand(c.Context, endpoint.EvalCommandOptions{URL: evalURLOptions(c), Step: steps.EvalCommandOptions{
				PlanFile: c.String("plan"), Interrupted: sigctx.Interrupted(c.Context),
				EvalOptions: steps.EvalOptions{
					Frontend: c.String("frontend"), ModelPrefix: c.String("model-prefix"),
					Limit: c.Int("limit"), ContextLength: c.Int("context-length"),
					Out: c.App.Writer, Log: c.App.ErrWriter,
					Workspace: c.String("workspace"), InstallLMEval: !c.Bool("skip-install"),
				},
			}})
		},
	}
}
