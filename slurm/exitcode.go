package slurm

import (
	"errors"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// ExitCode is the one exit code of a failed slurmrestd request, whichever
// command made it: no token, or a token slurmrestd refuses, is
// configuration (2); Slurm turning the request down is rejected's code (4
// for a submit, 11 for the operator commands); anything else — slurmrestd
// unreachable, timing out, erroring — is exitcode.Slurm (11).
func ExitCode(err error, rejected exitcode.Code) exitcode.Code {
	switch {
	case err == nil:
		return exitcode.OK
	case IsTokenError(err) || IsAuth(err):
		return exitcode.Config
	case IsRejected(err) || errors.Is(err, ErrSubmitOutcomeUnknown):
		return rejected
	}
	return exitcode.Slurm
}
