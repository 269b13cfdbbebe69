package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// EndpointsOptions configure WaitEndpoints.
type EndpointsOptions struct {
	Client *http.Client // default http.DefaultClient
	// URLs must each answer GET with 200 in the same pass; duplicates are
	// asked once.
	URLs []string
	// Passes start Interval apart, the first at once; the wait gives up
	// after MaxAttempts passes (defaults as for Wait).
	Interval    time.Duration
	MaxAttempts int
	// RequestTimeout bounds one GET (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// OnPass, if set, is called after every pass with the URLs still
	// pending (none when the wait is over).
	OnPass func(attempt int, pending []string)
	// Abort ends the wait at once when a value arrives, as for Wait.
	Abort <-chan error
}

// WaitEndpoints is the second gate behind a router that lists workers by
// URL (srt-slurm core/health.py@030a673b wait_for_http_endpoints, the
// vLLM Router's get_backend_health_urls): every URL must answer 200 in
// one pass, since the router can count a data-parallel pool before each
// of its APIs has bound its port. It returns a *DeadlineError-like error
// matching ErrDeadline after MaxAttempts passes, an error wrapping
// ErrAborted when a value arrives on Abort, or ctx's cause.
func WaitEndpoints(ctx context.Context, o EndpointsOptions) error {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	var urls []string
	for _, u := range o.URLs {
		if !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		due := start.Add(time.Duration(attempt) * o.Interval)
		var pending []string
		for _, u := range urls {
			select {
			case err := <-o.Abort:
				return aborted(err)
			default:
			}
			if err := getOK(ctx, o.Client, u, o.RequestTimeout); err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("waiting for the workers' health endpoints: %w", context.Cause(ctx))
				}
				pending = append(pending, u)
			}
		}
		if o.OnPass != nil {
			o.OnPass(attempt, pending)
		}
		if len(pending) == 0 {
			select {
			case err := <-o.Abort:
				return aborted(err)
			default:
				return nil
			}
		}
		if attempt >= o.MaxAttempts {
			return fmt.Errorf("%w: %d of %d worker health endpoints not answering 200 after %d passes in %s: %s",
				ErrDeadline, len(pending), len(urls), attempt, time.Since(start).Round(time.Second), strings.Join(pending, ", "))
		}
		timer := time.NewTimer(time.Until(due))
		select {
		case <-timer.C:
		case err := <-o.Abort:
			timer.Stop()
			return aborted(err)
		case <-ctx.Done():
			timer.Stop()
			return fmt.Errorf("waiting for the workers' health endpoints: %w", context.Cause(ctx))
		}
	}
}

// getOK is one GET of u that must answer 200; the body is drained, bounded.
func getOK(ctx context.Context, c *http.Client, u string, timeout time.Duration) error {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}
