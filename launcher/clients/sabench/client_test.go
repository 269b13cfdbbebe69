package sabench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/results"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Assert(t, filepath.Join("testdata", name), got)
}

func testConfig(url string, concurrency, prompts int) Config {
	cfg := NewConfig(url, "test/model", 64, 32, concurrency)
	cfg.NumPrompts = prompts
	return cfg
}

func TestRunMeasuresStream(t *testing.T) {
	const ttft, itl = 40 * time.Millisecond, 5 * time.Millisecond
	f := &fakeEngine{ttft: ttft, itl: itl}
	cfg := testConfig(f.start(t), 4, 16)
	cfg.SaveDetailed = true
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := NewDataset(cfg.datasetOptions())

	if got, want := f.requests.Load(), int64(16+8); got != want {
		t.Errorf("server saw %d requests, want 16 measured + 8 warmup", got)
	}
	if res.Completed != 16 || res.NumPrompts != 16 || res.MaxConcurrency != 4 {
		t.Errorf("completed/num_prompts/max_concurrency = %d/%d/%d, want 16/16/4", res.Completed, res.NumPrompts, res.MaxConcurrency)
	}
	if res.WarmupCompleted != 8 || res.WarmupFailed != 0 {
		t.Errorf("warmup %d ok / %d failed, want 8/0", res.WarmupCompleted, res.WarmupFailed)
	}
	if !slices.Equal(res.OutputLens, ds.OutputLens) || res.TotalOutputTokens != sum(ds.OutputLens) {
		t.Errorf("output lens %v (Σ %d), want the drawn %v (Σ %d)", res.OutputLens, res.TotalOutputTokens, ds.OutputLens, sum(ds.OutputLens))
	}
	if !slices.Equal(res.InputLens, ds.InputLens) || res.TotalInputTokens != sum(ds.InputLens) {
		t.Errorf("input tokens %d, want Σ drawn %d", res.TotalInputTokens, sum(ds.InputLens))
	}
	// One ITL per chunk after the first.
	nITL := 0
	for _, l := range res.Detail.ITLs {
		nITL += len(l)
	}
	if want := sum(ds.OutputLens) - 16; nITL != want {
		t.Errorf("%d ITL samples, want Σ(output-1) = %d", nITL, want)
	}
	// Each request's TPOT is (latency - ttft)/(out-1) and the stream's gaps
	// are ITL apart, so TPOT ≈ ITL; TTFT ≈ the configured delay.
	mTTFT, _ := res.Metric("ttft")
	mTPOT, _ := res.Metric("tpot")
	mITL, _ := res.Metric("itl")
	mE2E, _ := res.Metric("e2el")
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	if mTTFT.Median < ms(ttft) || mTTFT.Median > ms(ttft)+15 {
		t.Errorf("median TTFT %.3f ms, want %v..+15 ms", mTTFT.Median, ttft)
	}
	if math.Abs(mTPOT.Median-ms(itl)) > 1 {
		t.Errorf("median TPOT %.3f ms, want %v ± 1 ms", mTPOT.Median, itl)
	}
	if math.Abs(mITL.Mean-ms(itl)) > 1 {
		t.Errorf("mean ITL %.3f ms, want %v ± 1 ms", mITL.Mean, itl)
	}
	if mE2E.Median < mTTFT.Median+ms(itl)*float64(25-1)-1 {
		t.Errorf("median E2E %.3f ms is shorter than TTFT + 24 ITLs", mE2E.Median)
	}
	// Throughputs derive from the same duration.
	if d := res.Duration; d <= 0 || math.Abs(res.RequestThroughput-16/d) > 1e-9 ||
		math.Abs(res.OutputThroughput-float64(res.TotalOutputTokens)/d) > 1e-9 ||
		math.Abs(res.TotalTokenThroughput-float64(res.TotalInputTokens+res.TotalOutputTokens)/d) > 1e-9 {
		t.Errorf("throughputs %v/%v/%v do not match duration %v", res.RequestThroughput, res.OutputThroughput, res.TotalTokenThroughput, d)
	}
	if math.Abs(res.BenchmarkEndTimeUnix-res.BenchmarkStartTimeUnix-res.Duration) > 1e-3 {
		t.Errorf("unix window %v..%v does not span duration %v", res.BenchmarkStartTimeUnix, res.BenchmarkEndTimeUnix, res.Duration)
	}
	if res.Detail.GeneratedTexts[0] == "" || !strings.HasPrefix(res.Detail.GeneratedTexts[0], " t0 t1") {
		t.Errorf("generated text %q, want the streamed tokens", res.Detail.GeneratedTexts[0])
	}
	if err := results.ValidateSABench(res, 16); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestRequestBodyGolden(t *testing.T) {
	f := &fakeEngine{}
	cfg := NewConfig(f.start(t), "deepseek-ai/DeepSeek-R1", 16, 8, 1)
	cfg.NumPrompts, cfg.WarmupPrompts = 2, -1
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	golden(t, "request_body.golden", append(f.body(0), '\n'))

	cfg.IgnoreEOS = false
	cfg.WarmupPrompts = 1
	f.bodies = nil
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(f.body(0), []byte("ignore_eos")) {
		t.Errorf("without IgnoreEOS the body has ignore_eos: %s", f.body(0))
	}
	// The warmup repeats the first prompt, as benchmark_serving.py does.
	if !bytes.Equal(f.body(0), f.body(1)) {
		t.Errorf("warmup body %s differs from the first prompt's %s", f.body(0), f.body(1))
	}
}

func TestOutputTokensFromUsageOrChunks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine *fakeEngine
		// want output tokens of a request asking for n tokens
		want func(n int) int
	}{
		{"usage", &fakeEngine{}, func(n int) int { return n }},
		// Several tokens per chunk: usage counts tokens, not chunks.
		{"usage with packed chunks", &fakeEngine{tokensPerChunk: 4}, func(n int) int { return n }},
		// Without usage the Python tool re-tokenizes the text; the native
		// client counts chunks.
		{"no usage", &fakeEngine{omitUsage: true, tokensPerChunk: 4}, func(n int) int { return (n + 3) / 4 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.engine.start(t), 2, 6)
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			ds, _ := NewDataset(cfg.datasetOptions())
			for i, n := range ds.OutputLens {
				if res.OutputLens[i] != tc.want(n) {
					t.Errorf("request %d: %d output tokens, want %d", i, res.OutputLens[i], tc.want(n))
				}
			}
		})
	}
}

func TestFailedRequests(t *testing.T) {
	for _, tc := range []struct {
		name    string
		engine  *fakeEngine
		wantErr string
	}{
		{"HTTP 503", &fakeEngine{status: 503}, "HTTP 503 Service Unavailable"},
		{"no choices", &fakeEngine{noChoices: true}, "Never received a valid chunk"},
		{"malformed chunk", &fakeEngine{badChunk: true}, "parsing stream chunk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(tc.engine.start(t), 2, 4)
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 0 || res.TotalOutputTokens != 0 || res.WarmupFailed != 4 {
				t.Errorf("completed %d, output %d, warmup failures %d; want 0, 0, 4", res.Completed, res.TotalOutputTokens, res.WarmupFailed)
			}
			if len(res.Errors) != 1 || res.Errors[0].Count != 4 || !strings.Contains(res.Errors[0].Error, tc.wantErr) {
				t.Errorf("error summary %+v, want 4× %q", res.Errors, tc.wantErr)
			}
			// All statistics are zero, not NaN, and the JSON encodes.
			if m, _ := res.Metric("tpot"); m.Mean != 0 || m.Std != 0 {
				t.Errorf("tpot stats of no completions = %+v", m)
			}
			if _, err := res.MarshalJSON(); err != nil {
				t.Fatal(err)
			}
			err = results.ValidateSABench(res, 4)
			var inv *results.InvalidSABenchError
			if !errors.As(err, &inv) || inv.Concurrency != 2 || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate = %v, want an results.InvalidSABenchError at concurrency 2 naming %q", err, tc.wantErr)
			}
		})
	}
}

func TestCancelReturnsPartialResult(t *testing.T) {
	// Streams take ~100 s; the run is cancelled after the first tokens.
	f := &fakeEngine{ttft: 10 * time.Millisecond, itl: 3 * time.Second}
	cfg := testConfig(f.start(t), 4, 8)
	cfg.WarmupPrompts = -1
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	began := time.Now()
	res, err := Run(ctx, cfg)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run error = %v, want the context's", err)
	}
	// Tolerant bound: a run that waited for its streams would take ~100 s.
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("cancelled run took %s", took)
	}
	if res == nil || !res.Partial {
		t.Fatalf("result %+v, want a partial one", res)
	}
	if res.Completed != 0 || res.NumPrompts != 8 || len(res.InputLens) != 8 {
		t.Errorf("partial result completed %d of %d (%d input lens)", res.Completed, res.NumPrompts, len(res.InputLens))
	}
	total := 0
	for _, e := range res.Errors {
		total += e.Count
	}
	if total != 8 {
		t.Errorf("error summary %+v accounts for %d requests, want 8 (interrupted or not sent)", res.Errors, total)
	}
	data, err := res.MarshalJSON()
	if err != nil || !bytes.Contains(data, []byte(`"slurmbench_partial": true`)) {
		t.Errorf("partial result JSON lacks the mark: %s", data)
	}
	if err := results.ValidateSABench(res, 8); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("results.ValidateSABench(partial) = %v, want an interruption failure", err)
	}
}

func TestCancelDuringWarmup(t *testing.T) {
	f := &fakeEngine{ttft: 5 * time.Second}
	cfg := testConfig(f.start(t), 2, 4)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, cfg)
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || !res.Partial || res.Completed != 0 {
		t.Fatalf("Run = %+v, %v; want a partial result and the context error", res, err)
	}
	if len(res.Metrics) != 4 {
		t.Errorf("partial result has %d metrics, want 4 (all zero)", len(res.Metrics))
	}
}

func TestFiniteRequestRateFollowsGammaSchedule(t *testing.T) {
	f := &fakeEngine{}
	cfg := testConfig(f.start(t), 0, 12)
	cfg.WarmupPrompts = -1
	cfg.RequestRate = 40 // ~25 ms apart
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Completed != 12 || res.RequestRate != 40 || res.MaxConcurrency != 0 {
		t.Fatalf("completed %d at rate %v, max concurrency %d", res.Completed, res.RequestRate, res.MaxConcurrency)
	}
	// The last request cannot start before the 11 drawn gaps have passed.
	_, rng, _ := newDataset(cfg.datasetOptions())
	gaps := 0.0
	for range 11 {
		gaps += rng.Gamma(1, 1.0/40)
	}
	if res.Duration < gaps {
		t.Errorf("duration %.3fs is shorter than the drawn gaps %.3fs", res.Duration, gaps)
	}
	data, _ := res.MarshalJSON()
	if !bytes.Contains(data, []byte(`"request_rate": 40.0`)) || !bytes.Contains(data, []byte(`"max_concurrency": null`)) {
		t.Errorf("rate/concurrency not written as benchmark_serving does: %s", data[:300])
	}
}

func TestProgressAndGoodput(t *testing.T) {
	f := &fakeEngine{ttft: 20 * time.Millisecond, itl: time.Millisecond}
	cfg := testConfig(f.start(t), 3, 9)
	var mu sync.Mutex
	final := map[Phase]Progress{}
	cfg.ProgressInterval = 5 * time.Millisecond
	cfg.Progress = func(p Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Final {
			final[p.Phase] = p
		}
	}
	cfg.Goodput = map[string]float64{"ttft": 10_000}
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p := final[PhaseWarmup]; p.Total != 6 || p.Finished != 6 || p.Failed != 0 {
		t.Errorf("final warmup progress %+v, want 6/6", p)
	}
	if p := final[PhaseBenchmark]; p.Total != 9 || p.Finished != 9 {
		t.Errorf("final benchmark progress %+v, want 9/9", p)
	}
	if res.RequestGoodput == nil || *res.RequestGoodput != res.RequestThroughput {
		t.Errorf("goodput %v with a generous SLO, want the request throughput %v", res.RequestGoodput, res.RequestThroughput)
	}

	cfg.Goodput = map[string]float64{"ttft": 1} // 1 ms: nobody meets it
	cfg.Progress = nil
	res, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.RequestGoodput == nil || *res.RequestGoodput != 0 {
		t.Errorf("goodput %v with an impossible SLO, want 0", res.RequestGoodput)
	}
}

func TestConfigRejected(t *testing.T) {
	base := NewConfig("http://127.0.0.1:1", "m", 64, 32, 4)
	for name, mutate := range map[string]func(*Config){
		"no URL":            func(c *Config) { c.BaseURL = "" },
		"no model":          func(c *Config) { c.Model = "" },
		"bad metric":        func(c *Config) { c.PercentileMetrics = []string{"ttft", "latency"} },
		"bad percentile":    func(c *Config) { c.Percentiles = []float64{101} },
		"negative rate":     func(c *Config) { c.RequestRate = -1 },
		"bad goodput key":   func(c *Config) { c.Goodput = map[string]float64{"itl": 5} },
		"zero output len":   func(c *Config) { c.OutputLen = 0 },
		"negative conc":     func(c *Config) { c.MaxConcurrency = -1 },
		"relative endpoint": func(c *Config) { c.Endpoint = "v1/completions" },
		"reserved metadata": func(c *Config) { c.Metadata = []results.KeyValue{{Key: "completed", Value: "1"}} },
		"metric metadata":   func(c *Config) { c.Metadata = []results.KeyValue{{Key: "p99_ttft_ms", Value: "1"}} },
	} {
		cfg := base
		mutate(&cfg)
		if _, err := Run(context.Background(), cfg); err == nil {
			t.Errorf("%s: Run accepted the config", name)
		}
	}
}
