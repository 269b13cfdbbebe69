// Command slurmbench plans, submits, drives and collects one multinode
// LLM-inference benchmark point on a Slurm cluster.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// Set by the Makefile through -ldflags; otherwise versionString reads the
// module's build information.
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
	app := newApp()
	app.Writer, app.ErrWriter = stdout, stderr
	argv, err := prepareArgs(app, args)
	if err != nil {
		return int(reportError(stderr, err))
	}
	name := commandName(argv)
	ctx, stop := withSignals(context.Background(), stderr, !abandonOnSignal[name])
	defer stop()
	err = runApp(ctx, app, argv, abandonOnSignal[name])
	if err = signalExitError(ctx, name, err); err != nil {
		return int(reportError(stderr, err))
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
	forEachCommand(cmds, func(c *cli.Command) {
		// A flag that does not parse, or a required one missing, is a
		// config error: one line, exit 2.
		if c.OnUsageError == nil {
			c.OnUsageError = usageError
		}
		requireFlags(c)
	})
	return &cli.App{
		OnUsageError: usageError,
		Name:         "slurmbench",
		Usage:        "run one multinode LLM-inference benchmark point on Slurm, from recipe to staged results",
		Version:      versionString(version, commit, readBuildInfo),
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

func forEachCommand(cmds []*cli.Command, fn func(*cli.Command)) {
	for _, c := range cmds {
		fn(c)
		forEachCommand(c.Subcommands, fn)
	}
}

// requireFlags replaces urfave/cli's required-flag check (a help dump and
// exit 1) with a config error naming the flag. The flag's help still says
// it is required.
func requireFlags(c *cli.Command) {
	var required []string
	for _, f := range c.Flags {
		switch f := f.(type) {
		case *cli.StringFlag:
			if f.Required {
				f.Required, f.Usage = false, f.Usage+" (required)"
				required = append(required, f.Name)
			}
		case *cli.IntFlag:
			if f.Required {
				f.Required, f.Usage = false, f.Usage+" (required)"
				required = append(required, f.Name)
			}
		}
	}
	if len(required) == 0 {
		return
	}
	before := c.Before
	c.Before = func(ctx *cli.Context) error {
		var missing []string
		for _, name := range required {
			if !ctx.IsSet(name) {
				missing = append(missing, "--"+name)
			}
		}
		if len(missing) > 0 {
			return configErrorf("%s: required (see slurmbench %s --help)", strings.Join(missing, ", "), ctx.Command.FullName())
		}
		if before != nil {
			return before(ctx)
		}
		return nil
	}
}

func readBuildInfo() (*debug.BuildInfo, bool) { return debug.ReadBuildInfo() }

// versionString is "VERSION (COMMIT)": the Makefile's stamp, else the
// module version and VCS revision Go recorded in the binary (go install
// pkg@version, or go build in a checkout).
func versionString(version, commit string, info func() (*debug.BuildInfo, bool)) string {
	if version == "dev" {
		if bi, ok := info(); ok {
			if v := bi.Main.Version; v != "" && v != "(devel)" {
				version = v
			}
			modified := false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					if commit == "unknown" {
						commit = s.Value[:min(12, len(s.Value))]
					}
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if modified && commit != "unknown" {
				commit += "-dirty"
			}
		}
	}
	return fmt.Sprintf("%s (%s)", version, commit)
}
