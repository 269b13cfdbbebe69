package slurm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Waiter cadence defaults.
const (
	DefaultPollMin = 500 * time.Millisecond
	DefaultPollMax = 10 * time.Second
	// DefaultGoneWindow is how long a job must be unknown to both
	// slurmctld and accounting before Wait believes it is gone.
	DefaultGoneWindow = 2 * time.Minute
)

// WaitOptions tune Wait; the zero value is usable.
type WaitOptions struct {
	// PollMin is the first gap between polls and the gap after each state
	// change (DefaultPollMin). Gaps grow by half each poll up to PollMax
	// (DefaultPollMax), so a long-running job costs 6 calls a minute.
	PollMin time.Duration
	PollMax time.Duration
	// ErrorTime, when set, is how long polling may keep failing
	// (slurmrestd down, timeouts) before Wait gives up: for a caller that
	// owns a deadline. Zero retries until ctx ends, saying so through
	// OnError: a failing slurmrestd says nothing about the job.
	ErrorTime time.Duration
	// GoneWindow is how long both slurmctld and accounting must not know
	// the job, poll after poll, before Wait returns an
	// *UnknownFinalStateError (DefaultGoneWindow). Without accounting the
	// job's end cannot be confirmed and Wait keeps looking.
	GoneWindow time.Duration
	// OnChange is called with every state read that differs from the
	// previous one, starting with the first. It only ever sees states
	// slurmrestd sent; failed polls are not states.
	OnChange func(Job)
	// OnError is called for each failed poll that Wait will retry.
	OnError func(error)
	// Wake, when a value arrives, makes Wait poll at once and start its
	// gaps again from PollMin: for a caller that learns from elsewhere
	// that the job is about to change state (the driver wrote that it
	// finished), so the end is seen in about a second rather than at the
	// next PollMax.
	Wake <-chan struct{}
}

func (o *WaitOptions) defaults() {
	if o.PollMin <= 0 {
		o.PollMin = DefaultPollMin
	}
	if o.PollMax < o.PollMin {
		o.PollMax = max(DefaultPollMax, o.PollMin)
	}
	if o.GoneWindow <= 0 {
		o.GoneWindow = DefaultGoneWindow
	}
}

// nextPoll is the waiter's cadence: grow the gap by half, up to max.
func nextPoll(prev, lo, hi time.Duration) time.Duration {
	if prev < lo {
		return lo
	}
	return min(prev+prev/2, hi)
}

// Wait polls the job until it reaches a terminal state and returns it.
// Only a definitive answer about the job ends the wait: a terminal state,
// or the job gone from both slurmctld and accounting on every poll for
// GoneWindow (an *UnknownFinalStateError). "Not found" from slurmctld
// without accounting to confirm it, and a failed poll of any kind — a
// timeout, 408, 429, a 5xx with or without a Slurm error, an auth failure
// after the token was refreshed — are retried with a growing gap (until
// ErrorTime, when set) and reported through OnError: one missing or
// unexpected answer never ends a healthy job's wait.
// Wait also returns early when ctx ends, and at once when no poll can ever
// succeed (slurmrestd does not serve the URL; a rejected token with no
// token file or command to get another). On error the returned Job is the
// last one read (zero if none).
func (c *Client) Wait(ctx context.Context, id JobID, opts WaitOptions) (Job, error) {
	opts.defaults()
	var last Job
	seen := false
	var failingSince, goneSince time.Time
	gap := time.Duration(0)
	for {
		j, err := c.LookupJob(ctx, id)
		switch {
		case err == nil:
			failingSince, goneSince = time.Time{}, time.Time{}
			if !seen || !j.State.Equal(last.State) {
				gap = 0 // a change: look again soon, the next one may follow
				if opts.OnChange != nil {
					opts.OnChange(j)
				}
			}
			last, seen = j, true
			if j.Terminal() {
				return j, nil
			}
		case ctx.Err() != nil:
			return last, fmt.Errorf("waiting for job %d: %w", id, ctx.Err())
		case errors.As(err, new(*UnknownFinalStateError)):
			var u *UnknownFinalStateError
			errors.As(err, &u)
			u.LastSeen = last.State
			failingSince = time.Time{}
			if goneSince.IsZero() {
				goneSince = time.Now()
			}
			if u.For = time.Since(goneSince); !u.NoAccounting && u.For >= opts.GoneWindow {
				return last, fmt.Errorf("waiting for job %d: %w", id, err)
			}
			if u.NoAccounting {
				err = fmt.Errorf("%w; without accounting its end cannot be confirmed: still looking", err)
			} else {
				err = fmt.Errorf("%w; looking again until it has been gone for %s", err, opts.GoneWindow)
			}
			c.log.Info("job not found; will look again", "job_id", id, "error", err)
			if opts.OnError != nil {
				opts.OnError(err)
			}
			gap = max(gap, opts.PollMin)
		case IsUnsupported(err), IsAuth(err) && !c.auth.CanRefresh(), errors.As(err, new(*RedirectError)):
			return last, fmt.Errorf("waiting for job %d: %w", id, err)
		default:
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			goneSince = time.Time{}
			if opts.ErrorTime > 0 && time.Since(failingSince) >= opts.ErrorTime {
				return last, fmt.Errorf("waiting for job %d: polling failed for %s: %w", id, opts.ErrorTime, err)
			}
			c.log.Info("polling job failed; will retry", "job_id", id, "error", err)
			if opts.OnError != nil {
				opts.OnError(err)
			}
			// Back off while failing: a throttled or struggling slurmrestd
			// gets fewer calls, not more.
			gap = max(gap, opts.PollMin)
		}
		gap = nextPoll(gap, opts.PollMin, opts.PollMax)
		woken, err := sleepOrWake(ctx, gap, opts.Wake)
		if err != nil {
			return last, fmt.Errorf("waiting for job %d: %w", id, err)
		}
		if woken {
			gap = 0
		}
	}
}

// sleepOrWake sleeps d, or until wake delivers (true), or ctx ends.
func sleepOrWake(ctx context.Context, d time.Duration, wake <-chan struct{}) (bool, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case <-t.C:
		return false, nil
	case <-wake:
		return true, nil
	}
}
