package launch

import (
	"context"
	"fmt"
	"io"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// AttachOptions are attach's: the job to follow (one JOBID in Args) or
// its run (RunID, with no Args), found through the profile.
type AttachOptions struct {
	IO
	Profile string
	Args    []string
	RunID   string
	Stage   StageOptions
	Follow  FollowOptions
}

// Attach is `attach`: it finds the run directory of a job submitted
// earlier and continues exactly as run does after submitting.
func Attach(ctx context.Context, o AttachOptions) error {
	var (
		client *slurm.Client
		id     slurm.JobID
		dir    string
		err    error
	)
	if o.RunID != "" {
		client, dir, err = runOfID(ctx, o.Profile, o.Args, o.RunID)
	} else {
		client, id, dir, err = runOfJob(ctx, o.Profile, o.Args)
	}
	if err != nil {
		return err
	}
	pl, err := runner.ReadPlan(dir)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	res, err := runner.Attach(ctx, runner.Options{
		Plan: pl, Client: client, Progress: o.Stderr, DriverLog: driverLog(o.Stderr, o.Follow),
		CancelWait: o.Follow.CancelWait, Interrupted: o.Interrupted, Hard: o.Hard,
		OnSubmitted: func(id slurm.JobID) { EarlyOutputs(o.Stderr, pl, id) },
		Stage:       Stage(pl, o.Stage, o.Version),
	}, id)
	return Report(o.IO, pl, res, err, o.Stage.StageDir)
}

// LogsOptions are logs': the job (one JOBID in Args), the plan's Process
// whose log to show ("": the driver's), and whether to Follow it.
type LogsOptions struct {
	Stdout  io.Writer
	Profile string
	Args    []string
	Process string
	Follow  bool
}

// Logs is `logs`: it prints the driver's log of a job, or one process's,
// following it until the job ends when asked.
func Logs(ctx context.Context, o LogsOptions) error {
	client, id, dir, err := runOfJob(ctx, o.Profile, o.Args)
	if err != nil {
		return err
	}
	pl, err := runner.ReadPlan(dir)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	path := pl.Layout.BatchOut
	if name := o.Process; name != "" {
		path = ""
		var names []string
		for _, p := range pl.Processes {
			names = append(names, p.Name)
			if p.Name == name {
				path = p.Log
			}
		}
		if path == "" {
			return exitcode.Errorf(exitcode.Config, "--process %q is not in the plan (processes: %v)", name, names)
		}
	}
	return PrintLog(ctx, o.Stdout, path, o.Follow, func(ctx context.Context) bool {
		j, err := client.GetJob(ctx, id)
		return err == nil && j.Terminal()
	})
}

// runOfJob finds a job's run directory through slurmrestd: the job's
// working directory, which must hold a plan.
func runOfJob(ctx context.Context, profilePath string, args []string) (*slurm.Client, slurm.JobID, string, error) {
	if len(args) != 1 {
		return nil, 0, "", exitcode.Errorf(exitcode.Config, "give one JOBID")
	}
	id, err := slurm.ParseJobID(args[0])
	if err != nil {
		return nil, 0, "", exitcode.Errorf(exitcode.Config, "JOBID %q: %v", args[0], err)
	}
	prof, err := LoadProfile(ctx, profilePath)
	if err != nil {
		return nil, 0, "", err
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Config, err)
	}
	job, err := client.LookupJob(ctx, id)
	if err != nil {
		return nil, 0, "", exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("looking up job %d: %w", id, err))
	}
	dir, err := runner.RunDirOf(job)
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Config, err)
	}
	return client, id, dir, nil
}

// runOfID is --run-id's run directory under the profile's runs_dir
// (rundir's rule turns the id into the path).
func runOfID(ctx context.Context, profilePath string, args []string, runID string) (*slurm.Client, string, error) {
	if len(args) != 0 {
		return nil, "", exitcode.Errorf(exitcode.Config, "give a JOBID or --run-id, not both")
	}
	if err := rundir.CheckID(runID); err != nil {
		return nil, "", exitcode.Errorf(exitcode.Config, "--run-id %q: not a run id (%v)", runID, err)
	}
	prof, err := LoadProfile(ctx, profilePath)
	if err != nil {
		return nil, "", err
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return nil, "", exitcode.With(exitcode.Config, err)
	}
	dir, err := rundir.Path(prof.Paths.RunsDir, runID)
	if err == nil {
		err = rundir.IsRunDir(dir)
	}
	if err != nil {
		return nil, "", exitcode.With(exitcode.Config, fmt.Errorf("--run-id %q: %w", runID, err))
	}
	return client, dir, nil
}
