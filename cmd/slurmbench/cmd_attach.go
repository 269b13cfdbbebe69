package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/sigctx"
	"github.com/slurmbench/slurmbench/login/launch"
	"github.com/slurmbench/slurmbench/login/runner"
	"github.com/slurmbench/slurmbench/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// runOfJob finds a job's run directory and plan through slurmrestd.
func runOfJob(c *cli.Context) (*slurm.Client, slurm.JobID, string, error) {
	if c.NArg() != 1 {
		return nil, 0, "", configErrorf("give one JOBID")
	}
	id, err := slurm.ParseJobID(c.Args().First())
	if err != nil {
		return nil, 0, "", configErrorf("JOBID %q: %v", c.Args().First(), err)
	}
	prof, err := launch.LoadProfile(c.Context, c.String("profile"))
	if err != nil {
		return nil, 0, "", err
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Config, err)
	}
	job, err := client.LookupJob(c.Context, id)
	if err != nil {
		return nil, 0, "", exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("looking up job %d: %w", id, err))
	}
	dir, err := runner.RunDirOf(job)
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Config, err)
	}
	return client, id, dir, nil
}

func attachCommand() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "follow a job submitted earlier (the runner restarted or was killed) to its end, collect and stage",
		UsageText: "slurmbench attach --profile FILE (JOBID | --run-id ID) [--stage-dir DIR]",
		Description: `Finds the run directory — the job's working directory through slurmrestd, or
<runs_dir>/<ID> with --run-id, whose submit journal names the job (found by
its submit key if the runner died before the answer) — and continues exactly
as run does after submitting: phases, health wait, benchmark progress, the
driver's log; an interrupt cancels the job; at the end it judges the job,
collects and stages the results. Exits with run's codes. Only one run or
attach follows a run directory at a time.

slurmbench run --run-id ID does the same for a run directory whose job was
submitted (a GitHub re-run): it adopts the job instead of submitting again.

` + exitCodesHelp + `

Examples:
  slurmbench attach -p profiles/b200-dgxc.toml 4242 --stage-dir out/
  slurmbench attach -p profiles/b200-dgxc.toml --run-id 20260102-030405-ab12`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.StringFlag{Name: "run-id", Usage: "the run to attach to, instead of a JOBID"},
			&cli.StringFlag{Name: "stage-dir", Usage: "stage results, LOGS/ and the logs bundle here", EnvVars: []string{"GITHUB_WORKSPACE"}},
			&cli.StringFlag{Name: "result-filename", Usage: "InferenceX RESULT_FILENAME for staged names (default: the recipe name)", EnvVars: []string{"RESULT_FILENAME"}},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace different files already in the stage dir"},
			&cli.GenericFlag{Name: "cancel-wait", Usage: "how long to wait for a cancelled job to stop", Value: duration.New(30*time.Second, duration.Wait)},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
			jsonFlag(),
		},
		Action: attachAction,
	}
}

func attachAction(c *cli.Context) error {
	var (
		client *slurm.Client
		id     slurm.JobID
		dir    string
		err    error
	)
	if runID := c.String("run-id"); runID != "" {
		client, dir, err = runDirOfID(c, runID)
	} else {
		client, id, dir, err = runOfJob(c)
	}
	if err != nil {
		return err
	}
	pl, err := runner.ReadPlan(dir)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	var log io.Writer = &launch.PrefixWriter{W: c.App.ErrWriter, Prefix: "  | "}
	if c.Bool("no-driver-log") {
		log = io.Discard
	}
	res, err := runner.Attach(c.Context, runner.Options{
		Plan: pl, Client: client, Progress: c.App.ErrWriter, DriverLog: log,
		CancelWait: durationOf(c, "cancel-wait"), Interrupted: sigctx.Interrupted(c.Context), Hard: sigctx.HardStop(c.Context),
		OnSubmitted: func(id slurm.JobID) { launch.EarlyOutputs(c.App.ErrWriter, pl, id) },
		Stage:       launch.Stage(pl, stageFlags(c), version),
	}, id)
	return launch.Report(ioOf(c), pl, res, err)
}

// runDirOfID is --run-id's run directory under the profile's runs_dir.
func runDirOfID(c *cli.Context, runID string) (*slurm.Client, string, error) {
	if c.NArg() != 0 {
		return nil, "", configErrorf("give a JOBID or --run-id, not both")
	}
	if err := rundir.CheckID(runID); err != nil {
		return nil, "", configErrorf("--run-id %q: not a run id (%v)", runID, err)
	}
	prof, err := launch.LoadProfile(c.Context, c.String("profile"))
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

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "show the driver's log of a job, or one process's",
		UsageText: "slurmbench logs --profile FILE JOBID [-f] [--process NAME]",
		Description: `Examples:
  slurmbench logs -p profiles/b200-dgxc.toml 4242
  slurmbench logs -p profiles/b200-dgxc.toml 4242 --process decode_w0 -f`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.StringFlag{Name: "process", Usage: "a process name from the plan (prefill_w0, frontend_0, benchmark, ...)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing until the job ends"},
		},
		Action: func(c *cli.Context) error {
			client, id, dir, err := runOfJob(c)
			if err != nil {
				return err
			}
			pl, err := runner.ReadPlan(dir)
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			path := pl.Layout.BatchOut
			if name := c.String("process"); name != "" {
				path = ""
				var names []string
				for _, p := range pl.Processes {
					names = append(names, p.Name)
					if p.Name == name {
						path = p.Log
					}
				}
				if path == "" {
					return configErrorf("--process %q is not in the plan (processes: %v)", name, names)
				}
			}
			return launch.PrintLog(c.Context, c.App.Writer, path, c.Bool("follow"), func(ctx context.Context) bool {
				j, err := client.GetJob(ctx, id)
				return err == nil && j.Terminal()
			})
		},
	}
}
