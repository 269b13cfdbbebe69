package results

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := func(completed int) *SABenchResult {
		return &SABenchResult{NumPrompts: 80, Completed: completed, TotalOutputTokens: 100 * completed, MaxConcurrency: 8}
	}
	tests := []struct {
		name   string
		res    *SABenchResult
		n      int
		reason string // "" means valid
	}{
		{"all completed", ok(80), 80, ""},
		// 4 of 80 is exactly 5 %: not more than 5 %, so valid.
		{"5% boundary passes", ok(76), 80, ""},
		{"just over 5% fails", ok(75), 80, "request failure rate 6.25% exceeds 5% (75/80 completed)"},
		{"missing completions", ok(40), 80, "request failure rate 50.00% exceeds 5% (40/80 completed)"},
		{"more completed than sent", ok(81), 80, "completed 81 requests but only 80 were sent"},
		{"zero output tokens", &SABenchResult{NumPrompts: 80, Completed: 80, MaxConcurrency: 8}, 80, "total output tokens is 0"},
		{"different num_prompts", &SABenchResult{NumPrompts: 160, Completed: 160, TotalOutputTokens: 5, MaxConcurrency: 8}, 80, "num_prompts is 160, expected 80"},
		{"interrupted", &SABenchResult{NumPrompts: 80, Completed: 80, TotalOutputTokens: 5, Partial: true, MaxConcurrency: 8}, 80, "interrupted"},
		// A zero std_tpot (identical TPOTs) is a valid point, not a crash.
		{"zero std tpot", &SABenchResult{NumPrompts: 80, Completed: 80, TotalOutputTokens: 5, MaxConcurrency: 8,
			Metrics: []MetricStats{{Name: "tpot", Mean: 10, Median: 10, Std: 0}}}, 80, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateSABench(tt.res, tt.n)
			if tt.res.Valid == nil {
				t.Fatal("ValidateSABench did not record a verdict")
			}
			if tt.reason == "" {
				if err != nil || !*tt.res.Valid || tt.res.InvalidReason != "" {
					t.Fatalf("ValidateSABench = %v (valid %v, %q), want valid", err, *tt.res.Valid, tt.res.InvalidReason)
				}
				return
			}
			var inv *InvalidSABenchError
			if !errors.As(err, &inv) {
				t.Fatalf("ValidateSABench = %v, want an *InvalidSABenchError", err)
			}
			if !strings.Contains(err.Error(), "concurrency 8") || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("error %q should name concurrency 8 and %q", err, tt.reason)
			}
			if *tt.res.Valid || !strings.Contains(tt.res.InvalidReason, tt.reason) {
				t.Errorf("result marked valid=%v reason %q", *tt.res.Valid, tt.res.InvalidReason)
			}
		})
	}
}

func TestValidateCombinesReasonsAndNamesError(t *testing.T) {
	res := &SABenchResult{NumPrompts: 20, Completed: 0, MaxConcurrency: 2,
		Errors: []ErrorCount{{Error: "HTTP 500 Internal Server Error: boom", Count: 20}}}
	err := ValidateSABench(res, 20)
	if err == nil {
		t.Fatal("ValidateSABench accepted a run without completions")
	}
	for _, want := range []string{"concurrency 2", "100.00%", "total output tokens is 0", `20×): "HTTP 500 Internal Server Error: boom"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if err := ValidateSABench(nil, 20); err == nil {
		t.Error("ValidateSABench(nil) accepted")
	}
	if err := ValidateSABench(&SABenchResult{}, 0); err == nil {
		t.Error("ValidateSABench with 0 expected prompts accepted")
	}
}
