// Package exitcode is slurmbench's one table of exit codes. Each code names
// the layer of a run that failed, so a CI step (or a person) knows where to
// look without reading logs; the command line, the runner on the login node
// and the driver inside the job all exit through it, and the README's table
// is checked against it (docs/exit-codes.md explains each layer).
package exitcode

import (
	"errors"
	"fmt"
)

// Code is a process exit status with a meaning.
type Code int

// The codes. Their values are a public contract: scripts test for them.
const (
	OK          Code = 0
	Internal    Code = 1   // a bug or an unclassified error
	Config      Code = 2   // bad profile, recipe, flag or environment: nothing was submitted
	Image       Code = 3   // container image import or validation
	Submit      Code = 4   // slurmrestd refused or could not take the job
	Queue       Code = 5   // the allocation never started or ended abnormally
	Health      Code = 6   // workers never became healthy before the deadline
	Engine      Code = 7   // an engine or frontend process died
	Benchmark   Code = 8   // a benchmark point is missing or invalid
	Eval        Code = 9   // gsm8k below its threshold
	Collect     Code = 10  // results could not be collected or staged
	Slurm       Code = 11  // slurmrestd unreachable or erroring, for every command
	Interrupted Code = 130 // SIGINT (128 + 2, as a shell reports it)
	Terminated  Code = 143 // SIGTERM or SIGHUP (128 + 15)
)

// Entry is one row of the table.
type Entry struct {
	Code  Code
	Layer string // what failed, as the README and --help say it
}

// Table lists every code in ascending order.
var Table = []Entry{
	{OK, "success"},
	{Internal, "internal error (a bug)"},
	{Config, "configuration: bad profile, recipe, flag or environment — nothing was submitted"},
	{Image, "image import or validation"},
	{Submit, "submit refused by slurmrestd"},
	{Queue, "allocation / queue: the job never started or ended abnormally"},
	{Health, "health: workers not healthy before the deadline"},
	{Engine, "engine: an engine or frontend process died"},
	{Benchmark, "benchmark validity: a point missing or invalid"},
	{Eval, "eval: gsm8k below its threshold"},
	{Collect, "collection / staging of results"},
	{Slurm, "slurmrestd unreachable or erroring, for every command"},
	{Interrupted, "interrupted (SIGINT)"},
	{Terminated, "interrupted (SIGTERM, SIGHUP)"},
}

// Cause is one cause of failure and the one code every command exits with
// for it. docs/exit-codes.md lists them (a test compares), and the command
// line's tests run each command that can meet a cause and check its code
// against this table.
type Cause struct {
	Name string
	Code Code
}

// The causes, by name.
const (
	CauseBadInput       = "a bad flag, profile, recipe or environment"
	CauseNoToken        = "no slurmrestd token, or one slurmrestd refuses (a failing token_command, scontrol missing)" //nolint:gosec // a cause's description, not a credential
	CauseSlurmDown      = "slurmrestd unreachable, timing out or erroring"
	CauseSubmitRefused  = "Slurm refused the job (partition, size, account)"
	CauseUnmeasurable   = "an endpoint bench or eval cannot measure (https to plain HTTP, no streaming, unknown model)"
	CauseEndpointDown   = "the endpoint or frontend is not reachable"
	CauseImportFailed   = "an image import or validation failed"
	CauseInvalidPoint   = "a benchmark point missing or invalid"
	CauseBelowThreshold = "gsm8k below its threshold"
	CauseStaging        = "results could not be collected or staged"
)

// Causes lists every cause with its code.
var Causes = []Cause{
	{CauseBadInput, Config},
	{CauseNoToken, Config},
	{CauseUnmeasurable, Config},
	{CauseImportFailed, Image},
	{CauseSubmitRefused, Submit},
	{CauseEndpointDown, Engine},
	{CauseInvalidPoint, Benchmark},
	{CauseBelowThreshold, Eval},
	{CauseStaging, Collect},
	{CauseSlurmDown, Slurm},
}

// CodeOf is the code of the named cause (Internal for an unknown name).
func CodeOf(cause string) Code {
	for _, c := range Causes {
		if c.Name == cause {
			return c.Code
		}
	}
	return Internal
}

// String is the code's layer, e.g. "image import or validation".
func (c Code) String() string {
	for _, e := range Table {
		if e.Code == c {
			return e.Layer
		}
	}
	return fmt.Sprintf("exit code %d", int(c))
}

// Error attaches a code to an error. Its ExitCode method is what
// urfave/cli and Of look for.
type Error struct {
	Code Code
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// ExitCode is the process exit status for this error.
func (e *Error) ExitCode() int { return int(e.Code) }

// With marks err as a failure of code's layer; nil stays nil.
func With(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Code: code, Err: err}
}

// Errorf is With(code, fmt.Errorf(format, args...)).
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Err: fmt.Errorf(format, args...)}
}

// Of is the exit code err carries: the outermost ExitCode() in its chain,
// OK for nil and Internal when nothing in the chain names one.
func Of(err error) Code {
	if err == nil {
		return OK
	}
	var coder interface{ ExitCode() int }
	if errors.As(err, &coder) {
		return Code(coder.ExitCode())
	}
	return Internal
}
