package sabench

import (
	"errors"
	"fmt"
	"strings"
)

// MaxFailurePercent is the largest share of failed requests a valid point
// may have: benchmark_serving.py's own gate (failure_rate > 0.05 fails).
const MaxFailurePercent = 5

// InvalidError says why an SA-Bench point is not valid.
type InvalidError struct {
	Concurrency int // 0: no cap
	Reasons     []string
}

func (e *InvalidError) Error() string {
	conc := "unlimited"
	if e.Concurrency > 0 {
		conc = fmt.Sprint(e.Concurrency)
	}
	return fmt.Sprintf("SA-Bench point at concurrency %s is invalid: %s", conc, strings.Join(e.Reasons, "; "))
}

// Validate is the gate every SA-Bench point passes, whichever client made
// it: the run finished, its num_prompts is the requested numPrompts, at most
// MaxFailurePercent of the requests failed, no more completed than were
// sent, and some output tokens were produced. It returns an *InvalidError
// naming the concurrency and every reason, and records the verdict in res
// (Valid, InvalidReason) so that WriteResult keeps the file, marked.
//
// The failure share is compared in integers: exactly 5 % passes. (The
// Python gate computes 1 - completed/num_prompts in floating point, which
// for 76 of 80 gives 0.05000000000000004 and fails.)
func Validate(res *Result, numPrompts int) error {
	if res == nil {
		return errors.New("validating SA-Bench result: no result")
	}
	if numPrompts <= 0 {
		return fmt.Errorf("validating SA-Bench result: expected number of prompts must be positive (got %d)", numPrompts)
	}
	var reasons []string
	if res.Partial {
		reasons = append(reasons, "the run was interrupted before every request finished")
	}
	if res.NumPrompts != numPrompts {
		reasons = append(reasons, fmt.Sprintf("num_prompts is %d, expected %d", res.NumPrompts, numPrompts))
	}
	switch failed := numPrompts - res.Completed; {
	case res.Completed > numPrompts:
		reasons = append(reasons, fmt.Sprintf("completed %d requests but only %d were sent", res.Completed, numPrompts))
	case failed*100 > MaxFailurePercent*numPrompts:
		reasons = append(reasons, fmt.Sprintf("request failure rate %.2f%% exceeds %d%% (%d/%d completed)%s",
			100*float64(failed)/float64(numPrompts), MaxFailurePercent, res.Completed, numPrompts, firstError(res)))
	}
	if res.TotalOutputTokens <= 0 {
		reasons = append(reasons, fmt.Sprintf("total output tokens is %d", res.TotalOutputTokens))
	}

	valid := len(reasons) == 0
	res.Valid = &valid
	res.InvalidReason = strings.Join(reasons, "; ")
	if valid {
		return nil
	}
	return &InvalidError{Concurrency: res.MaxConcurrency, Reasons: reasons}
}

// firstError names the most frequent failure, when the result knows it.
func firstError(res *Result) string {
	if len(res.Errors) == 0 {
		return ""
	}
	e := res.Errors[0]
	return fmt.Sprintf(", most frequent error (%d×): %q", e.Count, e.Error)
}
