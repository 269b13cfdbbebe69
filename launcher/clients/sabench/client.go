package sabench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slurmbench/slurmbench/internal/budget"
	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/clients/sabench/numpy"
	"github.com/slurmbench/slurmbench/results"
)

// NewHTTPClient returns the client Run uses for https (plain HTTP goes
// through the h1 transport unless Config.HTTPClient is set): keep-alive with one
// idle connection per in-flight request, no response compression (gzip
// would hold back stream chunks), no proxy (the frontend is inside the
// cluster and a proxy would distort latency) and no client-wide timeout
// (each request gets Config.RequestTimeout).
//
// benchmark_serving.py opens a new aiohttp session, hence a new TCP
// connection, per request. Reusing connections differs only by the TCP
// handshake in TTFT, and avoids leaving 20k sockets in TIME_WAIT at c2048.
func NewHTTPClient(concurrency int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: max(concurrency, 2),
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		WriteBufferSize:     64 << 10,
	}}
}

// record is what one request left behind. Each request writes only its own
// record (a preallocated slice indexed by request), so the hot path takes no lock.
type record struct {
	sent         bool
	success      bool
	interrupted  bool // cut short by the run's cancellation
	ttft         time.Duration
	latency      time.Duration // request start to the last chunk with choices
	itl          []time.Duration
	chunks       int // chunks with non-empty choices
	outputTokens int // usage.completion_tokens; -1 when the server sent none
	err          string
	text         []byte    // generated text, only with SaveDetailed
	start        time.Time // when the request was sent (zero: never sent)
}

// runner holds what every request of a run shares (read-only once built).
type runner struct {
	cfg    Config
	ds     *Dataset
	client *http.Client
	url    string
	header http.Header
	// h1 carries the requests to a plain-HTTP endpoint when no client was
	// given; nil means net/http (client).
	h1 *h1Client
	// tail is the body after the prompt up to max_tokens' value.
	tail []byte
	// stamps are the measured requests' client-added latencies, from
	// the events a server stamped (added.go).
	stamps stampHists
	// held bounds what the measured requests' records hold together.
	held budget.Pool
}

// Bounds of what streams make the client hold beyond MaxSSEEvents (an
// engine ignoring max_tokens streams until the timeout; each event keeps
// an ITL gap and, with SaveDetailed, its text until the point is written):
// a stream StreamBytesPerToken a token of max_tokens, at least
// MinStreamBytes; a point's streams MaxPointBytes together.
const (
	StreamBytesPerToken = 64
	MinStreamBytes      = 64 << 10
	MaxPointBytes       = 2 << 30
)

// Run runs one SA-Bench point against cfg.BaseURL: the warmup, then the
// measured requests, and returns the result with SA-Bench's metrics. Failed
// requests are data, not errors: judge the result with Validate.
//
// When ctx ends, in-flight requests are cut off and Run returns the result
// so far, marked Partial, together with an error wrapping ctx.Err().
func Run(ctx context.Context, cfg Config) (*results.SABenchResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("SA-Bench options: %w", err)
	}
	ds, rng, err := newDataset(cfg.datasetOptions())
	if err != nil {
		return nil, fmt.Errorf("SA-Bench dataset: %w", err)
	}
	r := newRunner(cfg, ds)
	defer r.close()

	res := newResult(cfg)
	if cfg.WarmupPrompts > 0 {
		res.WarmupCompleted, res.WarmupFailed = r.warmup(ctx)
	}
	if ctx.Err() != nil {
		res.Partial = true
		res.InputLens = ds.InputLens
		res.OutputLens = make([]int, ds.Len())
		res.Metrics = emptyMetrics(cfg)
		res.Errors = []results.ErrorCount{{Error: "not sent: run interrupted during warmup", Count: ds.Len()}}
		return res, fmt.Errorf("SA-Bench warmup at concurrency %d interrupted: %w", cfg.MaxConcurrency, context.Cause(ctx))
	}

	records := make([]record, ds.Len())
	start := time.Now()
	r.measure(ctx, records, rng)
	end := time.Now()
	fill(res, cfg, ds, records, start, end)
	res.AddedLatency, res.ReadLatency = r.stamps.added.dist(), r.stamps.read.dist()
	// Partial only if cancellation actually cost requests: a context that
	// ends just after the last completion leaves a whole result.
	if slices.ContainsFunc(records, func(rec record) bool { return !rec.sent || rec.interrupted }) {
		res.Partial = true
		return res, fmt.Errorf("SA-Bench run at concurrency %d interrupted after %d of %d requests completed: %w",
			cfg.MaxConcurrency, res.Completed, res.NumPrompts, context.Cause(ctx))
	}
	return res, nil
}

func newRunner(cfg Config, ds *Dataset) *runner {
	client := cfg.HTTPClient
	if client == nil {
		client = NewHTTPClient(cfg.MaxConcurrency)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	if cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	r := &runner{
		cfg:    cfg,
		ds:     ds,
		client: client,
		url:    cfg.BaseURL + cfg.Endpoint,
		header: h,
		tail:   []byte(`,"temperature":0.0,"best_of":1,"max_tokens":`),
	}
	if u, err := url.Parse(r.url); err == nil && u.Scheme == "http" && cfg.HTTPClient == nil {
		var hdr [][2]string
		for _, k := range slices.Sorted(maps.Keys(h)) {
			hdr = append(hdr, [2]string{k, h.Get(k)})
		}
		r.h1 = newH1Client(u.Host, u.RequestURI(), hdr)
	}
	return r
}

// h1Request is body as the h1 transport sends it, head included.
func (r *runner) h1Request(body []byte) []byte { return r.h1.request(body) }

// close releases the connections the run kept alive.
func (r *runner) close() {
	if r.h1 != nil {
		r.h1.closeIdle()
	}
	if r.cfg.HTTPClient == nil {
		r.client.CloseIdleConnections()
	}
}

// requestBody is the body benchmark_serving.py's openai-completions request
// function posts, in its key order, with the prompt as token ids:
//
//	{"model":M,"prompt":[ids],"temperature":0.0,"best_of":1,"max_tokens":N,
//	 "logprobs":null,"stream":true,"stream_options":{"include_usage":true}[,"ignore_eos":true]}
//
// or, with Config.Chat, its openai-chat request function's:
//
//	{"model":M,"messages":[{"role":"user","content":TEXT}],"temperature":0.0,
//	 "max_completion_tokens":N,"stream":true,"stream_options":{"include_usage":true}[,"ignore_eos":true]}
func (r *runner) requestBody(i, maxTokens int) []byte {
	b := make([]byte, 0, 64+len(r.cfg.Model)+7*r.ds.InputLens[i]+len(r.tail)+96)
	b = append(b, `{"model":`...)
	b = pyjson.AppendString(b, r.cfg.Model)
	if r.cfg.Chat {
		b = append(b, `,"messages":[{"role":"user","content":`...)
		b = r.ds.AppendPromptText(b, i)
		b = append(b, `}],"temperature":0.0,"max_completion_tokens":`...)
		b = strconv.AppendInt(b, int64(maxTokens), 10)
	} else {
		b = append(b, `,"prompt":`...)
		b = r.ds.AppendPrompt(b, i)
		b = append(b, r.tail...)
		b = strconv.AppendInt(b, int64(maxTokens), 10)
		b = append(b, `,"logprobs":null`...)
	}
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true}`...)
	if r.cfg.IgnoreEOS {
		b = append(b, `,"ignore_eos":true`...)
	}
	return append(b, '}')
}

// tally counts a phase's finished requests for Progress; each request
// reports once, when it ends.
type tally struct {
	done, failed, tokens atomic.Int64
	mu                   sync.Mutex
	ttfts                []time.Duration // of the successful requests
}

func (t *tally) add(rec *record) {
	t.tokens.Add(int64(rec.chunks))
	if rec.success {
		t.mu.Lock()
		t.ttfts = append(t.ttfts, rec.ttft)
		t.mu.Unlock()
	} else {
		t.failed.Add(1)
	}
	t.done.Add(1)
}

func (t *tally) medianTTFT() time.Duration {
	t.mu.Lock()
	s := slices.Clone(t.ttfts)
	t.mu.Unlock()
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	return s[len(s)/2]
}

// warmup sends the first prompt WarmupPrompts times under the same
// concurrency cap, as benchmark_serving.py does; results are only counted.
func (r *runner) warmup(ctx context.Context) (completed, failed int) {
	n := r.cfg.WarmupPrompts
	var t tally
	stop := r.reportProgress(PhaseWarmup, n, &t)
	body := r.requestBody(0, r.ds.OutputLens[0])
	workers := r.workers(n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rec record
			for ctx.Err() == nil && int(next.Add(1)) <= n {
				rec = record{itl: rec.itl[:0]}
				r.do(ctx, body, r.ds.OutputLens[0], &rec)
				t.add(&rec)
			}
		}()
	}
	wg.Wait()
	stop()
	return int(t.done.Load() - t.failed.Load()), int(t.failed.Load())
}

// workers is how many goroutines may have a request in flight.
func (r *runner) workers(n int) int {
	if c := r.cfg.MaxConcurrency; c > 0 && c < n {
		return c
	}
	return n
}

// measure sends every dataset request. At request rate inf, MaxConcurrency
// workers take the requests in order (the semaphore of the Python tool
// releases them in the same order); at a finite rate a dispatcher releases
// them on the gamma schedule and each waits for a free slot.
func (r *runner) measure(ctx context.Context, records []record, rng *numpy.RandomState) {
	n := len(records)
	var t tally
	stop := r.reportProgress(PhaseBenchmark, n, &t)
	defer stop()
	one := func(i int) {
		rec := &records[i]
		rec.sent = true
		r.doStamped(ctx, r.requestBody(i, r.ds.OutputLens[i]), r.ds.OutputLens[i], rec, &r.stamps)
		t.add(rec)
	}
	var wg sync.WaitGroup
	if math.IsInf(r.cfg.RequestRate, 1) {
		var next atomic.Int64
		for range r.workers(n) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					one(i)
				}
			}()
		}
		wg.Wait()
		return
	}

	var slots chan struct{}
	if c := r.cfg.MaxConcurrency; c > 0 {
		slots = make(chan struct{}, c)
	}
	theta := 1 / (r.cfg.RequestRate * r.cfg.Burstiness)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	due := time.Now()
dispatch:
	for i := range n {
		if i > 0 {
			// Gaps are drawn after each dispatch, as get_request does; the
			// schedule is absolute so a late wake-up does not lower the rate.
			due = due.Add(time.Duration(rng.Gamma(r.cfg.Burstiness, theta) * float64(time.Second)))
			timer.Reset(time.Until(due))
			select {
			case <-timer.C:
			case <-ctx.Done():
				break dispatch
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if slots != nil {
				select {
				case slots <- struct{}{}:
					defer func() { <-slots }()
				case <-ctx.Done():
					return
				}
			}
			one(i)
		}()
	}
	wg.Wait()
}

// do sends one request and records its stream. It mirrors
// async_request_openai_completions: TTFT is the time to the first chunk
// with non-empty choices, each later such chunk adds one ITL gap, latency
// ends at the last such chunk, and completion_tokens comes from usage. A
// non-200 status, a transport or parse error, or a stream without any
// choices chunk makes the request failed.
//
// Plain-HTTP endpoints go through the runner's own HTTP/1.1 streaming
// client (h1.go), everything else (https, a caller's http.Client) through
// net/http; both feed the same streamRecorder.
func (r *runner) do(ctx context.Context, body []byte, maxTokens int, rec *record) {
	r.doStamped(ctx, body, maxTokens, rec, nil)
}

// doStamped is do, adding the stream's stamped events to stamps (nil: not
// recorded, as for the warmup).
func (r *runner) doStamped(ctx context.Context, body []byte, maxTokens int, rec *record, stamps *stampHists) {
	rec.outputTokens = -1
	if cap(rec.itl) == 0 {
		rec.itl = make([]time.Duration, 0, max(maxTokens-1, 0))
	}
	reqCtx, cancel := context.WithTimeout(ctx, r.cfg.RequestTimeout)
	defer cancel()
	sr := streamRecorder{rec: rec, saveText: r.cfg.SaveDetailed, stamps: stamps, maxTokens: maxTokens,
		held: budget.Holder{Limit: max(MinStreamBytes, int64(maxTokens)*StreamBytesPerToken)}}
	if stamps != nil { // a measured request: its record is kept until the point is written
		sr.held.Pool = &r.held
	}
	if r.h1 != nil {
		r.h1.do(reqCtx, r.h1Request(body), &sr)
	} else {
		r.doNetHTTP(reqCtx, body, &sr)
	}
	rec.start = sr.start
	if sr.err != nil {
		r.fail(ctx, rec, sr.err)
		return
	}
	if rec.err != "" {
		return
	}
	if rec.chunks == 0 {
		rec.err = "Never received a valid chunk to calculate TTFT. This response will be marked as failed!"
		return
	}
	rec.latency = sr.last.Sub(sr.start)
	rec.success = true
}

// streamRecorder turns a response's SSE lines into a record as they arrive.
type streamRecorder struct {
	rec      *record
	saveText bool
	start    time.Time // the request was sent (TTFT's origin)
	last     time.Time // the latest chunk with choices
	done     bool      // [DONE] seen
	events   int       // payload lines seen, up to MaxSSEEvents
	// err is a transport failure (judged by runner.fail); a refused request
	// or a malformed chunk goes to rec.err directly.
	err error
	// stamps, when set, take the client-added latency of every token event
	// the server stamped; readAt is when the transport read the bytes
	// being fed (Unix ns; 0: the event's own time, as with net/http).
	stamps    *stampHists
	readAt    int64
	held      budget.Holder // what the record holds (ITL gaps, text)
	maxTokens int
}

// charge counts n more bytes the record will hold; past the stream's or
// the point's bound the request fails, naming it, and the record lets go.
func (s *streamRecorder) charge(n int) bool {
	if err := s.held.Charge(n); err != nil {
		s.rec.err = fmt.Sprintf("reading stream of max_tokens %d: it would hold %v (%d bytes a token, at least %s a stream, %s a point)",
			s.maxTokens, err, StreamBytesPerToken, readlimit.Size(MinStreamBytes), readlimit.Size(MaxPointBytes))
		s.rec.itl, s.rec.text = nil, nil
		return false
	}
	return true
}

// line handles one trimmed line that arrived at now; false stops the
// stream (the request has failed, or [DONE]).
func (s *streamRecorder) line(line []byte, now time.Time) bool {
	payload, ok := ssePayload(line)
	if !ok {
		return true
	}
	if s.events++; s.events > MaxSSEEvents {
		s.rec.err = "reading stream: " + errSSETooMany.Error()
		return false
	}
	if bytes.Equal(payload, sseDone) {
		s.done = true
		return false
	}
	c, err := parseChunk(payload)
	if err != nil {
		s.rec.err = fmt.Sprintf("parsing stream chunk %.200q: %v", payload, err)
		return false
	}
	rec := s.rec
	if c.choices {
		if rec.chunks == 0 {
			rec.ttft = now.Sub(s.start)
		} else {
			if !s.charge(8) {
				return false
			}
			rec.itl = append(rec.itl, now.Sub(s.last))
		}
		s.last = now
		rec.chunks++
		if c.sent != 0 && s.stamps != nil {
			at := now.UnixNano()
			read := s.readAt
			if read == 0 {
				read = at
			}
			s.stamps.observe(at, read, c.sent)
		}
		if s.saveText {
			text := choiceText(c.choicesRaw)
			if !s.charge(len(text)) {
				return false
			}
			rec.text = append(rec.text, text...)
		}
	}
	if c.usage {
		rec.outputTokens = c.completionTokens
	}
	return true
}

// refused records a non-200 answer.
func (s *streamRecorder) refused(status string, msg []byte) {
	s.rec.err = fmt.Sprintf("HTTP %s: %s", status, bytes.TrimSpace(msg))
}

// doNetHTTP sends the request with net/http.
func (r *runner) doNetHTTP(ctx context.Context, body []byte, sr *streamRecorder) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		sr.rec.err = err.Error()
		return
	}
	req.Header = r.header.Clone()
	// GetBody lets the transport resend when a kept-alive connection turns
	// out to be closed before anything was written.
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }

	sr.start = time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		sr.err = err
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		sr.refused(resp.Status, msg)
		return
	}
	lines := sseLines{r: bufio.NewReaderSize(resp.Body, 8<<10)}
	for {
		line, rerr := lines.next()
		if errors.Is(rerr, errSSELineTooLong) {
			sr.rec.err = "reading stream: " + rerr.Error()
			return
		}
		if !sr.line(line, time.Now()) {
			if sr.done {
				// Drain so the connection goes back to the pool.
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
			}
			return
		}
		if errors.Is(rerr, io.EOF) {
			return
		}
		if rerr != nil {
			sr.err = fmt.Errorf("reading stream: %w", rerr)
			return
		}
	}
}

func (r *runner) fail(ctx context.Context, rec *record, err error) {
	if ctx.Err() != nil {
		rec.interrupted = true
		rec.err = "interrupted: " + context.Cause(ctx).Error()
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		rec.err = fmt.Sprintf("request timed out after %s", r.cfg.RequestTimeout)
		return
	}
	rec.err = err.Error()
}

// reportProgress calls cfg.Progress from one goroutine until the returned
// stop is called, which sends the final snapshot.
func (r *runner) reportProgress(phase Phase, total int, t *tally) (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	began := time.Now()
	snapshot := func(final bool) Progress {
		return Progress{Phase: phase, Total: total, Finished: int(t.done.Load()), Failed: int(t.failed.Load()),
			Tokens: int(t.tokens.Load()), Elapsed: time.Since(began), MedianTTFT: t.medianTTFT(), Final: final}
	}
	quit := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(r.cfg.ProgressInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				r.cfg.Progress(snapshot(false))
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
		r.cfg.Progress(snapshot(true))
	}
}
