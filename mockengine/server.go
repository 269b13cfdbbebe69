package mockengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ExitError ends Serve when an injected fault makes the engine exit; the
// command exits with Code (which may be 0).
type ExitError struct {
	Code   int
	Reason string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("injected fault: %s (exit code %d)", e.Reason, e.Code)
}

// Server is one mock engine process: a standalone server, a frontend or a
// worker. Create it with New and run it with Serve.
type Server struct {
	opts Options
	log  *log.Logger
	reg  *registry // frontend only
	prox *proxy    // frontend only

	served   atomic.Bool
	ready    atomic.Bool // loaded: health passes, requests are answered
	hung     atomic.Bool // every HTTP request blocks
	stopping chan struct{}
	stopOnce sync.Once
	exitCh   chan *ExitError // request-count faults

	started   atomic.Int64 // generation requests received
	completed atomic.Int64 // generation requests finished
	running   atomic.Int64 // generation requests in flight
	tokens    atomic.Int64 // tokens sent
	// forwardSleep is SGLang's /slow_down forward_sleep_time, in
	// nanoseconds added to every token (0 = off).
	forwardSleep atomic.Int64
	addr         net.Addr

	handler http.Handler
}

// New checks opts and builds a Server.
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("mock engine options: %w", err)
	}
	s := &Server{
		opts:     opts,
		log:      log.New(opts.Log, "", log.Ldate|log.Ltime|log.Lmicroseconds),
		stopping: make(chan struct{}),
		exitCh:   make(chan *ExitError, 1),
	}
	if opts.Mode == ModeFrontend {
		s.reg = newRegistry(opts.WorkerTTL, s.log)
		s.prox = newProxy(s)
	}
	s.handler = s.routes()
	return s, nil
}

// Handler is the server's HTTP handler. It answers only while Serve runs
// (before that it reports "loading"); it is exposed for tests that wrap it.
func (s *Server) Handler() http.Handler { return s.handler }

// Ready reports whether the server has finished its simulated start-up.
func (s *Server) Ready() bool { return s.ready.Load() }

// Serve runs the engine on ln until ctx ends (graceful: a worker
// deregisters, then the listener closes; in-flight streams are cut) or an
// injected fault fires (returns *ExitError; a crash: no deregistration).
// It closes ln. It returns nil after a graceful stop.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if !s.served.CompareAndSwap(false, true) {
		return errors.New("mock engine: Serve called twice")
	}
	s.addr = ln.Addr()
	// A hung engine never answers, not even in its first milliseconds.
	s.hung.Store(s.opts.Faults.Hang)
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 30 * time.Second,
		// Client disconnects mid-stream are routine in benchmarks.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()

	var bg sync.WaitGroup
	bgCtx, stopBG := context.WithCancel(context.Background())
	var crashed atomic.Bool
	result := s.run(ctx, bgCtx, &bg, &crashed)

	s.stopOnce.Do(func() { close(s.stopping) })
	if result != nil {
		crashed.Store(true)
	}
	stopBG() // a worker deregisters here unless it crashed
	bg.Wait()
	if result != nil {
		_ = hs.Close()
	} else {
		// ctx is done: the shutdown gets its own bound.
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := hs.Shutdown(shutdownCtx); err != nil {
			_ = hs.Close()
		}
		cancel()
		s.log.Printf("mock engine stopped")
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		if result == nil {
			return fmt.Errorf("serving HTTP on %s: %w", s.addr, err)
		}
	}
	return result
}

// ListenAndServe listens on addr (HOST:PORT) and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return s.Serve(ctx, ln)
}

// run is the engine's life: start-up, faults, serving. It returns a non-nil
// *ExitError only for faults; background goroutines run on bgCtx.
func (s *Server) run(ctx, bgCtx context.Context, bg *sync.WaitGroup, crashed *atomic.Bool) error {
	o := s.opts
	f := o.Faults
	s.logStartBegin()
	switch {
	case f.FailBeforeHealthy:
		if !sleepCtx(ctx, f.FailAfter) {
			return nil
		}
		s.printFaultLines(fmt.Sprintf("mock-engine: injected failure before healthy (exit code %d)", f.ExitCode))
		return &ExitError{Code: f.ExitCode, Reason: "failed before healthy"}
	case f.Hang:
		// A hung engine prints nothing more and answers nothing.
		<-ctx.Done()
		return nil
	}
	if !sleepCtx(ctx, o.StartupDelay) {
		return nil
	}
	s.ready.Store(true)
	s.logStartEnd()

	if o.Mode.IsWorker() && o.FrontendURL != "" {
		bg.Add(1)
		go func() {
			defer bg.Done()
			s.registerLoop(bgCtx, crashed)
		}()
	}
	if s.reg != nil {
		bg.Add(1)
		go func() {
			defer bg.Done()
			s.reg.sweepLoop(bgCtx)
		}()
	}
	if o.StatsInterval > 0 && (o.Mode == ModeStandalone || o.Mode == ModeDecode || o.Mode == ModeAgg) {
		bg.Add(1)
		go func() {
			defer bg.Done()
			s.statsLoop(bgCtx)
		}()
	}
	var exitAfter <-chan time.Time
	if f.ExitAfter > 0 {
		t := time.NewTimer(f.ExitAfter)
		defer t.Stop()
		exitAfter = t.C
	}
	select {
	case <-ctx.Done():
		s.log.Printf("received shutdown signal, stopping")
		return nil
	case e := <-s.exitCh:
		return e
	case <-exitAfter:
		s.printFaultLines(fmt.Sprintf("mock-engine: injected exit %s after healthy (exit code %d)", f.ExitAfter, f.ExitCode))
		return &ExitError{Code: f.ExitCode, Reason: fmt.Sprintf("exit %s after healthy", f.ExitAfter)}
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// printFaultLines writes the configured fault lines verbatim, in one write
// so they stay together in the log.
func (s *Server) printFaultLines(fallback string) {
	lines := s.opts.Faults.LogLines
	if len(lines) == 0 {
		lines = []string{fallback}
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(strings.TrimRight(l, "\n"))
		b.WriteByte('\n')
	}
	_, _ = io.WriteString(s.opts.Log, b.String())
}

// Plausible engine start-up lines; none contains an error keyword, so a log
// classifier finds only the injected lines.
func (s *Server) logStartBegin() {
	o := s.opts
	s.log.Printf("mock-engine pid %d: mode=%s model=%s listen=%s ttft=%s itl=%s", os.Getpid(), o.Mode, o.Model, s.addr, o.TTFT, o.ITL)
	if o.Mode == ModeFrontend {
		s.log.Printf("Starting Dynamo-compatible HTTP frontend (namespace %s), worker ttl %s", o.Namespace, o.WorkerTTL)
		return
	}
	s.log.Printf("server_args=ServerArgs(model_path='%s', served_model_name='%s', disaggregation_mode='%s', tp_size=1, mem_fraction_static=0.85)", o.Model, o.Model, s.disaggMode())
	s.log.Printf("Load weight begin. avail mem=78.50 GB")
	s.log.Printf("Load weight end. type=MockForCausalLM, dtype=torch.bfloat16, avail mem=70.12 GB, mem usage=8.38 GB.")
	s.log.Printf("KV Cache is allocated. #tokens: 1048576, K size: 4.00 GB, V size: 4.00 GB")
	s.log.Printf("Capture cuda graph begin. This can take up to several minutes. avail mem=61.00 GB")
}

func (s *Server) logStartEnd() {
	o := s.opts
	if o.Mode != ModeFrontend {
		s.log.Printf("Capture cuda graph end. Time elapsed: %.2f s. mem usage=0.50 GB. avail mem=60.50 GB.", o.StartupDelay.Seconds())
	}
	s.log.Printf("Uvicorn running on http://%s (Press CTRL+C to quit)", s.addr)
	s.log.Printf("The server is fired up and ready to roll!")
}

func (s *Server) disaggMode() string {
	switch s.opts.Mode {
	case ModePrefill:
		return "prefill"
	case ModeDecode:
		return "decode"
	}
	return "null"
}

// statsLoop prints sglang's decode-batch line while there is traffic;
// srt-slurm's rollup reads "#running-req:" from decode logs.
func (s *Server) statsLoop(ctx context.Context) {
	t := time.NewTicker(s.opts.StatsInterval)
	defer t.Stop()
	last, lastAt := s.tokens.Load(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			tok, running := s.tokens.Load(), s.running.Load()
			if tok != last || running > 0 {
				rate := float64(tok-last) / now.Sub(lastAt).Seconds()
				s.log.Printf("Decode batch, #running-req: %d, #token: %d, token usage: 0.00, cuda graph: True, gen throughput (token/s): %.2f, #queue-req: 0,", running, tok-last, rate)
			}
			last, lastAt = tok, now
		}
	}
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.handleHealth)
	mux.HandleFunc("GET /live", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "live", "message": "Service is live"})
	})
	mux.HandleFunc("GET /v1/models", s.handleModels)
	if s.opts.Mode == ModeFrontend {
		completions, chat := s.prox.serve, s.prox.serve
		if s.opts.FrontendGenerates {
			completions = s.whenWorkers(s.generationHandler(parseCompletionRequest))
			chat = s.whenWorkers(s.generationHandler(parseChatRequest))
		}
		mux.HandleFunc("POST /v1/completions", s.counted(completions))
		mux.HandleFunc("POST /v1/chat/completions", s.counted(chat))
		mux.HandleFunc("GET /workers", s.handleRouterWorkers)
		mux.HandleFunc("POST "+registerPath, s.handleRegister)
		mux.HandleFunc("POST "+deregisterPath, s.handleDeregister)
	} else {
		mux.HandleFunc("POST /v1/completions", s.counted(s.generationHandler(parseCompletionRequest)))
		mux.HandleFunc("POST /v1/chat/completions", s.counted(s.generationHandler(parseChatRequest)))
		s.profileRoutes(mux)
		mux.HandleFunc("POST /slow_down", s.handleSlowDown)
	}
	return s.gate(mux)
}

// gate applies the server-wide state: a hung server blocks every request,
// a loading one answers 503.
func (s *Server) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.hung.Load() {
			s.block(r)
			return
		}
		if !s.ready.Load() {
			if r.URL.Path == "/health" && s.opts.Mode.IsWorker() {
				writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "notready", "endpoints": map[string]string{"generate": "notready"}})
				return
			}
			writeError(w, http.StatusServiceUnavailable, "server is loading the model")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// block holds a request until its client or the server gives up.
func (s *Server) block(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.stopping:
	}
}

// counted applies the request-count faults around a generation handler:
// requests past the limit are held; the limit-th completion fires the fault.
func (s *Server) counted(next http.HandlerFunc) http.HandlerFunc {
	f := s.opts.Faults
	return func(w http.ResponseWriter, r *http.Request) {
		seq := s.started.Add(1)
		if (f.ExitAfterRequests > 0 && seq > int64(f.ExitAfterRequests)) ||
			(f.HangAfterRequests > 0 && seq > int64(f.HangAfterRequests)) {
			s.block(r)
			// Never answered: a crashed or hung engine resets the
			// connection. Returning would send an empty 200 when the
			// server stops before the connection is closed.
			panic(http.ErrAbortHandler)
		}
		next(w, r)
		done := s.completed.Add(1)
		if f.ExitAfterRequests > 0 && done == int64(f.ExitAfterRequests) {
			s.printFaultLines(fmt.Sprintf("mock-engine: injected exit after %d requests (exit code %d)", done, f.ExitCode))
			s.exitCh <- &ExitError{Code: f.ExitCode, Reason: fmt.Sprintf("exit after %d requests", done)}
		}
		if f.HangAfterRequests > 0 && done == int64(f.HangAfterRequests) {
			s.log.Printf("served %d requests; hanging (injected fault)", done)
			s.hung.Store(true)
		}
	}
}

type requestParser func(body []byte, defaultMax int) (*genRequest, error)

func (s *Server) generationHandler(parse requestParser) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		// Size the buffer from Content-Length: SA-Bench bodies are 5-50 KB.
		buf := bytes.NewBuffer(make([]byte, 0, min(max(r.ContentLength, 0), 1<<20)+512))
		_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 64<<20))
		body := buf.Bytes()
		if err != nil {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("reading body: %v", err))
			return
		}
		req, err := parse(body, s.opts.DefaultMaxTokens)
		if err != nil {
			var re *requestError
			if errors.As(err, &re) {
				writeError(w, http.StatusBadRequest, re.msg)
				return
			}
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
		if !s.opts.AnyModel && req.model != "" && !s.servesModel(req.model) {
			writeErrorType(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.model))
			return
		}
		s.generate(w, r, req, start)
	}
}

// servesModel reports whether a request may name model: the served model,
// or for a frontend any model its workers registered.
func (s *Server) servesModel(model string) bool {
	if s.reg != nil {
		return slices.Contains(s.reg.models(), model)
	}
	return model == s.opts.Model
}

// whenWorkers answers 503 while no decode or agg worker is registered, as a
// Dynamo frontend with nothing to route to does.
func (s *Server) whenWorkers(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.reg.nextTarget() == nil {
			writeError(w, http.StatusServiceUnavailable, "no decode workers are registered")
			return
		}
		next(w, r)
	}
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	switch {
	case s.opts.Mode == ModeFrontend:
		writeJSON(w, http.StatusOK, s.reg.health())
	case s.opts.Mode.IsWorker():
		// Dynamo's per-worker system status server.
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "endpoints": map[string]string{"generate": "ready"}})
	default:
		// sglang and vLLM answer 200 with an empty body.
		w.WriteHeader(http.StatusOK)
	}
}

type modelCard struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	var names []string
	if s.reg != nil {
		names = s.reg.models() // a Dynamo frontend serves what its workers registered
	} else {
		names = []string{s.opts.Model}
	}
	cards := make([]modelCard, 0, len(names))
	for _, n := range names {
		cards = append(cards, modelCard{ID: n, Object: "model", Created: 0, OwnedBy: "mock-engine"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": cards})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	typ := "BadRequestError"
	if status >= 500 {
		typ = "ServiceUnavailableError"
	}
	writeErrorType(w, status, typ, msg)
}

// writeErrorType writes OpenAI's error envelope.
func writeErrorType(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}
