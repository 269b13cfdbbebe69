package main

import (
	"context"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/login/ops"
	"github.com/slurmbench/slurmbench/launcher/login/workflow"
	"github.com/slurmbench/slurmbench/slurm"
)

// fromEnvFlag asks run for the workflow's mode outright.
func fromEnvFlag() cli.Flag {
	return &cli.BoolFlag{Name: "from-env", Usage: "take the point from InferenceX's workflow environment (RUNNER_NAME, SRT_RECIPE, IMAGE, CONC_LIST, ...), as python -m infx.launch run does; the default when RUNNER_NAME is set and no flag names a recipe"}
}

// workflowRun reports whether run is in the workflow's mode and, if so,
// runs it.
func workflowRun(c *cli.Context) (bool, error) {
	namesRecipe := c.String("recipe") != "" || c.String("config-file") != "" || c.String("master") != "" || c.String("key") != "" || c.IsSet("in")
	env := workflow.EnvOf(os.Environ())
	if !workflow.RunMode(c.Bool("from-env"), namesRecipe, env) {
		return false, nil
	}
	return true, workflow.Run(c.Context, workflow.RunOptions{
		IO: ioOf(c), Env: env, Resolver: workflow.DefaultResolver(c.String("profile")),
		Follow: followFlags(c), BinaryDir: c.String("binary-dir"), NoPreflight: c.Bool("no-preflight"), Drive: driveHere,
		RunID: c.String("run-id"),
	})
}

// workflowCleanup is cleanup as the workflow's always() step runs it: the
// runner from RUNNER_NAME (not --runner), and nothing fails the step.
func workflowCleanup(c *cli.Context) (bool, error) {
	if os.Getenv("RUNNER_NAME") == "" || givenOnCommandLine(c, "runner") {
		return false, nil
	}
	so := slurmOptions(c)
	return true, workflow.Cleanup(c.Context, workflow.CleanupOptions{
		IO: ioOf(c), Runner: c.String("runner"), Timeout: durationOf(c, "timeout"), DryRun: c.Bool("dry-run"),
		Client: func(ctx context.Context) (*slurm.Client, error) { return ops.SlurmClient(ctx, so) },
	})
}

// argvKey holds, in the app's metadata, the command line being run.
const argvKey = "argv"

// givenOnCommandLine says whether --name (or -name) was on the command
// line itself: urfave/cli's IsSet and LocalFlagNames also count the
// flag's environment variable.
func givenOnCommandLine(c *cli.Context, name string) bool {
	argv, _ := c.App.Metadata[argvKey].([]string)
	for _, a := range argv[min(1, len(argv)):] {
		if a == "--" {
			return false
		}
		for _, p := range []string{"--" + name, "-" + name} {
			if a == p || strings.HasPrefix(a, p+"=") {
				return true
			}
		}
	}
	return false
}
