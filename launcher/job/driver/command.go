package driver

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// Command is `driver`: it runs the plan inside the allocation Slurm gave
// the batch script (SLURM_JOB_ID and SLURM_JOB_NODELIST, read through
// o.Getenv, default os.Getenv) and ends with the failing layer's exit code
// (6 health, 7 engine, 8 benchmark, 9 eval); outside an allocation it
// refuses (exit 2).
func Command(ctx context.Context, o Options) error {
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	o.JobID, o.NodeList = getenv("SLURM_JOB_ID"), getenv("SLURM_JOB_NODELIST")
	if o.JobID == "" || o.NodeList == "" {
		return exitcode.Errorf(exitcode.Config, "driver runs inside a Slurm allocation: SLURM_JOB_ID and SLURM_JOB_NODELIST are not set")
	}
	res, err := Run(ctx, o)
	if err != nil {
		return exitcode.With(exitcode.Internal, fmt.Errorf("driver: %w", err))
	}
	if res.ExitCode != 0 {
		return exitcode.With(res.ExitCode, fmt.Errorf("run %s: %s", res.Outcome.Result, res.Outcome.Message))
	}
	return nil
}

// ExecCommand is `exec SPEC`: it reads the step spec the driver wrote and
// replaces this process with its program. It returns only on failure: a
// setup step's own exit code, or 127 as a shell reports a program it could
// not run.
func ExecCommand(args []string) error {
	if len(args) != 1 {
		return exitcode.Errorf(exitcode.Config, "exec takes one step spec file")
	}
	spec, err := ReadSpec(args[0])
	if err != nil {
		return exitcode.With(exitcode.Internal, err)
	}
	err = Exec(spec)
	if err == nil {
		err = errors.New("exec returned")
	}
	var se *SetupError
	if errors.As(err, &se) {
		return exitcode.With(exitcode.Code(se.ExitCode()), err)
	}
	return exitcode.With(127, err)
}
