package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/internal/tailbuf"
)

// Command is one run of a Slurm command.
type Command struct {
	Argv []string
	// Env is the command's whole environment; nil inherits slurmbench's.
	Env   []string
	Stdin []byte
	// Limit bounds the standard output read (the standard error keeps
	// its last stderrTail bytes).
	Limit int64
}

func (c Command) String() string { return strings.Join(c.Argv, " ") }

// Result is how a command ended.
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
	// TooLarge is set when the standard output went past Command.Limit;
	// Stdout then holds only its first Limit bytes.
	TooLarge bool
}

// Runner runs commands: exec in production, a fake in tests. An error is
// a command that did not run to an exit status (not found, killed when ctx
// ended); an exit status, zero or not, is a Result.
type Runner interface {
	Run(ctx context.Context, c Command) (Result, error)
}

// ExecRunner runs commands as child processes.
type ExecRunner struct{}

// stderrTail bounds the standard error kept: Slurm's commands print a few
// lines there.
const stderrTail = 64 << 10

// waitDelay bounds how long a killed command's pipes are waited for (a
// grandchild holding them open).
const waitDelay = 5 * time.Second

// Run runs c until it exits or ctx ends (the process is then killed).
func (ExecRunner) Run(ctx context.Context, c Command) (Result, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return Result{}, errors.New("empty command")
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...) //nolint:gosec // argv of a Slurm command, no shell
	cmd.Env = c.Env
	cmd.Stdin = bytes.NewReader(c.Stdin)
	stdout := &readlimit.Buffer{Limit: c.Limit}
	stderr := tailbuf.New(stderrTail)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = waitDelay
	err := cmd.Run()
	res := Result{Stdout: stdout.Bytes(), Stderr: []byte(stderr.String()), TooLarge: stdout.Exceeded()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return res, fmt.Errorf("%s: %w", c.Argv[0], ctx.Err())
	case errors.As(err, &exit) && exit.Exited():
		res.ExitCode = exit.ExitCode()
		return res, nil
	case err != nil:
		return res, err
	}
	return res, nil
}
