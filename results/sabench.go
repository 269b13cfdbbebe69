package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// SABenchResult is the JSON SA-Bench's benchmark_serving.py writes with
// --save-result (inferencex.md §4.4), field for field; the native client
// writes the same shape. Fields it does not know (srt-slurm's
// peak_output_tokens_per_s and request_goodput, --metadata pairs, per-request
// arrays) are kept in Extra and written back by MarshalJSON.
type SABenchResult struct {
	Date                   string      `json:"date"`
	Backend                string      `json:"backend"`
	ModelID                string      `json:"model_id"`
	TokenizerID            string      `json:"tokenizer_id"`
	BestOf                 int         `json:"best_of,omitempty"`
	NumPrompts             int         `json:"num_prompts"`
	RequestRate            RequestRate `json:"request_rate"`
	Burstiness             float64     `json:"burstiness"`
	MaxConcurrency         *int        `json:"max_concurrency"`
	Duration               float64     `json:"duration"`
	BenchmarkStartTimeUnix float64     `json:"benchmark_start_time_unix,omitempty"`
	BenchmarkEndTimeUnix   float64     `json:"benchmark_end_time_unix,omitempty"`
	Completed              int         `json:"completed"`
	TotalInputTokens       int         `json:"total_input_tokens"`
	TotalOutputTokens      int         `json:"total_output_tokens"`
	RequestThroughput      float64     `json:"request_throughput"`
	// The key really ends in a colon in InferenceX's copy; null without --goodput.
	RequestGoodput       *float64 `json:"request_goodput:"`
	OutputThroughput     float64  `json:"output_throughput"`
	TotalTokenThroughput float64  `json:"total_token_throughput"`
	InputLens            []int    `json:"input_lens"`
	OutputLens           []int    `json:"output_lens"`

	MeanTTFTMs   float64  `json:"mean_ttft_ms"`
	MedianTTFTMs float64  `json:"median_ttft_ms"`
	StdTTFTMs    float64  `json:"std_ttft_ms"`
	P90TTFTMs    *float64 `json:"p90_ttft_ms,omitempty"`
	P99TTFTMs    *float64 `json:"p99_ttft_ms,omitempty"`
	P999TTFTMs   *float64 `json:"p99.9_ttft_ms,omitempty"`

	MeanTPOTMs   float64  `json:"mean_tpot_ms"`
	MedianTPOTMs float64  `json:"median_tpot_ms"`
	StdTPOTMs    float64  `json:"std_tpot_ms"`
	P90TPOTMs    *float64 `json:"p90_tpot_ms,omitempty"`
	P99TPOTMs    *float64 `json:"p99_tpot_ms,omitempty"`
	P999TPOTMs   *float64 `json:"p99.9_tpot_ms,omitempty"`

	MeanITLMs   float64  `json:"mean_itl_ms"`
	MedianITLMs float64  `json:"median_itl_ms"`
	StdITLMs    float64  `json:"std_itl_ms"`
	P90ITLMs    *float64 `json:"p90_itl_ms,omitempty"`
	P99ITLMs    *float64 `json:"p99_itl_ms,omitempty"`
	P999ITLMs   *float64 `json:"p99.9_itl_ms,omitempty"`

	MeanE2ELMs   float64  `json:"mean_e2el_ms"`
	MedianE2ELMs float64  `json:"median_e2el_ms"`
	StdE2ELMs    float64  `json:"std_e2el_ms"`
	P90E2ELMs    *float64 `json:"p90_e2el_ms,omitempty"`
	P99E2ELMs    *float64 `json:"p99_e2el_ms,omitempty"`
	P999E2ELMs   *float64 `json:"p99.9_e2el_ms,omitempty"`

	// Written by slurmbench's SA-Bench step when a point fails its validity
	// gate; the file is kept so the numbers can still be read.
	SlurmbenchValid         *bool  `json:"slurmbench_valid,omitempty"`
	SlurmbenchInvalidReason string `json:"slurmbench_invalid_reason,omitempty"`

	// Extra holds every key not listed above, verbatim.
	Extra map[string]json.RawMessage `json:"-"`

	// fields is every top-level key of a parsed file in file order, with its
	// value; InferenceX's latency transform walks keys in that order.
	fields []field
}

type field struct {
	key   string
	value json.RawMessage
}

// RequestRate is "inf" or a number of requests per second.
type RequestRate struct {
	Inf   bool
	Value float64
}

func (r RequestRate) MarshalJSON() ([]byte, error) {
	if r.Inf {
		return []byte(`"inf"`), nil
	}
	return json.Marshal(r.Value)
}

func (r *RequestRate) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if strings.EqualFold(s, "inf") {
			*r = RequestRate{Inf: true}
			return nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("request_rate %q: not a number or \"inf\"", s)
		}
		*r = RequestRate{Value: v}
		return nil
	}
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &r.Value)
}

// requiredSABenchFields are the keys both SA-Bench copies always write with
// --percentile-metrics ttft,tpot,itl,e2el; percentiles differ between the
// copies (90/99/99.9 vs 99) and are not required.
var requiredSABenchFields = func() []string {
	keys := []string{"num_prompts", "max_concurrency", "duration", "completed",
		"total_input_tokens", "total_output_tokens", "request_throughput",
		"output_throughput", "total_token_throughput"}
	for _, m := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, stat := range []string{"mean", "median", "std"} {
			keys = append(keys, stat+"_"+m+"_ms")
		}
	}
	return keys
}()

var knownSABenchKeys = sync.OnceValue(func() map[string]bool {
	known := map[string]bool{}
	t := reflect.TypeOf(SABenchResult{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			known[name] = true
		}
	}
	return known
})

// ParseSABench decodes an SA-Bench result. Python's json module writes NaN
// and Infinity for the statistics of a run without successful requests; they
// are read as null so such a file is reported as invalid, not as unreadable.
func ParseSABench(data []byte) (*SABenchResult, error) {
	var r SABenchResult
	if err := json.Unmarshal(pythonJSONToJSON(data), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

func (r *SABenchResult) UnmarshalJSON(b []byte) error {
	fields, err := objectFields(b)
	if err != nil {
		return err
	}
	type plain SABenchResult
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = SABenchResult(p)
	r.fields = fields
	known := knownSABenchKeys()
	for _, f := range fields {
		if !known[f.key] {
			if r.Extra == nil {
				r.Extra = map[string]json.RawMessage{}
			}
			r.Extra[f.key] = f.value
		}
	}
	return nil
}

// MarshalJSON writes the known fields in SA-Bench's order, then Extra sorted
// by key.
func (r SABenchResult) MarshalJSON() ([]byte, error) {
	type plain SABenchResult
	b, err := json.Marshal(plain(r))
	if err != nil || len(r.Extra) == 0 {
		return b, err
	}
	known := knownSABenchKeys()
	keys := make([]string, 0, len(r.Extra))
	for k := range r.Extra {
		if !known[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1])
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		if err := json.Compact(&buf, r.Extra[k]); err != nil {
			return nil, fmt.Errorf("extra field %q: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Has reports whether a parsed result had the top-level key.
func (r *SABenchResult) Has(key string) bool {
	for _, f := range r.orderedFields() {
		if f.key == key {
			return true
		}
	}
	return false
}

// orderedFields returns the top-level fields in file order; for a result
// built in Go, in MarshalJSON's order.
func (r *SABenchResult) orderedFields() []field {
	if r.fields != nil {
		return r.fields
	}
	b, err := r.MarshalJSON()
	if err != nil {
		return nil
	}
	fields, _ := objectFields(b)
	return fields
}

// Problems lists why the result cannot count as a measured point; empty
// means valid. maxFailureRate is the allowed share of failed requests
// (InferenceX's benchmark_serving.py exits above 0.05, §4.3); a negative value
// disables that check.
func (r *SABenchResult) Problems(maxFailureRate float64) []string {
	var probs []string
	if r.SlurmbenchValid != nil && !*r.SlurmbenchValid {
		msg := "marked invalid"
		if r.SlurmbenchInvalidReason != "" {
			msg += ": " + r.SlurmbenchInvalidReason
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
	if maxFailureRate >= 0 && r.NumPrompts > 0 && r.Completed > 0 {
		failed := 1 - float64(r.Completed)/float64(r.NumPrompts)
		if failed > maxFailureRate+1e-12 {
			probs = append(probs, fmt.Sprintf("failure rate %.1f %% above %.1f %% (%d/%d completed)",
				100*failed, 100*maxFailureRate, r.Completed, r.NumPrompts))
		}
	}
	return probs
}

// objectFields lists the top-level keys of a JSON object in order.
func objectFields(b []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object")
	}
	fields := []field{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("field %q: %w", key, err)
		}
		fields = append(fields, field{key: key, value: v})
	}
	return fields, nil
}

// number reads a JSON number; null, strings and the rest are not numbers.
func number(v json.RawMessage) (float64, bool) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// pythonJSONToJSON replaces the bare NaN, Infinity and -Infinity tokens that
// Python's json module emits with null, leaving strings untouched.
func pythonJSONToJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, "null"...)
			i += len("NaN") - 1
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out = append(out, "null"...)
			i += len("-Infinity") - 1
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, "null"...)
			i += len("Infinity") - 1
		default:
			out = append(out, c)
		}
	}
	return out
}
