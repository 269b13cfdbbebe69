package results

import (
	"errors"
	"fmt"
	"strings"
)

// MaxFailurePercent is the largest share of failed requests a valid point
// may have: benchmark_serving.py's own gate (failure_rate > 0.05 fails).
const MaxFailurePercent = 5

// InvalidSABenchError says why an SA-Bench point is not valid.
type InvalidSABenchError struct {
	Concurrency int // 0: no cap
	Reasons     []string
}

func (e *InvalidSABenchError) Error() string {
	conc := "unlimited"
	if e.Concurrency > 0 {
		conc = fmt.Sprint(e.Concurrency)
	}
	return fmt.Sprintf("SA-Bench point at concurrency %s is invalid: %s", conc, strings.Join(e.Reasons, "; "))
}

// ValidateSABench is the gate every SA-Bench point passes, whichever client made
// it: the run finished, its num_prompts is the requested numPrompts, at most
// MaxFailurePercent of the requests failed, no more completed than were
// sent, and some output tokens were produced. It returns an *InvalidSABenchError
// naming the concurrency and every reason, and records the verdict in res
// (Valid, InvalidReason) so that WriteSABench keeps the file, marked.
//
// The failure share is compared in integers: exactly 5 % passes. (The
// Python gate computes 1 - completed/num_prompts in floating point, which
// for 76 of 80 gives 0.05000000000000004 and fails.)
func ValidateSABench(res *SABenchResult, numPrompts int) error {
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
	if res.Completed > numPrompts {
		reasons = append(reasons, fmt.Sprintf("completed %d requests but only %d were sent", res.Completed, numPrompts))
	} else if pct, over := failureRate(res.Completed, numPrompts); over {
		reasons = append(reasons, fmt.Sprintf("request failure rate %.2f%% exceeds %d%% (%d/%d completed)%s",
			pct, MaxFailurePercent, res.Completed, numPrompts, firstError(res)))
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
	return &InvalidSABenchError{Concurrency: res.MaxConcurrency, Reasons: reasons}
}

// firstError names the most frequent failure, when the result knows it.
func firstError(res *SABenchResult) string {
	if len(res.Errors) == 0 {
		return ""
	}
	e := res.Errors[0]
	return fmt.Sprintf(", most frequent error (%d×): %q", e.Count, e.Error)
}

// failureRate is the one failure gate, for the writer (against the
// requested number of prompts) and every reader (against the file's
// num_prompts): over when more than MaxFailurePercent of the requests
// failed, compared in integers. pct is the failed share in percent.
func failureRate(completed, numPrompts int) (pct float64, over bool) {
	failed := numPrompts - completed
	return 100 * float64(failed) / float64(numPrompts), failed*100 > MaxFailurePercent*numPrompts
}

// requiredSABenchFields are the keys both SA-Bench copies always write with
// --percentile-metrics ttft,tpot,itl,e2el; percentiles differ between the
// copies (90/99/99.9 vs 99) and are not required.
var requiredSABenchFields = func() []string {
	keys := []string{"num_prompts", "max_concurrency", "duration", "completed",
		"total_input_tokens", "total_output_tokens", "request_throughput",
		"output_throughput", "total_token_throughput"}
	for _, m := range MetricNames {
		for _, stat := range []string{"mean", "median", "std"} {
			keys = append(keys, stat+"_"+m+"_ms")
		}
	}
	return keys
}()

// Problems lists why a result file cannot count as a measured point; empty
// means valid. It is what the collector, the report and compare read a file
// with: marked invalid by the writer, a required field missing, nothing
// completed, no output tokens, or the failure gate against the file's own
// num_prompts.
func (r *SABenchResult) Problems() []string {
	var probs []string
	if r.Valid != nil && !*r.Valid {
		msg := "marked invalid"
		if r.InvalidReason != "" {
			msg += ": " + r.InvalidReason
		}
		probs = append(probs, msg)
	}
	var missing []string
	for _, k := range requiredSABenchFields {
		if !r.Has(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		probs = append(probs, "missing fields: "+strings.Join(missing, ", "))
	}
	if r.Has("completed") && r.Completed <= 0 {
		probs = append(probs, fmt.Sprintf("%d completed requests", r.Completed))
	}
	if r.Has("total_output_tokens") && r.TotalOutputTokens <= 0 {
		probs = append(probs, fmt.Sprintf("%d output tokens", r.TotalOutputTokens))
	}
	// The writer's own reason already says it when it marked the file for
	// its failure rate: said once.
	writerSaidRate := r.Valid != nil && !*r.Valid && strings.Contains(r.InvalidReason, "failure rate")
	if r.NumPrompts > 0 && r.Completed > 0 && !writerSaidRate {
		if pct, over := failureRate(r.Completed, r.NumPrompts); over {
			probs = append(probs, fmt.Sprintf("failure rate %.1f %% above %.1f %% (%d/%d completed)",
				pct, float64(MaxFailurePercent), r.Completed, r.NumPrompts))
		}
	}
	return probs
}
