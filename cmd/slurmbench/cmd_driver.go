package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/job/driver"
)

func driverCommand() *cli.Command {
	return &cli.Command{
		Name:      "driver",
		Usage:     "drive a planned run inside its allocation (run by the batch script)",
		UsageText: "slurmbench driver --plan RUN_DIR/plan.json",
		Description: `Runs on the first node of the allocation. Starts every process of the plan as
its own srun step (infra, workers, frontend), waits for the health gate while
watching every step, runs the benchmark and eval steps, and writes
status.json and outcome.json in the run directory. Any step that exits early
ends the run at once, diagnosed from its log. The job's exit code is the
failing layer's (6 health, 7 engine, 8 benchmark, 9 eval).

It reads SLURM_JOB_ID and SLURM_JOB_NODELIST from the environment Slurm gives
the batch script.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "plan", Required: true, Usage: "the run's plan.json (absolute path)"},
			&cli.StringFlag{Name: "srun", Value: "srun", Usage: "srun program"},
		},
		Action: func(c *cli.Context) error {
			jobID, nodes := os.Getenv("SLURM_JOB_ID"), os.Getenv("SLURM_JOB_NODELIST")
			if jobID == "" || nodes == "" {
				return configErrorf("driver runs inside a Slurm allocation: SLURM_JOB_ID and SLURM_JOB_NODELIST are not set")
			}
			res, err := driver.Run(c.Context, driver.Options{PlanFile: c.String("plan"), JobID: jobID, NodeList: nodes, Srun: c.String("srun"), Log: c.App.ErrWriter,
				ProducerVersion: version, ProducerCommit: commit})
			if err != nil {
				return exitcode.With(exitcode.Internal, fmt.Errorf("driver: %w", err))
			}
			if res.ExitCode != 0 {
				return exitcode.With(res.ExitCode, fmt.Errorf("run %s: %s", res.Outcome.Result, res.Outcome.Message))
			}
			return nil
		},
	}
}

func execCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "set a step's environment and exec its program (the first command of every srun step)",
		UsageText: "slurmbench exec RUN_DIR/steps/NAME.json",
		Description: `Reads a step spec written by the driver (argv, environment, working
directory), sets the environment over what the container runtime provides,
and replaces itself with the program: no shell, no string parsing.`,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return configErrorf("exec takes one step spec file")
			}
			spec, err := driver.ReadSpec(c.Args().First())
			if err != nil {
				return exitcode.With(exitcode.Internal, err)
			}
			err = driver.Exec(spec)
			if err == nil {
				err = errors.New("exec returned")
			}
			var se *driver.SetupError
			if errors.As(err, &se) {
				return exitcode.With(exitcode.Code(se.ExitCode()), err)
			}
			// 127, as a shell reports a program it could not run.
			return exitcode.With(127, err)
		},
	}
}
