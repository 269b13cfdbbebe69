package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/slurm"
)

// newSlurmClient maps a profile's [slurm] table onto a slurmrestd client
// (profile.SlurmConfig says how). It makes no request: the API version is
// chosen on first use.
func newSlurmClient(_ context.Context, p *profile.Profile) (*slurm.Client, error) {
	cfg, err := slurmConfig(p)
	if err != nil {
		return nil, err
	}
	return slurm.New(cfg)
}

func slurmConfig(p *profile.Profile) (slurm.Config, error) { return p.SlurmConfig() }

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

// slurmClientFromFlags builds the client from the profile, or from the
// SLURM_* environment when there is none; flags override either. The
// environment never overrides a profile: a sourced test-cluster env file
// must not redirect a production profile.
func slurmClientFromFlags(c *cli.Context) (*slurm.Client, error) {
	var cfg slurm.Config
	if path := c.String("profile"); path != "" {
		p, err := profile.Load(path)
		if err != nil {
			return nil, exitcode.With(exitcode.Config, err)
		}
		if cfg, err = slurmConfig(p); err != nil {
			return nil, exitcode.With(exitcode.Config, err)
		}
	} else {
		cfg.URL, cfg.User, cfg.Token = os.Getenv("SLURM_REST_URL"), os.Getenv("SLURM_USER"), os.Getenv("SLURM_JWT")
	}
	if v := c.String("rest-url"); v != "" {
		cfg.URL = v
	}
	if v := c.String("user"); v != "" {
		cfg.User = v
	}
	if v := c.String("api-version"); v != "" {
		cfg.APIVersion = v
	}
	if cfg.URL == "" {
		return nil, configErrorf("no slurmrestd URL: pass --profile FILE or --rest-url URL (or set SLURMBENCH_PROFILE or SLURM_REST_URL)")
	}
	if c.Bool("debug") {
		cfg.Logger = slog.New(slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	client, err := slurm.New(cfg)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	return client, nil
}

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

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
			client, err := slurmClientFromFlags(c)
			if err != nil {
				return err
			}
			res, err := client.Ping(c.Context)
			if err != nil {
				return exitcode.With(exitcode.Slurm, err)
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, res)
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
			client, err := slurmClientFromFlags(c)
			if err != nil {
				return err
			}
			j, err := client.LookupJob(c.Context, id)
			if err != nil {
				return exitcode.With(exitcode.Slurm, err)
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, j)
			}
			printJob(c.App.Writer, j)
			return nil
		},
	}
}

func printJob(w io.Writer, j slurm.Job) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	row("job", fmt.Sprintf("%d %s", j.ID, j.Name))
	row("state", j.Outcome())
	row("user", j.User)
	row("partition", j.Partition)
	row("account", j.Account)
	if j.Nodes != "" {
		row("nodes", fmt.Sprintf("%s (%d)", j.Nodes, j.NodeCount))
	} else if j.NodeCount > 0 {
		row("nodes", fmt.Sprintf("%d requested", j.NodeCount))
	}
	row("tres_per_node", j.TRESPerNode)
	row("gres", strings.Join(j.GRESDetail, " "))
	row("submitted", fmtTime(j.SubmitTime))
	row("started", fmtTime(j.StartTime))
	if j.Terminal() {
		row("ended", fmtTime(j.EndTime))
	} else {
		row("ends by", fmtTime(j.EndTime)) // slurmctld's estimate: start + time limit
	}
	if !j.StartTime.IsZero() && !j.EndTime.IsZero() && j.Terminal() {
		row("elapsed", j.EndTime.Sub(j.StartTime).String())
	}
	if j.TimeLimit > 0 {
		row("time_limit", j.TimeLimit.String())
	}
	row("workdir", j.WorkDir)
	row("stdout", j.StdOut)
	if j.StdErr != j.StdOut {
		row("stderr", j.StdErr)
	}
	row("comment", j.Comment)
	row("source", j.Source)
	tw.Flush()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format(time.RFC3339)
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
		Flags: append(slurmFlags(), &cli.StringFlag{Name: "signal", Aliases: []string{"s"}, Usage: "signal name or number, e.g. TERM, SIGUSR1, 10"}),
		Action: func(c *cli.Context) error {
			id, err := jobIDArg(c)
			if err != nil {
				return err
			}
			client, err := slurmClientFromFlags(c)
			if err != nil {
				return err
			}
			if sig := c.String("signal"); sig != "" {
				if err := client.SignalJob(c.Context, id, sig); err != nil {
					return exitcode.With(exitcode.Slurm, err)
				}
				fmt.Fprintf(c.App.Writer, "signalled job %d with %s\n", id, strings.ToUpper(sig))
				return nil
			}
			if err := client.CancelJob(c.Context, id); err != nil {
				return exitcode.With(exitcode.Slurm, err)
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
			client, err := slurmClientFromFlags(c)
			if err != nil {
				return err
			}
			nodes, err := client.ListNodes(c.Context)
			if err != nil {
				return exitcode.With(exitcode.Slurm, err)
			}
			if part := c.String("partition"); part != "" {
				kept := nodes[:0]
				for _, n := range nodes {
					for _, p := range n.Partitions {
						if p == part {
							kept = append(kept, n)
							break
						}
					}
				}
				if len(kept) == 0 {
					return exitcode.With(exitcode.Slurm, fmt.Errorf("no node is in partition %q", part))
				}
				nodes = kept
			}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, nodes)
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tSTATE\tCPUS\tMEMORY\tGPUS\tPARTITIONS\tREASON")
			for _, n := range nodes {
				fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%d/%d\t%s\t%s\n", n.Name, strings.Join(n.State, "+"),
					n.AllocCPUs, n.CPUs, n.AllocMemory, n.RealMemory, n.GPUsUsed(), n.GPUs(), strings.Join(n.Partitions, ","), n.Reason)
			}
			return tw.Flush()
		},
	}
}
