package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/login/ops"
)

func cleanupCommand() *cli.Command {
	return &cli.Command{
		Name:      "cleanup",
		Usage:     "cancel the jobs a previous attempt of this runner left (infx.launch cleanup)",
		UsageText: "slurmbench cleanup [--profile FILE | --rest-url URL] [--runner NAME] [--dry-run] [--timeout D] [--json]",
		Description: `The drop-in for InferenceX's "python -m infx.launch cleanup": cancels the
user's jobs named after the runner (RUNNER_NAME), srtctl's "inferencex-<runner>"
jobs included, and waits until the queue no longer lists them. With a
profile, runs under its runs_dir that may still run and whose job carries
one of those names are cancelled too, whoever's they are in Slurm. It acts
by default, as infx does; --dry-run lists what it would cancel. Ended jobs
and other users' jobs are never touched: without a user (--user, the
profile's slurm.user or $USER) it cancels nothing and exits 2.

Examples:
  slurmbench cleanup --profile profiles/gb300-nv.toml          # RUNNER_NAME from the workflow
  slurmbench cleanup --runner gb300-nv_0 --dry-run
` + slurmConnectionHelp + `
A wait cut short by --timeout exits 11; an interrupt 130.

In the workflow (RUNNER_NAME set, no --runner) it never fails the
always() step: no Slurm reachable, a failed cancel or a wait cut short is
a warning and exit 0.`,
		Flags: append(slurmFlags(),
			&cli.StringFlag{Name: "runner", Usage: "the runner whose jobs to cancel", EnvVars: []string{"RUNNER_NAME"}},
			&cli.BoolFlag{Name: "dry-run", Usage: "list the jobs, cancel nothing"},
			&cli.GenericFlag{Name: "timeout", Usage: "how long to wait for cancelled jobs to leave the queue (0: until interrupted, as infx)", Value: duration.New(0, duration.Wait)},
			jsonFlag()),
		OnUsageError: usageAsConfigError,
		Action: func(c *cli.Context) error {
			if ok, err := workflowCleanup(c); ok {
				return err
			}
			return ops.CleanupCommand(c.Context, ops.CleanupCommandOptions{IO: ioOf(c), Slurm: slurmOptions(c), Cleanup: ops.CleanupOptions{
				Runner: c.String("runner"), User: c.String("user"), DryRun: c.Bool("dry-run"), Timeout: durationOf(c, "timeout")}})
		},
	}
}
