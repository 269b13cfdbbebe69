package ops

import (
	"context"
	"fmt"
	"strings"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/slurm"
)

// OpsOptions are the operator commands' (ping, status, cancel, nodes):
// how to reach slurmrestd, the command's name for messages, its
// arguments, and the flags only one of them has.
type OpsOptions struct {
	launch.IO
	Slurm     SlurmOptions
	Command   string
	Args      []string
	Signal    string // cancel --signal: signal the job's steps instead
	Partition string // nodes --partition: only this partition's nodes
}

// jobIDArg is the one JOBID argument status and cancel take.
func (o OpsOptions) jobIDArg() (slurm.JobID, error) {
	if len(o.Args) != 1 {
		return 0, exitcode.Errorf(exitcode.Config, "%s: expected exactly one JOBID, got %d arguments", o.Command, len(o.Args))
	}
	id, err := slurm.ParseJobID(o.Args[0])
	if err != nil {
		return 0, exitcode.Errorf(exitcode.Config, "%s: %w", o.Command, err)
	}
	return id, nil
}

// jobClient is the one JOBID argument and a client for slurmrestd: what
// every command about one job starts with.
func (o OpsOptions) jobClient(ctx context.Context) (slurm.JobID, *slurm.Client, error) {
	id, err := o.jobIDArg()
	if err != nil {
		return 0, nil, err
	}
	client, err := SlurmClient(ctx, o.Slurm)
	return id, client, err
}

// slurmErr gives a failed slurmrestd call its exit code.
func slurmErr(err error) error { return exitcode.With(slurm.ExitCode(err, exitcode.Slurm), err) }

// Ping is `ping`: slurmrestd's and slurmctld's versions and state.
func Ping(ctx context.Context, o OpsOptions) error {
	client, err := SlurmClient(ctx, o.Slurm)
	if err != nil {
		return err
	}
	res, err := client.Ping(ctx)
	if err != nil {
		return slurmErr(err)
	}
	if o.JSON {
		return launch.WriteJSON(o.Stdout, res)
	}
	s := res.Server
	who := "slurmrestd " + s.URL
	if s.Transport == "cli" {
		who = "Slurm's commands"
	}
	fmt.Fprintf(o.Stdout, "%s: Slurm %s, API %s", who, s.SlurmRelease, s.APIVersion)
	if s.Cluster != "" {
		fmt.Fprintf(o.Stdout, ", cluster %s", s.Cluster)
	}
	fmt.Fprintln(o.Stdout)
	for _, ctl := range res.Controllers {
		fmt.Fprintf(o.Stdout, "slurmctld %s (%s): %s in %s\n", ctl.Hostname, ctl.Mode, ctl.Pinged, ctl.Latency)
	}
	return nil
}

// Status is `status JOBID`: the job as slurmctld, or accounting, knows it.
func Status(ctx context.Context, o OpsOptions) error {
	id, client, err := o.jobClient(ctx)
	if err != nil {
		return err
	}
	j, err := client.LookupJob(ctx, id)
	if err != nil {
		return slurmErr(err)
	}
	if o.JSON {
		return launch.WriteJSON(o.Stdout, j)
	}
	PrintJob(o.Stdout, j)
	return nil
}

// Cancel is `cancel JOBID`: scancel, or scancel --signal with o.Signal.
func Cancel(ctx context.Context, o OpsOptions) error {
	id, client, err := o.jobClient(ctx)
	if err != nil {
		return err
	}
	if sig := o.Signal; sig != "" {
		if err := client.SignalJob(ctx, id, sig); err != nil {
			return slurmErr(err)
		}
		if o.JSON {
			return launch.WriteJSON(o.Stdout, map[string]any{"job_id": id, "signalled": strings.ToUpper(sig)})
		}
		fmt.Fprintf(o.Stdout, "signalled job %d with %s\n", id, strings.ToUpper(sig))
		return nil
	}
	if err := client.CancelJob(ctx, id); err != nil {
		return slurmErr(err)
	}
	if o.JSON {
		return launch.WriteJSON(o.Stdout, map[string]any{"job_id": id, "cancelled": true})
	}
	fmt.Fprintf(o.Stdout, "cancelled job %d\n", id)
	return nil
}

// Nodes is `nodes`: every node (of o.Partition) with what is in use.
func Nodes(ctx context.Context, o OpsOptions) error {
	client, err := SlurmClient(ctx, o.Slurm)
	if err != nil {
		return err
	}
	nodes, err := client.ListNodes(ctx)
	if err != nil {
		return slurmErr(err)
	}
	return PrintNodes(o.Stdout, nodes, o.Partition, o.JSON)
}
