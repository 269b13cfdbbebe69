package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/profile"
	"github.com/slurmbench/slurmbench/launcher/runner"
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
	if c.String("profile") == "" {
		return nil, 0, "", configErrorf("--profile: required (or SLURMBENCH_PROFILE)")
	}
	prof, err := profile.Load(c.String("profile"))
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Config, err)
	}
	client, err := newSlurmClient(c.Context, prof)
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Config, err)
	}
	job, err := client.LookupJob(c.Context, id)
	if err != nil {
		return nil, 0, "", exitcode.With(exitcode.Slurm, fmt.Errorf("looking up job %d: %w", id, err))
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
		Usage:     "follow a running job again (after the runner restarted), to its end",
		UsageText: "slurmbench attach --profile FILE JOBID",
		Description: `Finds the job's run directory (its working directory) through slurmrestd and
follows it exactly as run does: phases, health wait, benchmark progress, the
driver's log; an interrupt cancels the job. Exits with run's codes.

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
		},
		Action: func(c *cli.Context) error {
			client, id, dir, err := runOfJob(c)
			if err != nil {
				return err
			}
			plan, err := runner.ReadPlan(dir)
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			var log io.Writer = &prefixWriter{w: c.App.ErrWriter, prefix: "  | "}
			if c.Bool("no-driver-log") {
				log = io.Discard
			}
			res, err := runner.Attach(c.Context, runner.Options{Plan: plan, Client: client, Progress: c.App.ErrWriter, DriverLog: log,
				Interrupted: interruptedLayer(c.Context), Hard: hardStop(c.Context)}, id)
			sum := summarize(plan, res, nil, err)
			fmt.Fprint(c.App.Writer, sum.Text())
			return err
		},
	}
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
			plan, err := runner.ReadPlan(dir)
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			path := plan.Layout.BatchOut
			if name := c.String("process"); name != "" {
				path = ""
				var names []string
				for _, p := range plan.Processes {
					names = append(names, p.Name)
					if p.Name == name {
						path = p.Log
					}
				}
				if path == "" {
					return configErrorf("--process %q is not in the plan (processes: %v)", name, names)
				}
			}
			return printLog(c.Context, c.App.Writer, path, c.Bool("follow"), func(ctx context.Context) bool {
				j, err := client.GetJob(ctx, id)
				return err == nil && j.Terminal()
			})
		},
	}
}

// printLog prints path, and with follow keeps printing what is appended
// until done reports the job ended.
func printLog(ctx context.Context, w io.Writer, path string, follow bool, done func(context.Context) bool) error {
	var off int64
	pump := func() error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			return err
		}
		n, err := io.Copy(w, f)
		off += n
		return err
	}
	if err := pump(); err != nil && !(follow && os.IsNotExist(err)) {
		return exitcode.With(exitcode.Config, fmt.Errorf("reading %s: %w", filepath.Base(path), err))
	}
	for follow {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
		_ = pump()
		if done(ctx) {
			_ = pump()
			return nil
		}
	}
	return nil
}
