package results

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slurmbench/slurmbench/internal/pyjson"
)

// GSM8KScore is the gsm8k part of an lm-eval results*.json (inferencex.md §5):
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
