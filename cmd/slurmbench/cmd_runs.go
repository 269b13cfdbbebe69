package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

const runsWhereHelp = `

The runs are the directories under the profile's paths.runs_dir (--profile,
or SLURMBENCH_PROFILE), or under --runs-dir. With a profile, slurmrestd is
asked about jobs whose run directory has no outcome yet; --runs-dir alone
reads only the run directories.`

func runsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile: its paths.runs_dir, and its slurmrestd for job states", EnvVars: []string{"SLURMBENCH_PROFILE"}},
		&cli.StringFlag{Name: "runs-dir", Usage: "the runs directory (default: the profile's paths.runs_dir)"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON"},
	}
}

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "find past and running runs again: list, show, remove old ones",
		Description: `Every run leaves a directory under the profile's paths.runs_dir with its plan,
its job id, the driver's status and outcome, the logs and the results. These
commands read those directories.` + runsWhereHelp,
		Subcommands: []*cli.Command{
			{
				Name:      "ls",
				Usage:     "list runs, newest first: run id, recipe, job id, state, outcome, where results were staged",
				UsageText: "slurmbench runs ls [--profile FILE | --runs-dir DIR] [--json]",
				Description: `One line per run. STATE is "prepared" (never submitted), "submitted", the
driver's phase while the job runs, or "ended"; for a run without an outcome,
Slurm's state of its job follows when a profile is given.` + runsWhereHelp + `

Examples:
  slurmbench runs ls --profile profiles/testcluster.toml
  slurmbench runs ls --runs-dir /srv/slurmbench/shared/demo/runs --json | jq -r '.[].run_id'`,
				Flags: runsFlags(),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return configErrorf("runs ls takes no arguments, got %q", c.Args().First())
					}
					return launch.RunsList(c.Context, runsOptions(c))
				},
			},
			{
				Name:      "show",
				Usage:     "show one run: its recipe, job, state, outcome, first error, files and staged results",
				UsageText: "slurmbench runs show [--profile FILE | --runs-dir DIR] [--json] RUN_ID|JOB_ID",
				Description: `Shows one run, named by its run id (its directory's name) or its job id.` + runsWhereHelp + `

Examples:
  slurmbench runs show --profile profiles/testcluster.toml mock-2p1d-20261202T201500Z-a1b2c3
  slurmbench runs show --runs-dir /srv/slurmbench/shared/demo/runs --json 4242`,
				Flags: runsFlags(),
				Action: func(c *cli.Context) error {
					if c.NArg() != 1 {
						return configErrorf("runs show: expected one RUN_ID or JOB_ID, got %d arguments", c.NArg())
					}
					return launch.RunsShow(c.Context, runsOptions(c), c.Args().First())
				},
			},
			{
				Name:      "gc",
				Usage:     "remove run directories older than an age whose jobs have ended (dry run unless --delete)",
				UsageText: "slurmbench runs gc --older-than AGE [--delete] [--profile FILE | --runs-dir DIR] [--json]",
				Description: `Lists the runs whose last activity is older than --older-than (7d, 36h,
90m) and that are certainly not running: they have an outcome, Slurm says
their job ended (needs --profile), or they were never submitted. A run whose
job may still run is always kept, as is one a slurmbench process holds the
lock of. Nothing is removed without --delete: the default is a dry run that
says what would go and why the rest stays.` + runsWhereHelp + `

Examples:
  slurmbench runs gc --profile profiles/testcluster.toml --older-than 7d
  slurmbench runs gc --profile profiles/testcluster.toml --older-than 7d --delete`,
				Flags: append(runsFlags(),
					&cli.StringFlag{Name: "older-than", Usage: "minimum age since the run's last activity: 7d, 36h, 90m", Required: true},
					&cli.BoolFlag{Name: "delete", Usage: "remove the directories (default: only say what would be removed)"},
				),
				Action: func(c *cli.Context) error {
					if c.NArg() > 0 {
						return configErrorf("runs gc takes no arguments, got %q", c.Args().First())
					}
					return launch.RunsGC(c.Context, runsOptions(c), c.String("older-than"), c.Bool("delete"))
				},
			},
		},
	}
}

func runsOptions(c *cli.Context) launch.RunsOptions {
	return launch.RunsOptions{IO: ioOf(c), Profile: c.String("profile"), RunsDir: c.String("runs-dir"), Command: c.Command.Name}
}
