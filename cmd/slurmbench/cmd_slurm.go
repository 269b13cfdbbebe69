package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/launch"
	"github.com/slurmbench/slurmbench/slurm"
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

func jobIDArg(c *cli.Context) (slurm.JobID, error) {
	if c.NArg() != 1 {
		return 0, configErrorf("%s: expected exactly one JOBID, got %d arguments", c.Command.Name, c.NArg())
	}
	id, err := slurm.ParseJobID(c.Args().First())
	if err != nil {
		return 0, configErrorf("%s: %w", c.Command.Name, err)
	}
	return id, nil
}

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
		Flags: append(slurmFlags(), &cli.BoolFlag{Name: "json", Usage: "print the result as JSON"}),
		Action: func(c *cli.Context) error {
			client, err := launch.SlurmClient(c.Context, slurmOptions(c))
			if err != nil {
				return err
			}
			res, err := client.Ping(c.Context)
			if err != nil {
				return exitcode.With(slurm.ExitCode(err, exitcode.Slurm), err)
			}
			if c.Bool("json") {
				return launch.WriteJSON(c.App.Writer, res)
			}
			s := res.Server
			fmt.Fprintf(c.App.Writer, "slurmrestd %s: Slurm %s, API %s", s.URL, s.SlurmRelease, s.APIVersion)
			if s.Cluster != "" {
				fmt.Fprintf(c.App.Writer, ", cluster %s", s.Cluster)
			}
			fmt.Fprintln(c.App.Writer)
			for _, ctl := range res.Controllers {
				fmt.Fprintf(c.App.Writer, "slurmctld %s (%s): %s in %s\n", ctl.Hostname, ctl.Mode, ctl.Pinged, ctl.Latency)
			}
			return nil
		},
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
		Flags: append(slurmFlags(), &cli.BoolFlag{Name: "json", Usage: "print the job as JSON"}),
		Action: func(c *cli.Context) error {
			id, err := jobIDArg(c)
			if err != nil {
				return err
			}
			client, err := launch.SlurmClient(c.Context, slurmOptions(c))
			if err != nil {
				return err
			}
			j, err := client.LookupJob(c.Context, id)
			if err != nil {
				return exitcode.With(slurm.ExitCode(err, exitcode.Slurm), err)
			}
			if c.Bool("json") {
				return launch.WriteJSON(c.App.Writer, j)
			}
			launch.PrintJob(c.App.Writer, j)
			return nil
		},
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
		Flags: append(slurmFlags(), &cli.StringFlag{Name: "signal", Aliases: []string{"s"}, Usage: "signal name or number, e.g. TERM, SIGUSR1, 10"}, jsonFlag()),
		Action: func(c *cli.Context) error {
			id, err := jobIDArg(c)
			if err != nil {
				return err
			}
			client, err := launch.SlurmClient(c.Context, slurmOptions(c))
			if err != nil {
				return err
			}
			if sig := c.String("signal"); sig != "" {
				if err := client.SignalJob(c.Context, id, sig); err != nil {
					return exitcode.With(slurm.ExitCode(err, exitcode.Slurm), err)
				}
				if c.Bool("json") {
					return launch.WriteJSON(c.App.Writer, map[string]any{"job_id": id, "signalled": strings.ToUpper(sig)})
				}
				fmt.Fprintf(c.App.Writer, "signalled job %d with %s\n", id, strings.ToUpper(sig))
				return nil
			}
			if err := client.CancelJob(c.Context, id); err != nil {
				return exitcode.With(slurm.ExitCode(err, exitcode.Slurm), err)
			}
			if c.Bool("json") {
				return launch.WriteJSON(c.App.Writer, map[string]any{"job_id": id, "cancelled": true})
			}
			fmt.Fprintf(c.App.Writer, "cancelled job %d\n", id)
			return nil
		},
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
		Action: func(c *cli.Context) error {
			client, err := launch.SlurmClient(c.Context, slurmOptions(c))
			if err != nil {
				return err
			}
			nodes, err := client.ListNodes(c.Context)
			if err != nil {
				return exitcode.With(slurm.ExitCode(err, exitcode.Slurm), err)
			}
			return launch.PrintNodes(c.App.Writer, nodes, c.String("partition"), c.Bool("json"))
		},
	}
}

func slurmOptions(c *cli.Context) launch.SlurmOptions {
	o := launch.SlurmOptions{Profile: c.String("profile"), RestURL: c.String("rest-url"), User: c.String("user"), APIVersion: c.String("api-version")}
	if c.Bool("debug") {
		o.Debug = c.App.ErrWriter
	}
	return o
}
