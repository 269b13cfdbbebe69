package main

import (
	"github.com/urfave/cli/v2"
	"os"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/login/matrix"
)

func matrixCommand() *cli.Command {
	return &cli.Command{
		Name:      "matrix",
		Usage:     "run InferenceX's whole matrix from its master config, points that fit one allocation sharing it",
		UsageText: "slurmbench matrix --profile FILE --master FILE [--runner R] [--key K...] [--filter EXPR] [--plan] [--max-parallel N] [--rerun-failed] [--stage-dir DIR]",
		Description: `Expands the master config (configs/nvidia-master.yaml) into its points
exactly as InferenceX's matrix generator does (same points, names, recipes and
eval selection), plans each point, and packs the points that fit one
allocation (the same entry, cluster, nodes and GPUs) into one: up once, every
point of the group run in it, the engines restarted in place when a point's
servers differ from the previous point's, down at the end. A group splits when
its estimated time passes the allocation's time limit.

Today's master (srt-recipe-dir + srt-recipe rows) is validated as InferenceX
validates it (an unknown field is exit 2 naming file:line and the rule) and
expanded whole: single- and multi-node, fixed-seq-len and agentic-coding,
power and eval rows. Fixed-seq-len points of one recipe fingerprint share
servers; agentic points restart them. Every point that cannot be planned
is listed with its reason. September's layout (CONFIG_FILE rows) still works.

--plan prints the points, the allocations with their restarts, and the queue
wait, setup and engine-start costs against one allocation per point (with the
estimates used), and submits nothing. --key takes config keys or shell
patterns; --filter takes field=value terms joined by ',' (key, runner,
precision, framework, model-prefix, spec-decoding, isl, osl, seq, eval,
config-file, scenario, multinode, srt-recipe).

` + exitCodesHelp + `

Examples:
  slurmbench matrix -p profiles/b200-dgxc.toml --master configs/nvidia-master.yaml --runner b200-multinode --plan
  slurmbench matrix -p profiles/testcluster.toml --master examples/mock-matrix-master.yaml --recipes-root examples --stage-dir results --max-parallel 2`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.StringFlag{Name: "master", Usage: "InferenceX master config (configs/nvidia-master.yaml)"},
			&cli.StringFlag{Name: "recipes-root", Usage: "the directory CONFIG_FILE's recipes/ stands for (default: the profile's paths.recipes_root)"},
			&cli.StringFlag{Name: "runners", Usage: "InferenceX's runners.yaml, for node counts and DRAM budgets of srt-recipe rows, and each point's cluster record when no --profile is given (default: beside --master)"},
			&cli.StringFlag{Name: "inferencex-root", Usage: "InferenceX's project root (inferencex-e2e/) srt-recipe paths resolve under (default: the directory above --master's configs/)"},
			&cli.StringFlag{Name: "runner", Usage: "only the entries of this runner label (e.g. cluster:gb300-nv); with runners.yaml each entry's label picks its cluster's record"},
			&cli.StringSliceFlag{Name: "key", Usage: "only these config keys (shell patterns allowed; repeatable)"},
			&cli.StringFlag{Name: "filter", Usage: "field=value terms joined by ',' (all must hold)"},
			&cli.BoolFlag{Name: "plan", Usage: "print points, grouping, allocations and GPU-hours saved; submit nothing"},
			&cli.GenericFlag{Name: "startup", Usage: "setup time one allocation costs (image import, model staging, Dynamo install), for GPU-hours saved (default: 10m + 15m + 5m)", Value: duration.New(0, duration.Wait)},
			&cli.GenericFlag{Name: "engine-start", Usage: "estimated start of one point's servers to a passed health gate (default 10m)", Value: duration.New(0, duration.Wait)},
			&cli.GenericFlag{Name: "queue-wait", Usage: "estimated queue wait of one allocation (default 30m)", Value: duration.New(0, duration.Wait)},
			&cli.GenericFlag{Name: "point-time", Usage: "estimated time of one concurrency of a fixed-seq-len point (default 10m)", Value: duration.New(0, duration.Wait)},
			&cli.GenericFlag{Name: "time-limit", Usage: "an allocation's limit when its plan says none, to pack points under (default 4h)", Value: duration.New(0, duration.Wait)},
			&cli.IntFlag{Name: "max-parallel", Value: 1, Usage: "jobs in the queue at once"},
			&cli.BoolFlag{Name: "rerun-failed", Usage: "run only the points that failed or have no result"},
			&cli.StringFlag{Name: "stage-dir", Usage: "each point stages its results into DIR/<point>/, replacing what was there, under DIR/<point>/.slurmbench-stage.lock (one staging at a time)"},
			&cli.StringFlag{Name: "job-name", EnvVars: []string{"RUNNER_NAME"}, Usage: "Slurm job name"},
			&cli.StringFlag{Name: "workspace", EnvVars: []string{"GITHUB_WORKSPACE"}, Usage: "the workflow's `DIR` (GITHUB_WORKSPACE): a runners.yaml record without a shared run root keeps its runs in DIR/slurmbench-runs; default: the InferenceX root"},
			&cli.BoolFlag{Name: "no-preflight", Usage: "skip the checks slurmbench doctor runs"},
			binaryDirFlag(),
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return configErrorf("matrix takes no arguments, got %q", c.Args().First())
			}
			o := matrix.Options{
				IO: ioOf(c), Master: c.String("master"), Profile: c.String("profile"), RecipesRoot: c.String("recipes-root"),
				Selection: master.Selection{Runner: c.String("runner"), Keys: c.StringSlice("key"), Filter: c.String("filter")},
				PlanOnly:  c.Bool("plan"), Startup: durationOf(c, "startup"), MaxParallel: c.Int("max-parallel"),
				Estimates: matrix.Estimates{EngineStart: durationOf(c, "engine-start"), QueueWait: durationOf(c, "queue-wait"),
					PerConc: durationOf(c, "point-time"), TimeLimit: durationOf(c, "time-limit")},
				RerunFailed: c.Bool("rerun-failed"), StageDir: c.String("stage-dir"), JobName: c.String("job-name"),
				NoPreflight: c.Bool("no-preflight"), BinaryDir: c.String("binary-dir"),
				Runners: c.String("runners"), InferenceXRoot: c.String("inferencex-root"), Workspace: c.String("workspace"),
				// The lane's time rule reads it as the workflow's run does.
				SallocTimeLimit: os.Getenv("SALLOC_TIME_LIMIT"),
			}
			o.Compose = matrix.Composer(o)
			return matrix.Run(c.Context, o)
		},
	}
}
