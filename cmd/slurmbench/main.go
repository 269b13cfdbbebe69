// Command slurmbench plans, submits, drives and collects one multinode
// LLM-inference benchmark point on a Slurm cluster.
package main

import (
	"context"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/ascii"
	"github.com/slurmbench/slurmbench/internal/buildinfo"
	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/sigctx"
)

// Set by the Makefile through -ldflags; otherwise internal/buildinfo reads
// the module's build information.
var (
	version = "dev"
	commit  = "unknown"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run is main without the process: parse args, run the command under the
// signal context, and turn its error into one line and an exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if !ascii.UTF8(os.Getenv) {
		// LANG=C: marks and symbols in words. JSON is data: left as it is.
		stderr = ascii.Writer(stderr)
		if !slices.Contains(args, "--json") {
			stdout = ascii.Writer(stdout)
		}
	}
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	argv, err := cliargs.PrepareArgs(app, args)
	if err != nil {
		return int(exitcode.Report(stderr, err))
	}
	name := commandName(argv)
	app.Metadata = map[string]any{argvKey: argv}
	ctx, stop := sigctx.With(context.Background(), stderr, !abandonOnSignal[name])
	defer stop()
	err = sigctx.Run(ctx, func(ctx context.Context) error { return app.RunContext(ctx, argv) }, abandonOnSignal[name], abandonGrace)
	if err = sigctx.ExitError(ctx, err, gracefulStop[name]); err != nil {
		return int(exitcode.Report(stderr, err))
	}
	return 0
}

// commandName is the command argv runs ("" for none).
func commandName(argv []string) string {
	for _, a := range argv[min(1, len(argv)):] {
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

func newApp() *cli.App {
	cmds := commands()
	cliargs.ForEachCommand(cmds, func(c *cli.Command) {
		// A flag that does not parse, or a required one missing, is a
		// config error: one line, exit 2.
		if c.OnUsageError == nil {
			c.OnUsageError = cliargs.UsageError
		}
		cliargs.RequireFlags(c)
		cliargs.CheckFlags(c)
	})
	return &cli.App{
		OnUsageError: cliargs.UsageError,
		Name:         "slurmbench",
		Usage:        "run one multinode LLM-inference benchmark point on Slurm, from recipe to staged results",
		Version:      buildinfo.String(version, commit, buildinfo.Read),
		Description: `slurmbench reads a recipe (srt-slurm's YAML schema) and a cluster profile (TOML),
resolves every path once at start, and then plans, submits (slurmrestd), drives
(inside the allocation) and collects a benchmark point.

Start with 'slurmbench render --profile P --recipe R' to see what would run,
then 'slurmbench run --profile P --recipe R' to run it; 'slurmbench run --help'
lists the exit codes. Cluster profiles: profiles/*.toml in the repository.`,
		Writer:    os.Stdout,
		ErrWriter: os.Stderr,
		// Errors are printed once, by run, with the exit code of their layer.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands:       cmds,
	}
}
