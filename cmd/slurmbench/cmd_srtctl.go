package main

import (
	"os"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/duration"
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

func importNodeCommand() *cli.Command {
	return &cli.Command{
		Name:      "import-node",
		Usage:     "import the image into this node's own squash cache once, locked and validated (a step of the plan where the cache is node-local)",
		UsageText: "slurmbench import-node [--enroot PROG] [--lock-timeout D] [--lock-file PATH] SQUASH IMAGE",
		Description: `Makes SQUASH, a file in a node-local directory (created when missing), a
valid squash of IMAGE: reused when its sidecar matches or it validates,
else imported with enroot under a lock in that directory, validated and
renamed into place. The plan runs it on every node of the job before
anything starts there (runners.yaml squash import: all-nodes, or a
node-local squash cache).`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "enroot", Value: enroot.DefaultEnroot, Usage: "enroot program"},
			&cli.GenericFlag{Name: "lock-timeout", Usage: "how long to wait for another import of the image on this node", Value: duration.New(enroot.DefaultLockTimeout, duration.Wait)},
			&cli.StringFlag{Name: "lock-file", Usage: "the lock the import takes (absolute; default SQUASH.lock), e.g. a squash policy's locks directory"},
		},
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) != 2 {
				return exitcode.Errorf(exitcode.Config, "import-node: want SQUASH IMAGE, got %d arguments", len(args))
			}
			n := enroot.NodeImport{SquashDir: filepath.Dir(args[0]), Squash: args[0], Enroot: c.String("enroot"),
				LockTimeout: durationOf(c, "lock-timeout"), LockFile: c.String("lock-file"), Version: version, Log: c.App.Writer}
			if _, err := n.Run(c.Context, args[1]); err != nil {
				return exitcode.With(exitcode.Image, err)
			}
			return nil
		},
	}
}
