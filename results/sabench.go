package results

// SABenchResult is one SA-Bench result file: the JSON benchmark_serving.py writes
// with --save-result (the field names and order of InferenceX's
// utils/bench_serving copy) plus slurmbench_* fields.
// Downstream tools (process_result.py, srt-slurm's rollup, the results
// package) read a native result exactly like a Python one.
//
// A SABenchResult read by ReadSABench keeps the file's members verbatim: writing it
// back changes only the slurmbench_* fields.
type SABenchResult struct {
	Date        string // %Y%m%d-%H%M%S, local time
	Backend     string
	ModelID     string
	TokenizerID string
	BestOf      int
	NumPrompts  int
	Metadata    []KeyValue // written as top-level string fields
	// RequestRate is requests/s; +Inf is written "inf".
	RequestRate float64
	Burstiness  float64
	// MaxConcurrency 0 (no cap) is written null.
	MaxConcurrency int
	// Duration in seconds from the first dispatch to the last completion.
	Duration               float64
	BenchmarkStartTimeUnix float64
	BenchmarkEndTimeUnix   float64
	Completed              int
	TotalInputTokens       int // prompts of completed requests
	TotalOutputTokens      int
	RequestThroughput      float64 // completed / duration
	// RequestGoodput is written under the key "request_goodput:" (with the
	// colon, as the InferenceX copy spells it); nil is null.
	RequestGoodput       *float64
	OutputThroughput     float64        // total output tokens / duration
	TotalTokenThroughput float64        // (total input + total output) / duration
	InputLens            []int          // every request's prompt length
	OutputLens           []int          // output tokens per request, 0 when failed
	Detail               *SABenchDetail // with --save-detailed only
	Metrics              []MetricStats

	// Client is "native" for results of Run; written as slurmbench_client.
	Client string
	// Partial marks a run cut short by cancellation (slurmbench_partial).
	Partial bool
	// Errors counts the distinct failure messages (slurmbench_errors).
	Errors []ErrorCount
	// Valid and InvalidReason are the verdict of ValidateSABench
	// (slurmbench_valid, slurmbench_invalid_reason); nil before it ran.
	Valid         *bool
	InvalidReason string

	// AddedLatency is the latency the client added to the token events of
	// streams whose server stamped them (the mock engine): the time the
	// client gave each event (what TTFT and ITL are made of) minus the time
	// the server wrote it, on the host's one clock
	// (slurmbench_added_latency). ReadLatency is the same from the moment
	// the client parsed the event (slurmbench_read_latency): how far
	// behind the stream the client read. Both nil without stamps; neither
	// is a benchmark_serving.py field, and as objects they stay out of
	// the aggregate, which takes only numeric members.
	AddedLatency, ReadLatency *LatencyDist

	// Warmup outcome, not written.
	WarmupCompleted, WarmupFailed int

	// Requests are the measured requests one by one, for the requests file
	// beside the result (WriteRequests); not part of the result's JSON.
	Requests []RequestRecord

	raw []rawField // members of a file read by ReadSABench
}

// SABenchDetail are the per-request fields of --save-detailed.
type SABenchDetail struct {
	TTFTs          []float64   // seconds, 0 for failed requests
	ITLs           [][]float64 // seconds
	GeneratedTexts []string
	Errors         []string
}

// LatencyDist is a distribution of per-event latencies in milliseconds.
// Median, P90 and P99 are nearest-rank (the smallest sample with at least
// that share of the samples at or below it); Max is the largest sample.
// Negative counts events the client dated before the server's stamp (a
// clock that stepped), taken as 0 in the statistics.
type LatencyDist struct {
	Events   int     `json:"events"`
	Negative int     `json:"negative"`
	Mean     float64 `json:"mean_ms"`
	Median   float64 `json:"median_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
}

// ErrorCount is one distinct request failure and how often it happened.
type ErrorCount struct {
	Error string
	Count int
}

// ClientNative is SABenchResult.Client for the built-in client.
const ClientNative = "native"

// Metric returns the statistics of metric name (ttft, tpot, itl, e2el).
func (r *SABenchResult) Metric(name string) (MetricStats, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return MetricStats{}, false
}

// MetricStats are one metric's statistics in milliseconds, as SA-Bench
// writes them: mean_<m>_ms, median_<m>_ms, std_<m>_ms and p<P>_<m>_ms.
type MetricStats struct {
	Name        string // ttft, tpot, itl or e2el
	Mean        float64
	Median      float64
	Std         float64
	Percentiles []Percentile
}

// Percentile is one p<P>_<metric>_ms value.
type Percentile struct {
	P     float64 // e.g. 99.9
	Value float64 // milliseconds
}

// Percentile returns the value for p, if it was computed.
func (m MetricStats) Percentile(p float64) (float64, bool) {
	for _, q := range m.Percentiles {
		if q.P == p {
			return q.Value, true
		}
	}
	return 0, false
}

// KeyValue is one --metadata pair, written as a top-level string field.
type KeyValue struct{ Key, Value string }

// MetricNames are the latency metrics SA-Bench reports, in its order.
var MetricNames = []string{"ttft", "tpot", "itl", "e2el"}
