package results

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// GSM8KScore is the gsm8k part of an lm-eval results*.json, whether lm-eval
// or slurmbench's native eval wrote it; it is what the eval gate, the run
// summary and compare read:
// results.gsm8k["exact_match,strict-match"] and ["exact_match,flexible-extract"]
// with their stderr, and n-samples.gsm8k.effective.
type GSM8KScore struct {
	StrictMatch           *float64 `json:"strict_match"`
	StrictMatchStderr     *float64 `json:"strict_match_stderr"`
	FlexibleExtract       *float64 `json:"flexible_extract"`
	FlexibleExtractStderr *float64 `json:"flexible_extract_stderr"`
	Samples               int      `json:"n_samples"`
}

// ErrNoGSM8K is returned (wrapped) by ParseLMEvalGSM8K for a JSON file
// without results.gsm8k.
var ErrNoGSM8K = errors.New("no results.gsm8k")

// ParseLMEvalGSM8K reads the gsm8k scores of an lm-eval result file. lm-eval
// writes "N/A" for a stderr it could not compute; that reads as nil.
func ParseLMEvalGSM8K(data []byte) (*GSM8KScore, error) {
	var doc struct {
		Results  map[string]map[string]json.RawMessage `json:"results"`
		NSamples map[string]struct {
			Effective int `json:"effective"`
		} `json:"n-samples"`
	}
	if err := json.Unmarshal(pyjson.ToJSON(data), &doc); err != nil {
		return nil, err
	}
	g, ok := doc.Results["gsm8k"]
	if !ok {
		return nil, ErrNoGSM8K
	}
	score := &GSM8KScore{Samples: doc.NSamples["gsm8k"].Effective}
	for key, dst := range map[string]**float64{
		"exact_match,strict-match":            &score.StrictMatch,
		"exact_match_stderr,strict-match":     &score.StrictMatchStderr,
		"exact_match,flexible-extract":        &score.FlexibleExtract,
		"exact_match_stderr,flexible-extract": &score.FlexibleExtractStderr,
	} {
		if v, ok := number(g[key]); ok {
			*dst = &v
		}
	}
	if score.StrictMatch == nil && score.FlexibleExtract == nil {
		return nil, fmt.Errorf("results.gsm8k has neither exact_match,strict-match nor exact_match,flexible-extract")
	}
	return score, nil
}

// GSM8KFilter is one filter's exact_match score and its stderr (nil when
// the file has none, or "N/A").
type GSM8KFilter struct {
	Name          string // strict-match or flexible-extract
	Score, Stderr *float64
}

// Filters are the two filters' scores, strict-match first.
func (s *GSM8KScore) Filters() []GSM8KFilter {
	return []GSM8KFilter{
		{"strict-match", s.StrictMatch, s.StrictMatchStderr},
		{"flexible-extract", s.FlexibleExtract, s.FlexibleExtractStderr},
	}
}

// ReadGSM8K reads the gsm8k scores of an lm-eval results file.
func ReadGSM8K(path string) (*GSM8KScore, error) {
	data, err := readlimit.ReadFile(path, MaxResultBytes)
	if err != nil {
		return nil, fmt.Errorf("reading eval result: %w", err)
	}
	score, err := ParseLMEvalGSM8K(data)
	if err != nil {
		return nil, fmt.Errorf("reading gsm8k scores from %s: %w", path, err)
	}
	return score, nil
}
