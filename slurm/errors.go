package slurm

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Slurm error numbers this package acts on (slurm_errno.h).
const (
	errnoAuth         = 1007 // SLURM_PROTOCOL_AUTHENTICATION_ERROR
	errnoInvalidJobID = 2017 // ESLURM_INVALID_JOB_ID
)

// communicationErrnos are slurmctld's "I don't know" answers: the RPC
// between slurmrestd and slurmctld broke somewhere, so slurmctld may or may
// not have acted on it. A submit that gets one may have made the job.
var communicationErrnos = map[int]bool{
	11:   true, // EAGAIN: slurmctld too busy to take the RPC
	1000: true, // SLURM_UNEXPECTED_MSG_ERROR
	1001: true, // SLURM_COMMUNICATIONS_CONNECTION_ERROR
	1002: true, // SLURM_COMMUNICATIONS_SEND_ERROR
	1003: true, // SLURM_COMMUNICATIONS_RECEIVE_ERROR
	1004: true, // SLURM_COMMUNICATIONS_SHUTDOWN_ERROR
	1008: true, // SLURM_PROTOCOL_INSANE_MSG_LENGTH
	5000: true, // SLURM_PROTOCOL_SOCKET_IMPL_ZERO_RECV_LENGTH
	5001: true, // SLURM_PROTOCOL_SOCKET_IMPL_NEGATIVE_RECV_LENGTH
	5002: true, // SLURM_PROTOCOL_SOCKET_IMPL_NOT_ALL_DATA_SENT
	5003: true, // ESLURM_PROTOCOL_INCOMPLETE_PACKET
	5004: true, // SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT
	5005: true, // SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT: "Zero Bytes were transmitted or received"
}

// Problem is one entry of slurmrestd's errors[] or warnings[].
type Problem struct {
	Number      int    `json:"error_number,omitempty"`
	Error       string `json:"error,omitempty"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
}

func (p Problem) String() string {
	switch {
	case p.Error != "" && p.Description != "" && p.Error != p.Description:
		return p.Error + " (" + p.Description + ")"
	case p.Error != "":
		return p.Error
	default:
		return p.Description
	}
}

// APIError is a response from slurmrestd that says the call failed: a
// non-2xx status, or a 2xx whose errors[] is not empty. Callers wrap it with
// the call that failed, so err.Error() reads
// `submitting job "x": slurmrestd 500: Invalid partition name specified (Batch job submission failed)`.
type APIError struct {
	Method string
	Path   string // URL path, e.g. /slurm/v0.0.41/job/submit
	Status int    // HTTP status
	// Errors are slurmrestd's errors[] (plus v0.0.42+ per-job status errors).
	Errors   []Problem
	Warnings []Problem
	// Body is the start of a non-JSON body ("Authentication failure").
	Body string
	// TokenExpired is set when the token sent had already expired by its
	// own exp claim, which explains most 401/511 answers.
	TokenExpired bool
	// Via names who answered in slurmrestd's place ("Slurm's commands").
	Via string
}

func (e *APIError) Error() string {
	var parts []string
	for _, p := range e.Errors {
		if s := p.String(); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 && e.Body != "" {
		parts = append(parts, e.Body)
	}
	if len(parts) == 0 {
		parts = append(parts, http.StatusText(e.Status))
	}
	who := fmt.Sprintf("slurmrestd %d", e.Status)
	if e.Via != "" {
		who = e.Via
	}
	msg := fmt.Sprintf("%s: %s", who, strings.Join(parts, "; "))
	if e.TokenExpired {
		msg += " (the token has expired; configure a token command to mint fresh ones)"
	}
	return msg
}

// hasErrno reports whether any of the errors carries Slurm error number n.
func (e *APIError) hasErrno(n int) bool {
	for _, p := range e.Errors {
		if p.Number == n {
			return true
		}
	}
	return false
}

// definitive reports whether slurmrestd gave a verdict: a 4xx other than
// 408 (timeout) and 429 (throttled), or errors[] with a Slurm error that is
// not a communication failure. Such an answer is final and must not be
// retried; anything else may succeed when asked again.
func (e *APIError) definitive() bool {
	switch {
	case e.Status == http.StatusRequestTimeout, e.Status == http.StatusTooManyRequests:
		return false
	case e.Status == 511, e.Status >= 400 && e.Status < 500:
		return true
	}
	verdict := false
	for _, p := range e.Errors {
		if communicationErrnos[p.Number] {
			return false
		}
		if p.Number != 0 || p.Error != "" {
			verdict = true
		}
	}
	return verdict
}

// IsNotFound reports whether err says the job (or node, partition) does not
// exist: Slurm error 2017, or a JSON 404. A 404 for an unknown URL (an API
// version the server does not serve) is not "not found"; see IsUnsupported.
func IsNotFound(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	return e.hasErrno(errnoInvalidJobID) || (e.Status == http.StatusNotFound && e.Body == "")
}

// IsUnsupported reports whether slurmrestd does not serve the URL at all
// (an API version or plugin it does not load, e.g. slurmdb without slurmdbd).
func IsUnsupported(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Status == http.StatusNotFound && e.Body != "" && len(e.Errors) == 0
}

// IsAuth reports whether slurmrestd refused the credentials: 401, 403, 511
// or Slurm error 1007 (bad, expired or mismatched token).
func IsAuth(err error) bool {
	var e *APIError
	if !errors.As(err, &e) {
		return false
	}
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden, 511:
		return true
	}
	return e.hasErrno(errnoAuth)
}

// IsRejected reports whether Slurm itself turned the request down (a bad
// partition, too many nodes, ...): retrying the same request cannot help.
func IsRejected(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.definitive() && !IsAuth(err)
}

var (
	// ErrNoAccounting means slurmrestd has no slurmdb endpoints (no slurmdbd).
	ErrNoAccounting = errors.New("slurm accounting (slurmdbd) is not available")
	// ErrUnknownFinalState is matched by *UnknownFinalStateError.
	ErrUnknownFinalState = errors.New("final state unknown")
	// ErrSubmitOutcomeUnknown means a submit failed ambiguously and the job
	// could not be looked up afterwards: it may or may not exist.
	ErrSubmitOutcomeUnknown = errors.New("submit outcome unknown")
	// ErrControllerDown means ping reached slurmrestd but no slurmctld
	// answered UP. slurmrestd also reports DOWN when the token is bad.
	ErrControllerDown = errors.New("no slurmctld is UP")
)

// UnknownFinalStateError says a job left slurmctld (MinJobAge passed) and no
// accounting could say how it ended. It is never turned into a state.
type UnknownFinalStateError struct {
	ID       JobID
	LastSeen State // zero if the job was never seen
	Reason   string
	// NoAccounting is set when there was no accounting to ask: slurmctld's
	// "not found" alone does not prove the job ended (a slurmrestd
	// hiccup answers errno 2017 for a live job), so Wait never ends on it.
	NoAccounting bool
	// For is how long both slurmctld and accounting have not known the
	// job (set by Wait).
	For time.Duration
}

func (e *UnknownFinalStateError) Error() string {
	last := "it was never seen"
	if !e.LastSeen.IsZero() {
		last = "last seen " + e.LastSeen.String()
	}
	if e.For > 0 {
		last += fmt.Sprintf("; gone for %s", e.For.Round(time.Second))
	}
	return fmt.Sprintf("job %d: final state unknown: %s; %s", e.ID, e.Reason, last)
}

// Is makes errors.Is(err, ErrUnknownFinalState) true.
func (e *UnknownFinalStateError) Is(target error) bool { return target == ErrUnknownFinalState }
