package sabench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// JSON keys of the result file (inferencex.md §4.4).
const (
	keyRequestGoodput       = "request_goodput:" // sic: the InferenceX copy's key
	keyRequestGoodputSRT    = "request_goodput"  // srt-slurm's copy, read only
	keySlurmbenchClient     = "slurmbench_client"
	keySlurmbenchPartial    = "slurmbench_partial"
	keySlurmbenchErrors     = "slurmbench_errors"
	keySlurmbenchValid      = "slurmbench_valid"
	keySlurmbenchInvalidWhy = "slurmbench_invalid_reason"
)

// metricKey matches mean_/median_/std_/p<P>_<metric>_ms.
var metricKey = regexp.MustCompile(`^(mean|median|std|p([0-9]+(?:\.[0-9]+)?))_(ttft|tpot|itl|e2el)_ms$`)

// PercentileKey is the p<P> word benchmark_serving.py uses: "p99", "p99.9".
func PercentileKey(p float64) string {
	return "p" + strconv.FormatFloat(p, 'f', -1, 64)
}

type rawField struct {
	key string
	val json.RawMessage
}

// MarshalJSON writes the result as benchmark_serving.py does (json.dump
// separators, key order, Python float formatting, "inf", null), followed
// by the slurmbench_* fields. A result read from a file is written back
// member by member, with only the slurmbench_* fields replaced.
func (r *Result) MarshalJSON() ([]byte, error) {
	var o jsonObject
	if r.raw != nil {
		for _, f := range r.raw {
			if !strings.HasPrefix(f.key, "slurmbench_") {
				o.key(f.key)
				o.b = append(o.b, f.val...)
			}
		}
	} else {
		r.appendFields(&o)
	}
	r.appendSlurmbench(&o)
	return o.close(), nil
}

func (r *Result) appendFields(o *jsonObject) {
	o.str("date", r.Date)
	o.str("backend", r.Backend)
	o.str("model_id", r.ModelID)
	o.str("tokenizer_id", r.TokenizerID)
	o.int("best_of", r.BestOf)
	o.int("num_prompts", r.NumPrompts)
	for _, kv := range r.Metadata {
		o.str(kv.Key, kv.Value)
	}
	o.key("request_rate")
	if math.IsInf(r.RequestRate, 1) {
		o.b = appendJSONString(o.b, "inf")
	} else {
		o.b = appendPyFloat(o.b, r.RequestRate)
	}
	o.float("burstiness", r.Burstiness)
	o.key("max_concurrency")
	if r.MaxConcurrency > 0 {
		o.b = strconv.AppendInt(o.b, int64(r.MaxConcurrency), 10)
	} else {
		o.b = append(o.b, "null"...)
	}
	o.float("duration", r.Duration)
	o.float("benchmark_start_time_unix", r.BenchmarkStartTimeUnix)
	o.float("benchmark_end_time_unix", r.BenchmarkEndTimeUnix)
	o.int("completed", r.Completed)
	o.int("total_input_tokens", r.TotalInputTokens)
	o.int("total_output_tokens", r.TotalOutputTokens)
	o.float("request_throughput", r.RequestThroughput)
	o.key(keyRequestGoodput)
	if r.RequestGoodput != nil {
		o.b = appendPyFloat(o.b, *r.RequestGoodput)
	} else {
		o.b = append(o.b, "null"...)
	}
	o.float("output_throughput", r.OutputThroughput)
	o.float("total_token_throughput", r.TotalTokenThroughput)
	o.ints("input_lens", r.InputLens)
	o.ints("output_lens", r.OutputLens)
	if d := r.Detail; d != nil {
		o.floats("ttfts", d.TTFTs)
		o.key("itls")
		o.b = append(o.b, '[')
		for i, l := range d.ITLs {
			if i > 0 {
				o.b = append(o.b, ", "...)
			}
			o.b = appendFloatList(o.b, l)
		}
		o.b = append(o.b, ']')
		o.strs("generated_texts", d.GeneratedTexts)
		o.strs("errors", d.Errors)
	}
	for _, m := range r.Metrics {
		o.float("mean_"+m.Name+"_ms", m.Mean)
		o.float("median_"+m.Name+"_ms", m.Median)
		o.float("std_"+m.Name+"_ms", m.Std)
		for _, p := range m.Percentiles {
			o.float(PercentileKey(p.P)+"_"+m.Name+"_ms", p.Value)
		}
	}
}

func (r *Result) appendSlurmbench(o *jsonObject) {
	if r.Client != "" {
		o.str(keySlurmbenchClient, r.Client)
	}
	if r.Partial {
		o.key(keySlurmbenchPartial)
		o.b = append(o.b, "true"...)
	}
	if len(r.Errors) > 0 {
		o.key(keySlurmbenchErrors)
		o.b = append(o.b, '[')
		for i, e := range r.Errors {
			if i > 0 {
				o.b = append(o.b, ", "...)
			}
			o.b = append(o.b, `{"error": `...)
			o.b = appendJSONString(o.b, e.Error)
			o.b = append(o.b, `, "count": `...)
			o.b = strconv.AppendInt(o.b, int64(e.Count), 10)
			o.b = append(o.b, '}')
		}
		o.b = append(o.b, ']')
	}
	if r.Valid != nil {
		o.key(keySlurmbenchValid)
		o.b = strconv.AppendBool(o.b, *r.Valid)
		if !*r.Valid {
			o.str(keySlurmbenchInvalidWhy, r.InvalidReason)
		}
	}
}

// ParseResult reads a result file's JSON: one written by benchmark_serving.py
// (either copy) or by this package. Members it does not know are kept.
func ParseResult(data []byte) (*Result, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("SA-Bench result is not a JSON object")
	}
	r := &Result{raw: []rawField{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("SA-Bench result: %w", err)
		}
		key := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("SA-Bench result member %q: %w", key, err)
		}
		r.raw = append(r.raw, rawField{key, val})
		if err := r.setField(key, val); err != nil {
			return nil, fmt.Errorf("SA-Bench result member %q: %w", key, err)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("SA-Bench result: %w", err)
	}
	return r, nil
}

// setField fills the typed field for key; unknown keys are only kept raw.
func (r *Result) setField(key string, val json.RawMessage) error {
	if bytes.Equal(val, []byte("null")) {
		return nil
	}
	var err error
	switch key {
	case "date":
		err = json.Unmarshal(val, &r.Date)
	case "backend":
		err = json.Unmarshal(val, &r.Backend)
	case "model_id":
		err = json.Unmarshal(val, &r.ModelID)
	case "tokenizer_id":
		err = json.Unmarshal(val, &r.TokenizerID)
	case "best_of":
		r.BestOf, err = jsonInt(val)
	case "num_prompts":
		r.NumPrompts, err = jsonInt(val)
	case "request_rate":
		var s string
		if json.Unmarshal(val, &s) == nil && s == "inf" {
			r.RequestRate = math.Inf(1)
		} else {
			r.RequestRate, err = jsonFloat(val)
		}
	case "burstiness":
		r.Burstiness, err = jsonFloat(val)
	case "max_concurrency":
		r.MaxConcurrency, err = jsonInt(val)
	case "duration":
		r.Duration, err = jsonFloat(val)
	case "benchmark_start_time_unix":
		r.BenchmarkStartTimeUnix, err = jsonFloat(val)
	case "benchmark_end_time_unix":
		r.BenchmarkEndTimeUnix, err = jsonFloat(val)
	case "completed":
		r.Completed, err = jsonInt(val)
	case "total_input_tokens":
		r.TotalInputTokens, err = jsonInt(val)
	case "total_output_tokens":
		r.TotalOutputTokens, err = jsonInt(val)
	case "request_throughput":
		r.RequestThroughput, err = jsonFloat(val)
	case keyRequestGoodput, keyRequestGoodputSRT:
		var g float64
		if g, err = jsonFloat(val); err == nil {
			r.RequestGoodput = &g
		}
	case "output_throughput":
		r.OutputThroughput, err = jsonFloat(val)
	case "total_token_throughput":
		r.TotalTokenThroughput, err = jsonFloat(val)
	case "input_lens":
		err = json.Unmarshal(val, &r.InputLens)
	case "output_lens":
		err = json.Unmarshal(val, &r.OutputLens)
	case keySlurmbenchClient:
		err = json.Unmarshal(val, &r.Client)
	case keySlurmbenchPartial:
		err = json.Unmarshal(val, &r.Partial)
	case keySlurmbenchErrors:
		var es []struct {
			Error string `json:"error"`
			Count int    `json:"count"`
		}
		if err = json.Unmarshal(val, &es); err == nil {
			for _, e := range es {
				r.Errors = append(r.Errors, ErrorCount(e))
			}
		}
	case keySlurmbenchValid:
		var v bool
		if err = json.Unmarshal(val, &v); err == nil {
			r.Valid = &v
		}
	case keySlurmbenchInvalidWhy:
		err = json.Unmarshal(val, &r.InvalidReason)
	default:
		if m := metricKey.FindStringSubmatch(key); m != nil {
			err = r.setMetric(m[3], m[1], m[2], val)
		}
	}
	return err
}

func (r *Result) setMetric(name, stat, p string, val json.RawMessage) error {
	v, err := jsonFloat(val)
	if err != nil {
		return err
	}
	idx := -1
	for i := range r.Metrics {
		if r.Metrics[i].Name == name {
			idx = i
		}
	}
	if idx < 0 {
		r.Metrics = append(r.Metrics, MetricStats{Name: name})
		idx = len(r.Metrics) - 1
	}
	m := &r.Metrics[idx]
	switch stat {
	case "mean":
		m.Mean = v
	case "median":
		m.Median = v
	case "std":
		m.Std = v
	default:
		pv, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return err
		}
		m.Percentiles = append(m.Percentiles, Percentile{P: pv, Value: v})
	}
	return nil
}

func jsonFloat(val json.RawMessage) (float64, error) {
	var n json.Number
	if err := json.Unmarshal(val, &n); err != nil {
		return 0, err
	}
	return n.Float64()
}

// jsonInt accepts integers and integral floats (a Python int may have been
// through float arithmetic).
func jsonInt(val json.RawMessage) (int, error) {
	f, err := jsonFloat(val)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%s is not an integer", val)
	}
	return int(f), nil
}

// ReadResult reads and parses a result file.
func ReadResult(path string) (*Result, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading SA-Bench result: %w", err)
	}
	r, err := ParseResult(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteResult writes res to path atomically, replacing an earlier result
// of the same name.
func WriteResult(path string, res *Result) error {
	data, err := res.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding SA-Bench result: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, atomicfile.Options{Overwrite: true}); err != nil {
		return fmt.Errorf("writing SA-Bench result: %w", err)
	}
	return nil
}

// jsonObject appends members with json.dump's default separators.
type jsonObject struct {
	b []byte
	n int
}

func (o *jsonObject) key(k string) {
	if o.n == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ", "...)
	}
	o.n++
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ": "...)
}

func (o *jsonObject) close() []byte {
	if o.n == 0 {
		return []byte("{}")
	}
	return append(o.b, '}')
}

func (o *jsonObject) str(k, v string) { o.key(k); o.b = appendJSONString(o.b, v) }
func (o *jsonObject) int(k string, v int) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}
func (o *jsonObject) float(k string, v float64) { o.key(k); o.b = appendPyFloat(o.b, v) }
func (o *jsonObject) floats(k string, v []float64) {
	o.key(k)
	o.b = appendFloatList(o.b, v)
}

func (o *jsonObject) ints(k string, v []int) {
	o.key(k)
	o.b = append(o.b, '[')
	for i, x := range v {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		o.b = strconv.AppendInt(o.b, int64(x), 10)
	}
	o.b = append(o.b, ']')
}

func (o *jsonObject) strs(k string, v []string) {
	o.key(k)
	o.b = append(o.b, '[')
	for i, s := range v {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		o.b = appendJSONString(o.b, s)
	}
	o.b = append(o.b, ']')
}

func appendFloatList(b []byte, v []float64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyFloat(b, x)
	}
	return append(b, ']')
}

// appendPyFloat formats f like Python's repr (which json.dump uses): the
// shortest round-trip digits, ".0" on integral values, and exponent form
// below 1e-4 or from 1e16 on ("1e-05", "1e+16"). JSON has no NaN or
// infinity; they are written as 0.
func appendPyFloat(b []byte, f float64) []byte {
	f = finite(f)
	if f == 0 {
		if math.Signbit(f) {
			return append(b, "-0.0"...)
		}
		return append(b, "0.0"...)
	}
	e := strconv.AppendFloat(nil, f, 'e', -1, 64)
	exp, _ := strconv.Atoi(string(e[bytes.IndexByte(e, 'e')+1:]))
	if exp < -4 || exp >= 16 {
		return append(b, e...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, 'f', -1, 64)
	if bytes.IndexByte(b[start:], '.') < 0 {
		b = append(b, ".0"...)
	}
	return b
}

// appendJSONString quotes s as json.dump does with ensure_ascii: non-ASCII
// as \uXXXX (surrogate pairs above the BMP), control characters escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u4 := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20:
			b = u4(b, r)
		case r < 0x7f: // json.dump escapes everything outside ' '..'~', DEL included
			b = append(b, byte(r))
		case r <= 0xffff:
			b = u4(b, r)
		default:
			r -= 0x10000
			b = u4(b, 0xd800+(r>>10))
			b = u4(b, 0xdc00+(r&0x3ff))
		}
	}
	return append(b, '"')
}
