package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/login/ops"
)

// slurmFlags are shared by the operator commands.
func slurmFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile (TOML); its [slurm] table says how to reach slurmrestd", EnvVars: []string{"SLURMBENCH_PROFILE"}},
		&cli.StringFlag{Name: "rest-url", Usage: "slurmrestd URL, overriding the profile's slurm.rest_url (without a profile: $SLURM_REST_URL)"},
		&cli.StringFlag{Name: "user", Usage: "user for X-SLURM-USER-NAME, overriding the profile's slurm.user (without a profile: $SLURM_USER)"},
		&cli.StringFlag{Name: "api-version", Usage: "pin the slurmrestd API version (e.g. v0.0.41); default: the newest the server serves"},
		&cli.BoolFlag{Name: "debug", Usage: "log each slurmrestd request on stderr (tokens are never logged)"},
	}
}

const slurmConnectionHelp = `
Connection: --profile FILE (or SLURMBENCH_PROFILE) uses the profile's [slurm]
table: rest_url, user, token_env (default SLURM_JWT), token_file, token_command
and api_version. Without a profile, SLURM_REST_URL, SLURM_USER and the token
in SLURM_JWT are used (testcluster/up.sh's env file sets them). --rest-url,
--user and --api-version override either.

Exit status: 0 on success, 2 for bad arguments or configuration, 11 when
slurmrestd is unreachable or answers with an error.`

func pingCommand() *cli.Command {
	return &cli.Command{
		Name:      "ping",
		Usage:     "check that slurmrestd and slurmctld answer, and show the versions in use",
		UsageText: "slurmbench ping [--profile FILE | --rest-url URL] [--json]",
		Description: `Pings slurmctld through slurmrestd, choosing the API version as every
other command does, and prints the Slurm release and API version.

slurmrestd reports the controller DOWN when the token is bad or expired, so
DOWN is reported as an error that says so.

Examples:
  slurmbench ping --profile profiles/gb300-nv.toml
  SLURM_JWT=$(scontrol token lifespan=600 | cut -d= -f2) slurmbench ping --rest-url http://slurmrest:6820
` + slurmConnectionHelp,
		Flags:  append(slurmFlags(), &cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}),
		Action: func(c *cli.Context) error { return ops.Ping(c.Context, opsOptions(c)) },
	}
}

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "show a job's state, exit code and placement",
		UsageText: "slurmbench status [--profile FILE | --rest-url URL] [--json] JOBID",
		Description: `Shows a job as slurmctld reports it, or as accounting (slurmdbd) does once
slurmctld has forgotten it. A job neither knows has an unknown final state:
that is an error (exit 11), never a state. So is any failed query.

Examples:
  slurmbench status --profile profiles/gb300-nv.toml 4242
  slurmbench status --json 4242 | jq -r .state[0]
` + slurmConnectionHelp,
		Flags:  append(slurmFlags(), &cli.BoolFlag{Name: "json", Usage: "print the job as JSON"}),
		Action: func(c *cli.Context) error { return ops.Status(c.Context, opsOptions(c)) },
	}
}

func cancelCommand() *cli.Command {
	return &cli.Command{
		Name:      "cancel",
		Usage:     "cancel a job, or send it a signal",
		UsageText: "slurmbench cancel [--profile FILE | --rest-url URL] [--signal SIG] JOBID",
		Description: `Cancels the job like scancel. With --signal, sends that signal to the job's
steps instead (like scancel --signal) and leaves the job running unless the
signal ends it. Cancelling a job that has already ended is not an error.

Examples:
  slurmbench cancel --profile profiles/gb300-nv.toml 4242
  slurmbench cancel --signal USR1 4242
` + slurmConnectionHelp,
		Flags:  append(slurmFlags(), &cli.StringFlag{Name: "signal", Aliases: []string{"s"}, Usage: "signal name or number, e.g. TERM, SIGUSR1, 10"}, jsonFlag()),
		Action: func(c *cli.Context) error { return ops.Cancel(c.Context, opsOptions(c)) },
	}
}

func nodesCommand() *cli.Command {
	return &cli.Command{
		Name:      "nodes",
		Usage:     "list the cluster's nodes: state, CPUs, memory and GPUs in use",
		UsageText: "slurmbench nodes [--profile FILE | --rest-url URL] [--partition NAME] [--json]",
		Description: `Lists every node slurmctld knows, one line each, with allocated/total CPUs,
memory (MiB) and GPUs (from the node's GRES). --partition keeps the nodes
of one partition.

Examples:
  slurmbench nodes --profile profiles/gb300-nv.toml
  slurmbench nodes --partition batch --json | jq '.[] | select(.state[0]=="IDLE") | .name'
` + slurmConnectionHelp,
		Flags: append(slurmFlags(),
			&cli.StringFlag{Name: "partition", Usage: "only nodes in this partition"},
			&cli.BoolFlag{Name: "json", Usage: "print the nodes as JSON"}),
		Action: func(c *cli.Context) error { return ops.Nodes(c.Context, opsOptions(c)) },
	}
}

func slurmOptions(c *cli.Context) ops.SlurmOptions {
	o := ops.SlurmOptions{Profile: c.String("profile"), RestURL: c.String("rest-url"), User: c.String("user"), APIVersion: c.String("api-version")}
	if c.Bool("debug") {
		o.Debug = c.App.ErrWriter
	}
	return o
}

// opsOptions reads the operator commands' flags into launch's options.
func opsOptions(c *cli.Context) ops.OpsOptions {
	return ops.OpsOptions{IO: ioOf(c), Slurm: slurmOptions(c), Command: c.Command.Name, Args: c.Args().Slice(),
		Signal: c.String("signal"), Partition: c.String("partition")}
}
