package gsm8k

import (
	"errors"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/results"
)

// resultWith is a gsm8k score; a non-number ("N/A") is a filter without one.
func resultWith(strict, flexible any) *results.GSM8KScore {
	num := func(v any) *float64 {
		if f, ok := v.(float64); ok {
			return &f
		}
		return nil
	}
	se := 0.001
	return &results.GSM8KScore{StrictMatch: num(strict), StrictMatchStderr: &se, FlexibleExtract: num(flexible), FlexibleExtractStderr: &se}
}

func TestCheckThresholds(t *testing.T) {
	tests := []struct {
		name     string
		prefix   string
		strict   any
		flexible any
		// wantFail lists the failing metrics as ThresholdFailure.String() renders them.
		wantFail []string
	}{
		{"dsr1 passes at 0.91", "dsr1", 0.91, 0.95, nil},
		{"dsr1 strict below 0.91", "dsr1", 0.905, 0.95,
			[]string{"gsm8k exact_match,strict-match = 0.9050 (< 0.91 from models.dsr1)"}},
		{"dsr1 flexible below 0.91 is gated too", "dsr1", 0.95, 0.8123,
			[]string{"gsm8k exact_match,flexible-extract = 0.8123 (< 0.91 from models.dsr1)"}},
		{"both below", "glm5", 0.93, 0.5, []string{
			"gsm8k exact_match,strict-match = 0.9300 (< 0.94 from models.glm5)",
			"gsm8k exact_match,flexible-extract = 0.5000 (< 0.94 from models.glm5)"}},
		{"unknown model uses default 0.90", "llama9", 0.905, 0.9, nil},
		{"default fails below 0.90", "", 0.899, 0.95,
			[]string{"gsm8k exact_match,strict-match = 0.8990 (< 0.9 from default)"}},
		{"prefix unknown means default", "unknown", 0.899, 0.95,
			[]string{"gsm8k exact_match,strict-match = 0.8990 (< 0.9 from default)"}},
		{"non-numeric values are skipped", "dsr1", "N/A", 0.95, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckThresholds(resultWith(tt.strict, tt.flexible), tt.prefix)
			if tt.wantFail == nil {
				if err != nil {
					t.Fatalf("CheckThresholds = %v, want nil", err)
				}
				return
			}
			var te *ThresholdError
			if !errors.As(err, &te) {
				t.Fatalf("CheckThresholds = %v, want *ThresholdError", err)
			}
			var got []string
			for _, f := range te.Failures {
				got = append(got, f.String())
			}
			if strings.Join(got, "|") != strings.Join(tt.wantFail, "|") {
				t.Errorf("failures = %q, want %q", got, tt.wantFail)
			}
			for _, w := range tt.wantFail {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestCheckThresholdsNeedsAMetric(t *testing.T) {
	var te *ThresholdError
	err := CheckThresholds(resultWith("N/A", "N/A"), "dsr1")
	if !errors.As(err, &te) || !te.NoMetrics {
		t.Errorf("only non-numeric metrics: %v, want NoMetrics", err)
	}
	if err := CheckThresholds(nil, "dsr1"); !errors.As(err, &te) || !te.NoMetrics {
		t.Errorf("no score: %v, want NoMetrics", err)
	}
}

func TestThresholdsResolveAndParse(t *testing.T) {
	th := DefaultThresholds()
	for _, tt := range []struct {
		prefix, task, source string
		min                  float64
	}{
		{"dsr1", "gsm8k", "models.dsr1", 0.91},
		{"qwen3.5", "gsm8k", "models.qwen3.5", 0.94},
		{"dsr1", "gpqa_diamond_cot_n_shot", "default", 0.30},
		{"", "gsm8k", "default", 0.90},
		{"dsr1", "mmlu", "min-score", 0.85},
	} {
		min, source := th.Resolve(tt.prefix, tt.task)
		if min != tt.min || source != tt.source {
			t.Errorf("Resolve(%q, %q) = %v from %s, want %v from %s", tt.prefix, tt.task, min, source, tt.min, tt.source)
		}
	}

	flat, err := ParseThresholds([]byte(`{"gsm8k": 0.8}`))
	if err != nil {
		t.Fatal(err)
	}
	if min, source := flat.Resolve("dsr1", "gsm8k"); min != 0.8 || source != "default" {
		t.Errorf("legacy flat format: %v from %s, want 0.8 from default", min, source)
	}
	if _, err := ParseThresholds([]byte("default: {gsm8k: 1.5}")); err == nil {
		t.Error("threshold 1.5: no error")
	}
	if _, err := ParseThresholds([]byte("default: [")); err == nil {
		t.Error("broken YAML: no error")
	}
}
