package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// noRetryKey marks a request context whose request must be sent once.
type noRetryKey struct{}

func (c *Client) newRetryClient(transport http.RoundTripper) *retryablehttp.Client {
	rc := retryablehttp.NewClient()
	rc.HTTPClient = &http.Client{Transport: transport, Timeout: c.cfg.RequestTimeout, CheckRedirect: checkRedirect}
	rc.Logger = nil // retryablehttp would log full URLs on its own; we log through slog
	rc.RetryMax = c.cfg.Retry.Max
	rc.RetryWaitMin = c.cfg.Retry.WaitMin
	rc.RetryWaitMax = c.cfg.Retry.WaitMax
	rc.CheckRetry = checkRetry
	rc.Backoff = jitterBackoff
	// Hand back the last response after the retries run out, so its
	// errors[] reach the caller instead of "giving up after N attempts".
	rc.ErrorHandler = retryablehttp.PassthroughErrorHandler
	rc.RequestLogHook = func(_ retryablehttp.Logger, r *http.Request, attempt int) {
		if attempt > 0 {
			c.log.Info("retrying slurmrestd request", "method", r.Method, "path", r.URL.Path, "attempt", attempt+1)
		}
	}
	return rc
}

// checkRetry retries connection errors and transient server answers of
// idempotent requests. It never retries a request marked once (submit),
// an auth failure (511 is a 5xx), or a 5xx carrying a Slurm verdict in
// errors[] (slurmrestd answers 500 to a bad partition).
func checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if once, _ := ctx.Value(noRetryKey{}).(bool); once {
		return false, nil
	}
	var redirect *RedirectError
	if errors.As(err, &redirect) {
		return false, nil // a refused redirect is refused again
	}
	if err != nil {
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return true, nil
	case code == 511, code == http.StatusNotImplemented:
		return false, nil
	case code >= 500:
		return !hasVerdict(resp), nil
	}
	return false, nil
}

// hasVerdict peeks at a 5xx body (and puts it back) to see whether
// slurmrestd gave a definitive Slurm error.
func hasVerdict(resp *http.Response) bool {
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return false
	}
	var env envelope
	if json.Unmarshal(body, &env) != nil {
		return false
	}
	e := &APIError{Status: resp.StatusCode, Errors: env.Errors}
	return e.definitive()
}

// jitterBackoff doubles from min up to max and waits a random time in the
// upper half of that, so clients that failed together do not retry
// together. A Retry-After on 429/503 wins.
func jitterBackoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && (resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable) {
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s >= 0 {
			return min(time.Duration(s)*time.Second, hi)
		}
	}
	d := lo << min(attempt, 30)
	if d <= 0 || d > hi {
		d = hi
	}
	half := d / 2
	return half + rand.N(half+1) //nolint:gosec // retry jitter, not a secret
}
