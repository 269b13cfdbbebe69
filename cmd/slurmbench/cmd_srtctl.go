package main

import (
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/job/srtctlbench"
	"github.com/slurmbench/slurmbench/launcher/job/stagemodel"
)

func srtctlBenchCommand() *cli.Command {
	return &cli.Command{
		Name:      "srtctl-bench",
		Usage:     "run one of srtctl's other benchmark types in the engine container (a step of the plan)",
		UsageText: "slurmbench srtctl-bench TYPE ARGS...",
		Description: `TYPE is mmlu, gpqa, longbenchv2, gsm8k-sglang, gsm8k-vllm, lm-eval, router,
sglang-bench, trace-replay or mooncake-router; ARGS are the positional
arguments srtctl's runner for the type passes its script, which the plan
holds. The tool runs with the step's environment; its results land under
/logs where srtctl's do. Every argument is taken as written, flags included.`,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 {
				return exitcode.Errorf(exitcode.Config, "srtctl-bench: TYPE is required")
			}
			return srtctlbench.Run(c.Context, srtctlbench.Options{Type: args[0], Args: args[1:], Stdout: c.App.Writer})
		},
	}
}

func stageModelCommand() *cli.Command {
	return &cli.Command{
		Name:      "stage-model",
		Usage:     "copy the model to this node's local disk once, verified (a step of the plan for model.stage_dir)",
		UsageText: "slurmbench stage-model SOURCE DEST",
		Description: `Copies every file under SOURCE (symbolic links followed) into DEST,
STAGE_PARALLEL at a time (default 16), unless DEST already holds the same
files with the same sizes; afterwards DEST must match, or the step fails.`,
		SkipFlagParsing: true,
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) != 2 {
				return exitcode.Errorf(exitcode.Config, "stage-model: want SOURCE DEST, got %d arguments", len(args))
			}
			o := stagemodel.Options{Source: args[0], Dest: args[1], Log: c.App.Writer}
			if v := os.Getenv("STAGE_PARALLEL"); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return exitcode.Errorf(exitcode.Config, "stage-model: STAGE_PARALLEL=%q is not a positive count", v)
				}
				o.Parallel = n
			}
			o.Host, _ = os.Hostname()
			_, err := stagemodel.Run(c.Context, o)
			return err
		},
	}
}
