package sabench

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// Defaults follow InferenceX's run_benchmark_serving.
const (
	DefaultEndpoint = "/v1/completions"
	// ChatEndpoint is the endpoint of Config.Chat.
	ChatEndpoint = "/v1/chat/completions"
	// DefaultBackend is recorded as the result's "backend": the native client
	// speaks the openai-completions protocol of benchmark_serving.py;
	// ChatBackend is benchmark_serving.py's name for the chat protocol.
	DefaultBackend = "openai"
	ChatBackend    = "openai-chat"
	// DefaultRangeRatio is --random-range-ratio: lengths uniform on [0.8·L, L].
	DefaultRangeRatio = 0.8
	// PromptsPerConcurrency and WarmupsPerConcurrency give num_prompts = 10·C
	// and --num-warmups = 2·C.
	PromptsPerConcurrency = 10
	WarmupsPerConcurrency = 2
	// DefaultRequestTimeout is the total per-request timeout of the
	// InferenceX copy (aiohttp ClientTimeout(total=30 min)).
	DefaultRequestTimeout   = 30 * time.Minute
	DefaultProgressInterval = 5 * time.Second
)

// DefaultPercentiles is --metric-percentiles "90,99,99.9" (the InferenceX copy;
// srt-slurm's copy defaults to "99" only).
var DefaultPercentiles = []float64{90, 99, 99.9}

// Config is one SA-Bench point for the native client: the options of
// benchmark_serving.py's random-dataset run, plus what a Go client needs.
// Start from NewConfig, which fills in the SA-Bench defaults; zero numeric
// fields are defaulted again by Run.
type Config struct {
	// BaseURL of the frontend, e.g. http://10.0.0.1:8000 (--base-url).
	BaseURL string
	// Endpoint is appended to BaseURL; default DefaultEndpoint, or
	// ChatEndpoint with Chat (--endpoint).
	Endpoint string
	// Chat sends the openai-chat request of benchmark_serving.py (one user
	// message holding the prompt as text, max_completion_tokens) instead of
	// the openai completions request with token ids. Without a tokenizer
	// the text is Dataset.AppendPromptText's, so the server's prompt token
	// count may differ from InputLens.
	Chat bool
	// Model is sent as "model" and written as model_id (--model).
	Model string
	// Tokenizer is written as tokenizer_id only; default Model. The native
	// client needs no tokenizer: prompts are token-id arrays.
	Tokenizer string
	// Backend is written as "backend"; default DefaultBackend.
	Backend string

	InputLen   int     // --random-input-len
	OutputLen  int     // --random-output-len; sent as max_tokens
	RangeRatio float64 // --random-range-ratio; default DefaultRangeRatio
	// VocabSize bounds the prompt token ids; default DefaultVocabSize.
	VocabSize int
	Seed      uint32 // --seed (0 in every SA-Bench run)

	// MaxConcurrency caps in-flight requests (--max-concurrency); 0 means no cap.
	MaxConcurrency int
	// NumPrompts measured requests; default PromptsPerConcurrency·MaxConcurrency.
	NumPrompts int
	// WarmupPrompts sends the first prompt this many times before the
	// measured run (--num-warmups); default WarmupsPerConcurrency·MaxConcurrency,
	// negative for none.
	WarmupPrompts int
	// RequestRate in requests/s; 0 or +Inf sends everything at once
	// (--request-rate inf). A finite rate draws gamma-distributed gaps with
	// shape Burstiness (1: a Poisson process) from the dataset's generator.
	RequestRate float64
	Burstiness  float64 // --burstiness; default 1
	IgnoreEOS   bool    // --ignore-eos: sends "ignore_eos": true

	// Percentiles are --metric-percentiles; default DefaultPercentiles.
	Percentiles []float64
	// PercentileMetrics are --percentile-metrics; default results.MetricNames.
	PercentileMetrics []string
	// Goodput holds SLOs in milliseconds for ttft, tpot and/or e2el
	// (--goodput); empty writes "request_goodput:": null.
	Goodput map[string]float64
	// Metadata are --metadata KEY=VALUE pairs, written as top-level fields.
	Metadata []results.KeyValue
	// SaveDetailed also writes ttfts, itls, generated_texts and errors (--save-detailed).
	SaveDetailed bool

	// APIKey, when set, is sent as "Authorization: Bearer <key>".
	APIKey string
	// HTTPClient, when set, sends the requests. By default a plain-HTTP
	// endpoint gets the client's own HTTP/1.1 streaming transport (h1.go)
	// and https NewHTTPClient(MaxConcurrency); Run closes their connections
	// when it returns.
	HTTPClient *http.Client
	// RequestTimeout bounds each request; default DefaultRequestTimeout.
	RequestTimeout time.Duration

	// Progress, when set, is called (never concurrently) every
	// ProgressInterval and at the end of each phase.
	Progress         func(Progress)
	ProgressInterval time.Duration // default DefaultProgressInterval
}

// NewConfig returns the SA-Bench point InferenceX runs at concurrency c:
// 10·c prompts after 2·c warmups, request rate inf, range ratio 0.8,
// ignore_eos, percentiles 90/99/99.9 of ttft, tpot, itl and e2el.
func NewConfig(baseURL, model string, inputLen, outputLen, concurrency int) Config {
	return Config{
		BaseURL:        baseURL,
		Model:          model,
		InputLen:       inputLen,
		OutputLen:      outputLen,
		RangeRatio:     DefaultRangeRatio,
		MaxConcurrency: concurrency,
		NumPrompts:     PromptsPerConcurrency * concurrency,
		WarmupPrompts:  WarmupsPerConcurrency * concurrency,
		RequestRate:    math.Inf(1),
		Burstiness:     1,
		IgnoreEOS:      true,
	}
}

// Phase names a part of a run in Progress.
type Phase string

const (
	PhaseWarmup    Phase = "warmup"
	PhaseBenchmark Phase = "benchmark"
)

// Progress is a snapshot of a running phase.
type Progress struct {
	Phase    Phase
	Total    int // requests in the phase
	Finished int // requests that ended, failures included
	Failed   int
	// Tokens are the output tokens (chunks with choices) streamed so far.
	Tokens  int
	Elapsed time.Duration
	// MedianTTFT is the median TTFT of the phase's finished requests, 0
	// before the first.
	MedianTTFT time.Duration
	Final      bool // the phase is over
}

// withDefaults fills zero fields and checks the rest.
func (c Config) withDefaults() (Config, error) {
	if c.Endpoint == "" {
		c.Endpoint = DefaultEndpoint
		if c.Chat {
			c.Endpoint = ChatEndpoint
		}
	}
	if c.Tokenizer == "" {
		c.Tokenizer = c.Model
	}
	if c.Backend == "" {
		c.Backend = DefaultBackend
		if c.Chat {
			c.Backend = ChatBackend
		}
	}
	if c.RangeRatio == 0 {
		c.RangeRatio = DefaultRangeRatio
	}
	if c.VocabSize == 0 {
		c.VocabSize = DefaultVocabSize
	}
	if c.NumPrompts == 0 {
		c.NumPrompts = PromptsPerConcurrency * c.MaxConcurrency
	}
	switch {
	case c.WarmupPrompts == 0:
		c.WarmupPrompts = WarmupsPerConcurrency * c.MaxConcurrency
	case c.WarmupPrompts < 0:
		c.WarmupPrompts = 0
	}
	if c.RequestRate == 0 {
		c.RequestRate = math.Inf(1)
	}
	if c.Burstiness == 0 {
		c.Burstiness = 1
	}
	if c.Percentiles == nil {
		c.Percentiles = DefaultPercentiles
	}
	if c.PercentileMetrics == nil {
		c.PercentileMetrics = results.MetricNames
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.ProgressInterval == 0 {
		c.ProgressInterval = DefaultProgressInterval
	}

	var errs []error
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, fmt.Errorf("base URL %q: want http://host:port", c.BaseURL))
	}
	if !strings.HasPrefix(c.Endpoint, "/") {
		errs = append(errs, fmt.Errorf("endpoint %q must start with /", c.Endpoint))
	}
	if c.Model == "" {
		errs = append(errs, errors.New("model name is required"))
	}
	if c.MaxConcurrency < 0 {
		errs = append(errs, fmt.Errorf("max concurrency must not be negative (got %d)", c.MaxConcurrency))
	}
	if c.RequestRate < 0 || math.IsNaN(c.RequestRate) {
		errs = append(errs, fmt.Errorf("request rate must be positive or inf (got %v)", c.RequestRate))
	}
	if !(c.Burstiness > 0) || math.IsInf(c.Burstiness, 0) {
		errs = append(errs, fmt.Errorf("burstiness must be positive (got %v)", c.Burstiness))
	}
	for _, p := range c.Percentiles {
		if !(p >= 0 && p <= 100) {
			errs = append(errs, fmt.Errorf("percentile %v is outside [0, 100]", p))
		}
	}
	for _, m := range c.PercentileMetrics {
		if !slices.Contains(results.MetricNames, m) {
			errs = append(errs, fmt.Errorf("unknown percentile metric %q (want ttft, tpot, itl or e2el)", m))
		}
	}
	for k, v := range c.Goodput {
		if k != "ttft" && k != "tpot" && k != "e2el" {
			errs = append(errs, fmt.Errorf("goodput SLO %q: want ttft, tpot or e2el", k))
		}
		if v < 0 {
			errs = append(errs, fmt.Errorf("goodput SLO %s must not be negative (got %v)", k, v))
		}
	}
	for _, kv := range c.Metadata {
		if results.SABenchKey(kv.Key) {
			errs = append(errs, fmt.Errorf("metadata key %q would replace a result field", kv.Key))
		}
	}
	if c.RequestTimeout < 0 || c.ProgressInterval < 0 {
		errs = append(errs, errors.New("timeouts and intervals must not be negative"))
	}
	if err := c.datasetOptions().check(); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

func (c Config) datasetOptions() DatasetOptions {
	return DatasetOptions{
		InputLen:   c.InputLen,
		OutputLen:  c.OutputLen,
		RangeRatio: c.RangeRatio,
		NumPrompts: c.NumPrompts,
		VocabSize:  c.VocabSize,
		Seed:       c.Seed,
	}
}

// ParseGoodput reads benchmark_serving.py's --goodput arguments, each
// "ttft:MS", "tpot:MS" or "e2el:MS" (a positive number of milliseconds,
// each metric once); none gives nil (no goodput).
func ParseGoodput(args []string) (map[string]float64, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := map[string]float64{}
	for _, a := range args {
		for _, item := range strings.Fields(a) {
			k, v, ok := strings.Cut(item, ":")
			ms, err := strconv.ParseFloat(v, 64)
			switch {
			case !ok || err != nil || ms <= 0 || math.IsInf(ms, 0) || math.IsNaN(ms):
				return nil, fmt.Errorf("%q: want METRIC:MS with a positive number of milliseconds (ttft:200 tpot:30 e2el:5000)", item)
			case k != "ttft" && k != "tpot" && k != "e2el":
				return nil, fmt.Errorf("%q: the metric is ttft, tpot or e2el", item)
			}
			if _, dup := out[k]; dup {
				return nil, fmt.Errorf("%q: %s is given twice", item, k)
			}
			out[k] = ms
		}
	}
	return out, nil
}
