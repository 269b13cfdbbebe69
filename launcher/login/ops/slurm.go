// Package ops is the operator commands against slurmrestd — ping,
// status, cancel, nodes and cleanup (infx.launch cleanup's drop-in): how a
// command reaches slurmrestd (a profile, or the SLURM_* environment), and
// one entry per command taking its options struct.
package ops

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/cli"
)

// SlurmOptions say how the operator commands reach slurmrestd: the
// profile's [slurm] table, or the SLURM_* environment without one; the
// flags override either.
type SlurmOptions struct {
	Profile, RestURL, User, APIVersion string
	Debug                              io.Writer // logs each request when set
}

// SlurmClient builds the client from the profile, or from the
// SLURM_* environment when there is none; flags override either. The
// environment never overrides a profile: a sourced test-cluster env file
// must not redirect a production profile.
func SlurmClient(ctx context.Context, o SlurmOptions) (*slurm.Client, error) {
	var cfg slurm.Config
	if path := o.Profile; path != "" {
		p, err := profile.LoadContext(ctx, path)
		if err != nil {
			return nil, exitcode.With(exitcode.Config, err)
		}
		if cfg, err = p.SlurmConfig(); err != nil {
			return nil, exitcode.With(exitcode.Config, err)
		}
	} else {
		cfg.URL, cfg.User, cfg.Token = os.Getenv("SLURM_REST_URL"), os.Getenv("SLURM_USER"), os.Getenv("SLURM_JWT")
	}
	if v := o.RestURL; v != "" {
		cfg.URL, cfg.Commands = v, nil // --rest-url asks for slurmrestd, whatever the profile chose
	}
	if v := o.User; v != "" {
		cfg.User = v
	}
	if v := o.APIVersion; v != "" {
		cfg.APIVersion = v
	}
	if cfg.URL == "" && cfg.Commands == nil {
		// No slurmrestd named: Slurm's own commands, when sbatch is on PATH.
		if _, ok := cli.Available(""); !ok {
			return nil, exitcode.Errorf(exitcode.Config, "no slurmrestd URL and no sbatch on PATH: pass --profile FILE or --rest-url URL (or set SLURMBENCH_PROFILE or SLURM_REST_URL)")
		}
		cfg.Commands = cli.New(cli.Config{})
	}
	if o.Debug != nil {
		cfg.Logger = slog.New(slog.NewTextHandler(o.Debug, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	client, err := slurm.New(cfg)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, err)
	}
	return client, nil
}

// PrintJob prints a job as a two-column table.
func PrintJob(w io.Writer, j slurm.Job) {
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

// PrintNodes prints nodes (of partition, when given) as a table or JSON.
func PrintNodes(w io.Writer, nodes []slurm.Node, partition string, asJSON bool) error {
	if part := partition; part != "" {
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
	if asJSON {
		return launch.WriteJSON(w, nodes)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tCPUS\tMEMORY\tGPUS\tPARTITIONS\tREASON")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%d/%d\t%s\t%s\n", n.Name, strings.Join(n.State, "+"),
			n.AllocCPUs, n.CPUs, n.AllocMemory, n.RealMemory, n.GPUsUsed(), n.GPUs(), strings.Join(n.Partitions, ","), n.Reason)
	}
	return tw.Flush()
}
