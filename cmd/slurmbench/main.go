// Command slurmbench plans, submits, drives and collects one multinode
// LLM-inference benchmark point on a Slurm cluster.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"
)

// Set by the Makefile through -ldflags.
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	os.Exit(run(os.Args))
}

func run(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp()
	if err := app.RunContext(ctx, args); err != nil {
		return reportError(app.ErrWriter, err)
	}
	return 0
}

func newApp() *cli.App {
	cmds := commands()
	for _, c := range cmds {
		// A flag that does not parse is a config error: one line, exit 2.
		if c.OnUsageError == nil {
			c.OnUsageError = usageError
		}
	}
	return &cli.App{
		OnUsageError: usageError,
		Name:         "slurmbench",
		Usage:        "run one multinode LLM-inference benchmark point on Slurm, from recipe to staged results",
		Version:      fmt.Sprintf("%s (%s)", version, commit),
		Description: `slurmbench reads a recipe (srt-slurm's YAML schema) and a cluster profile (TOML),
resolves every path once at start, and then plans, submits (slurmrestd), drives
(inside the allocation) and collects a benchmark point.

Start with 'slurmbench render --profile P --recipe R' to see what would run,
then 'slurmbench run --profile P --recipe R' to run it; 'slurmbench run --help'
lists the exit codes. Cluster profiles: profiles/*.toml in the repository.`,
		Writer:    os.Stdout,
		ErrWriter: os.Stderr,
		// Errors are printed once, by run, with the exit code of their layer.
		ExitErrHandler:  func(*cli.Context, error) {},
		Commands:        cmds,
		HideHelpCommand: true,
	}
}
