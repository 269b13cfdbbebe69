package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/internal/sigctx"
	"github.com/slurmbench/slurmbench/launcher/job/dynamoinstall"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

func dynamoInstallCommand() *cli.Command {
	return &cli.Command{
		Name:      "dynamo-install",
		Usage:     "install Dynamo into this engine container from the shared wheel cache (a setup step of the plan)",
		UsageText: "slurmbench dynamo-install --cache DIR (--version V | --wheel V | --hash H | --top-of-tree ID) [--tmp DIR] [--lock-timeout D]",
		Description: `Runs inside the engine container, before the worker or frontend, when the
recipe's dynamo block asks for an install. The plan adds it as a setup step.

The cache entry DIR/<source>/<cpXY>-<machine> (python3 on PATH names the ABI
and machine) is filled once: the first node to need it takes an exclusive
flock on DIR/.locks/<entry>.lock, runs srtctl's fetch (pip download of the
release or exact wheel, or the source build with maturin) into a temporary
directory next to the entry, checks it, marks it .complete and renames it
into place. Other nodes wait on the lock (a line every 30 s) and reuse it.
Nothing is downloaded per worker.

The install then runs from the entry, once per container: tasks sharing the
container serialize on a lock in the Python prefix, and a marker there
(naming the entry) makes the others skip. Every program runs without a
shell, its output in the process log; a failure exits 7 with the end of the
failing step's output.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "cache", Usage: "wheel cache `DIR` on the shared filesystem (absolute)"},
			&cli.StringFlag{Name: "version", Usage: "install the Dynamo release `V` (ai-dynamo and ai-dynamo-runtime)"},
			&cli.StringFlag{Name: "wheel", Usage: "install the exact Dynamo build `V`, pre-releases included"},
			&cli.StringFlag{Name: "hash", Usage: "build and install Dynamo from source commit `H`"},
			&cli.StringFlag{Name: "git", Usage: "with --hash: the repository `URL` to build from (default github.com/ai-dynamo/dynamo)"},
			&cli.StringFlag{Name: "top-of-tree", Usage: "build and install Dynamo from the source's HEAD, once for the run `ID`"},
			&cli.StringFlag{Name: "tmp", Value: dynamoinstall.DefaultTmp, Usage: "the container's scratch `DIR` (build tree; a source install's editable tree)"},
			&cli.GenericFlag{Name: "lock-timeout", Usage: "give up waiting for another node's fetch after this long", Value: duration.New(dynamoinstall.DefaultLockTimeout, duration.Wait)},
			&cli.GenericFlag{Name: "progress-every", Usage: "while waiting for a lock, say so this often", Value: duration.New(dynamoinstall.DefaultProgressEvery, duration.Wait)},
		},
		OnUsageError: cliargs.UsageError,
		Action: func(c *cli.Context) error {
			return dynamoinstall.RunCommand(c.Context, dynamoinstall.CommandOptions{Interrupted: sigctx.Interrupted(c.Context), Options: dynamoinstall.Options{
				Dynamo: plan.Dynamo{Version: c.String("version"), Wheel: c.String("wheel"), Hash: c.String("hash"), Git: c.String("git"), TopOfTree: c.String("top-of-tree"), Cache: c.String("cache")},
				Tmp:    c.String("tmp"), LockTimeout: durationOf(c, "lock-timeout"), ProgressEvery: durationOf(c, "progress-every"),
				Stdout: c.App.Writer, Stderr: c.App.ErrWriter,
			}})
		},
	}
}
