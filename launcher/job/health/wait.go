package health

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Defaults used when a WaitOptions field is zero: srtctl's health_check
// defaults (180 × 10 s = 30 min) and its per-request timeout.
const (
	DefaultInterval       = 10 * time.Second
	DefaultMaxAttempts    = 180
	DefaultRequestTimeout = 5 * time.Second
)

// WaitOptions configure Wait.
type WaitOptions struct {
	Client  *http.Client // default http.DefaultClient; its own Timeout, if any, also applies
	BaseURL string       // the frontend, http://host:port
	Kind    Kind
	Expect  Expect

	// Polls start Interval apart, the first at once; the wait gives up
	// after MaxAttempts polls, MaxAttempts×Interval after it began.
	Interval    time.Duration // default DefaultInterval
	MaxAttempts int           // default DefaultMaxAttempts
	// RequestTimeout bounds one poll (default DefaultRequestTimeout), and
	// a poll never runs past the time the next one is due.
	RequestTimeout time.Duration

	// OnPoll, if set, is called after every poll, from Wait's goroutine,
	// with the attempt number (from 1) and Probe's results.
	OnPoll func(attempt int, s Seen, err error)
	// Abort ends the wait at once when a value arrives: the driver sends
	// the error of a process that exited. Wait receives at most one value,
	// and only when it returns because of it.
	Abort <-chan error
}

// ErrDeadline is matched (errors.Is) by the error Wait returns when the
// frontend was not ready after MaxAttempts polls.
var ErrDeadline = errors.New("health deadline passed")

// ErrAborted is matched by the error Wait returns when a value arrived on
// Abort; that value is wrapped too.
var ErrAborted = errors.New("health wait aborted")

// DeadlineError is the error Wait returns when the deadline passes. It
// matches ErrDeadline.
type DeadlineError struct {
	Attempts int           // polls made
	Elapsed  time.Duration // since Wait began
	Expect   Expect
	Last     Seen  // the last poll's result
	LastErr  error // the last poll's error, nil if it got counts
}

func (e *DeadlineError) Error() string {
	msg := fmt.Sprintf("%s: frontend not ready after %d polls in %s (want %s",
		ErrDeadline, e.Attempts, e.Elapsed.Round(time.Second), e.Expect)
	if e.Last.Kind.countsWorkers() {
		msg += fmt.Sprintf(", last saw %d prefill + %d decode", e.Last.Prefill, e.Last.Decode)
	}
	msg += ")"
	if e.LastErr != nil {
		msg += ": last error: " + e.LastErr.Error()
	} else if e.Last.Detail != "" {
		msg += ": " + e.Last.Detail
	}
	return msg
}

// Is makes errors.Is(err, ErrDeadline) true. LastErr is deliberately not
// unwrapped: a poll's timeout must not read as the wait's own ctx expiring.
func (e *DeadlineError) Is(target error) bool { return target == ErrDeadline }

// pollResult carries one Probe's outcome from its goroutine.
type pollResult struct {
	s   Seen
	err error
}

// Wait polls the frontend until it is ready for o.Expect and returns the
// ready Seen. It returns early with
//   - a *DeadlineError (errors.Is ErrDeadline) after o.MaxAttempts polls;
//   - an error wrapping ErrAborted and the received value as soon as a
//     value arrives on o.Abort, even while a poll is in flight;
//   - an error wrapping ctx's cause when ctx is done.
//
// Each poll runs in its own goroutine so that Abort and ctx are seen at
// once; a poll abandoned that way is cancelled and not waited for.
func Wait(ctx context.Context, o WaitOptions) (Seen, error) {
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if _, err := ParseKind(string(o.Kind)); err != nil {
		return Seen{}, err
	}
	start := time.Now()
	var last Seen
	var lastErr error
	for attempt := 1; ; attempt++ {
		due := start.Add(time.Duration(attempt) * o.Interval) // when the next poll starts
		s, err, stop := poll(ctx, o, due)
		if stop != nil {
			return last, stop
		}
		if err == nil && !s.Kind.countsWorkers() && s.Ready(o.Expect) {
			s.Prefill, s.Decode = o.Expect.Prefill, o.Expect.Decode
		}
		last, lastErr = s, err
		if o.OnPoll != nil {
			o.OnPoll(attempt, s, err)
		}
		if err == nil && s.Ready(o.Expect) {
			// A process that died while the frontend still lists it (Dynamo
			// keeps a lease for seconds) must fail the gate, not pass it.
			select {
			case err := <-o.Abort:
				return last, aborted(err)
			default:
				return s, nil
			}
		}
		if attempt >= o.MaxAttempts {
			return last, &DeadlineError{Attempts: attempt, Elapsed: time.Since(start), Expect: o.Expect, Last: last, LastErr: lastErr}
		}
		timer := time.NewTimer(time.Until(due))
		select {
		case <-timer.C:
		case err := <-o.Abort:
			timer.Stop()
			return last, aborted(err)
		case <-ctx.Done():
			timer.Stop()
			return last, fmt.Errorf("waiting for the frontend to be healthy: %w", context.Cause(ctx))
		}
	}
}

// poll runs one Probe bounded by o.RequestTimeout and the time the next
// poll is due. stop is non-nil when Abort or ctx ended the wait meanwhile.
func poll(ctx context.Context, o WaitOptions, due time.Time) (s Seen, err, stop error) {
	timeout := min(o.RequestTimeout, time.Until(due))
	if timeout <= 0 {
		// Behind schedule (a slow OnPoll): still give this poll a fair
		// chance; the next one is due at once.
		timeout = min(o.RequestTimeout, o.Interval)
	}
	pctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan pollResult, 1) // buffered: an abandoned poll must not block
	go func() {
		s, err := Probe(pctx, o.Client, o.BaseURL, o.Kind)
		done <- pollResult{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err, nil
	case err := <-o.Abort:
		return Seen{}, nil, aborted(err)
	case <-ctx.Done():
		return Seen{}, nil, fmt.Errorf("waiting for the frontend to be healthy: %w", context.Cause(ctx))
	}
}

func aborted(err error) error {
	if err == nil {
		return ErrAborted // a closed channel, or a nil sent
	}
	return fmt.Errorf("%w: %w", ErrAborted, err)
}
