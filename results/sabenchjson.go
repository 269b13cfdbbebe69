package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// JSON keys of the result file.
const (
	keyRequestGoodput       = "request_goodput:" // sic: the InferenceX copy's key
	keyRequestGoodputSRT    = "request_goodput"  // srt-slurm's copy, read only
	keySlurmbenchClient     = "slurmbench_client"
	keySlurmbenchPartial    = "slurmbench_partial"
	keySlurmbenchErrors     = "slurmbench_errors"
	keySlurmbenchValid      = "slurmbench_valid"
	keySlurmbenchInvalidWhy = "slurmbench_invalid_reason"
	keySlurmbenchAdded      = "slurmbench_added_latency"
	keySlurmbenchRead       = "slurmbench_read_latency"
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
func (r *SABenchResult) MarshalJSON() ([]byte, error) {
	var o pyjson.Object
	if r.raw != nil {
		for _, f := range r.raw {
			if !strings.HasPrefix(f.key, "slurmbench_") {
				o.Key(f.key)
				o.Write(f.val)
			}
		}
	} else {
		r.appendFields(&o)
	}
	r.appendSlurmbench(&o)
	return o.Bytes(), nil
}

func (r *SABenchResult) appendFields(o *pyjson.Object) {
	o.Str("date", r.Date)
	o.Str("backend", r.Backend)
	o.Str("model_id", r.ModelID)
	o.Str("tokenizer_id", r.TokenizerID)
	o.Int("best_of", r.BestOf)
	o.Int("num_prompts", r.NumPrompts)
	for _, kv := range r.Metadata {
		o.Str(kv.Key, kv.Value)
	}
	o.Key("request_rate")
	if math.IsInf(r.RequestRate, 1) {
		o.Write(pyjson.AppendString(nil, "inf"))
	} else {
		o.Write(pyjson.AppendFloat(nil, r.RequestRate))
	}
	o.Float("burstiness", r.Burstiness)
	o.Key("max_concurrency")
	if r.MaxConcurrency > 0 {
		o.Write(strconv.AppendInt(nil, int64(r.MaxConcurrency), 10))
	} else {
		o.Write([]byte("null"))
	}
	o.Float("duration", r.Duration)
	o.Float("benchmark_start_time_unix", r.BenchmarkStartTimeUnix)
	o.Float("benchmark_end_time_unix", r.BenchmarkEndTimeUnix)
	o.Int("completed", r.Completed)
	o.Int("total_input_tokens", r.TotalInputTokens)
	o.Int("total_output_tokens", r.TotalOutputTokens)
	o.Float("request_throughput", r.RequestThroughput)
	o.Key(keyRequestGoodput)
	if r.RequestGoodput != nil {
		o.Write(pyjson.AppendFloat(nil, *r.RequestGoodput))
	} else {
		o.Write([]byte("null"))
	}
	o.Float("output_throughput", r.OutputThroughput)
	o.Float("total_token_throughput", r.TotalTokenThroughput)
	o.Ints("input_lens", r.InputLens)
	o.Ints("output_lens", r.OutputLens)
	if d := r.Detail; d != nil {
		o.Floats("ttfts", d.TTFTs)
		o.Key("itls")
		o.Write([]byte{'['})
		for i, l := range d.ITLs {
			if i > 0 {
				o.Write([]byte(", "))
			}
			o.Write(pyjson.AppendFloats(nil, l))
		}
		o.Write([]byte{']'})
		o.Strs("generated_texts", d.GeneratedTexts)
		o.Strs("errors", d.Errors)
	}
	for _, m := range r.Metrics {
		o.Float("mean_"+m.Name+"_ms", m.Mean)
		o.Float("median_"+m.Name+"_ms", m.Median)
		o.Float("std_"+m.Name+"_ms", m.Std)
		for _, p := range m.Percentiles {
			o.Float(PercentileKey(p.P)+"_"+m.Name+"_ms", p.Value)
		}
	}
}

func (r *SABenchResult) appendSlurmbench(o *pyjson.Object) {
	if r.Client != "" {
		o.Str(keySlurmbenchClient, r.Client)
	}
	if r.Partial {
		o.Key(keySlurmbenchPartial)
		o.Write([]byte("true"))
	}
	if len(r.Errors) > 0 {
		o.Key(keySlurmbenchErrors)
		o.Write([]byte{'['})
		for i, e := range r.Errors {
			if i > 0 {
				o.Write([]byte(", "))
			}
			o.Write([]byte(`{"error": `))
			o.Write(pyjson.AppendString(nil, e.Error))
			o.Write([]byte(`, "count": `))
			o.Write(strconv.AppendInt(nil, int64(e.Count), 10))
			o.Write([]byte{'}'})
		}
		o.Write([]byte{']'})
	}
	for _, l := range []struct {
		key string
		d   *LatencyDist
	}{{keySlurmbenchAdded, r.AddedLatency}, {keySlurmbenchRead, r.ReadLatency}} {
		if l.d == nil {
			continue
		}
		d := l.d
		o.Key(l.key)
		b := []byte(`{"events": `)
		b = strconv.AppendInt(b, int64(d.Events), 10)
		b = append(b, `, "negative": `...)
		b = strconv.AppendInt(b, int64(d.Negative), 10)
		for _, f := range []struct {
			k string
			v float64
		}{{"mean_ms", d.Mean}, {"median_ms", d.Median}, {"p90_ms", d.P90}, {"p99_ms", d.P99}, {"max_ms", d.Max}} {
			b = append(b, `, "`...)
			b = append(b, f.k...)
			b = append(b, `": `...)
			b = pyjson.AppendFloat(b, f.v)
		}
		o.Write(append(b, '}'))
	}
	if r.Valid != nil {
		o.Key(keySlurmbenchValid)
		o.Write(strconv.AppendBool(nil, *r.Valid))
		if !*r.Valid {
			o.Str(keySlurmbenchInvalidWhy, r.InvalidReason)
		}
	}
}

// ParseSABench reads a result file's JSON: one written by benchmark_serving.py
// (either copy) or by this package. Members it does not know are kept.
func ParseSABench(data []byte) (*SABenchResult, error) {
	// Python's json module writes NaN and Infinity for the statistics of a
	// run without successful requests; they read as null, so such a file is
	// reported invalid, not unreadable.
	dec := json.NewDecoder(bytes.NewReader(pyjson.ToJSON(data)))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("SA-Bench result is not a JSON object")
	}
	r := &SABenchResult{raw: []rawField{}}
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
func (r *SABenchResult) setField(key string, val json.RawMessage) error {
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
	case keySlurmbenchAdded:
		r.AddedLatency = new(LatencyDist)
		err = json.Unmarshal(val, r.AddedLatency)
	case keySlurmbenchRead:
		r.ReadLatency = new(LatencyDist)
		err = json.Unmarshal(val, r.ReadLatency)
	default:
		if m := metricKey.FindStringSubmatch(key); m != nil {
			err = r.setMetric(m[3], m[1], m[2], val)
		}
	}
	return err
}

func (r *SABenchResult) setMetric(name, stat, p string, val json.RawMessage) error {
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

// ReadSABench reads and parses a result file.
func ReadSABench(path string) (*SABenchResult, error) {
	data, err := readlimit.ReadFile(path, MaxResultBytes)
	if err != nil {
		return nil, fmt.Errorf("reading SA-Bench result: %w", err)
	}
	r, err := ParseSABench(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteSABench writes res to path atomically, replacing an earlier result
// of the same name.
func WriteSABench(path string, res *SABenchResult) error {
	data, err := res.MarshalJSON()
	if err != nil {
		return fmt.Errorf("encoding SA-Bench result: %w", err)
	}
	if err := atomicfile.WriteFile(path, data, atomicfile.Options{Overwrite: true}); err != nil {
		return fmt.Errorf("writing SA-Bench result: %w", err)
	}
	return nil
}

// members is every top-level member in file order: a parsed file's
// verbatim, a result built in Go as MarshalJSON writes it. InferenceX's
// latency transform (Aggregate) walks them in this order.
func (r *SABenchResult) members() []rawField {
	if r.raw != nil {
		return r.raw
	}
	b, err := r.MarshalJSON()
	if err != nil {
		return nil
	}
	parsed, err := ParseSABench(b)
	if err != nil {
		return nil
	}
	return parsed.raw
}

// Has reports whether the result has the top-level key (for a result built
// in Go: whether MarshalJSON writes it).
func (r *SABenchResult) Has(key string) bool {
	for _, f := range r.members() {
		if f.key == key {
			return true
		}
	}
	return false
}

// SABenchKey reports whether the result writes key itself, so that a
// --metadata pair of that name would collide with it.
func SABenchKey(k string) bool {
	switch k {
	case "", "date", "backend", "model_id", "tokenizer_id", "best_of", "num_prompts", "request_rate",
		"burstiness", "max_concurrency", "duration", "benchmark_start_time_unix", "benchmark_end_time_unix",
		"completed", "total_input_tokens", "total_output_tokens", "request_throughput", keyRequestGoodput,
		"output_throughput", "total_token_throughput", "input_lens", "output_lens", "ttfts", "itls",
		"generated_texts", "errors":
		return true
	}
	return strings.HasPrefix(k, "slurmbench_") || metricKey.MatchString(k)
}
