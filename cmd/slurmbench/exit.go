package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes tell the failing layer apart, so a CI step (or a person) knows
// where to look without reading logs. They are listed in --help and README.
const (
	exitOK          = 0
	exitInternal    = 1   // a bug or an unclassified error
	exitConfig      = 2   // bad profile, recipe, flag or environment: nothing was submitted
	exitImage       = 3   // container image import or validation
	exitSubmit      = 4   // slurmrestd refused or could not take the job
	exitQueue       = 5   // the allocation never started or ended abnormally
	exitHealth      = 6   // workers never became healthy before the deadline
	exitEngine      = 7   // an engine or frontend process died
	exitBenchmark   = 8   // a benchmark point is missing or invalid
	exitEval        = 9   // gsm8k below its threshold
	exitCollect     = 10  // results could not be collected or staged
	exitSlurm       = 11  // slurmrestd unreachable or erroring (operator commands)
	exitInterrupted = 130 // SIGINT
	exitTerminated  = 143 // SIGTERM or SIGHUP
)

// exitError attaches an exit code to an error; it satisfies cli.ExitCoder.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }
func (e *exitError) ExitCode() int { return e.code }

// withExit marks err as belonging to the layer whose exit code is code.
func withExit(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// configErrorf is the common case: a bad input, named.
func configErrorf(format string, args ...any) error {
	return withExit(exitConfig, fmt.Errorf(format, args...))
}

// reportError prints err on one line and returns its exit code. Joined
// errors (several problems found at once) are separated by "; ".
func reportError(w io.Writer, err error) int {
	code := exitInternal
	var coder interface{ ExitCode() int }
	if errors.As(err, &coder) {
		code = coder.ExitCode()
	}
	if msg := strings.TrimSpace(err.Error()); msg != "" {
		fmt.Fprintf(w, "slurmbench: %s\n", strings.ReplaceAll(msg, "\n", "; "))
	}
	return code
}

// usageError makes a flag that does not parse a config error (exit 2, one
// line) instead of urfave/cli's usage dump on stdout and exit 1.
func usageError(c *cli.Context, err error, _ bool) error {
	return withExit(exitConfig, fmt.Errorf("%w (see slurmbench %s --help)", err, c.Command.Name))
}
