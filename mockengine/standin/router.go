package standin

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
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// pdRouter is the routing both stand-in routers share: a request's prefill
// goes to the next prefill (context) server, its generation to the next
// decode (generation) server, round robin; with no prefill servers every
// request goes whole to the next worker.
type pdRouter struct {
	name            string
	log             io.Writer
	prefill, decode []string // base URLs, http://host:port
	bootstrap       []string // a prefill's bootstrap port, "" when none (reported by /workers)
	model           string   // /workers' model_id: the first decode worker's /v1/models
	workersAPI      bool     // serve GET /workers (vllm-router)

	rrP, rrD atomic.Uint64
	// prefilled counts prefills answered 200; the first is logged per
	// router, so a run's log shows the prefill servers took part.
	prefilled atomic.Int64
	client    *http.Client
	proxy     *httputil.ReverseProxy
}

// maxBody bounds a request body the router reads.
const maxBody = 64 << 20

// run waits up to timeoutSecs for every worker's /health to answer 200 (the
// real routers do not serve before their workers are up), then serves on
// addr until ctx ends.
func (r *pdRouter) run(ctx context.Context, addr string, timeoutSecs int) error {
	r.client = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1024}}
	r.proxy = &httputil.ReverseProxy{
		Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(pr.In.Context().Value(targetKey{}).(*url.URL)) },
		Transport:     r.client.Transport,
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
	}
	fmt.Fprintf(r.log, "%s (stand-in): prefill %v, decode %v; waiting up to %ds for their /health\n", r.name, r.prefill, r.decode, timeoutSecs)
	wait, cancel := context.WithTimeout(ctx, time.Duration(timeoutSecs)*time.Second)
	defer cancel()
	for _, u := range append(append([]string{}, r.prefill...), r.decode...) {
		if err := r.waitHealthy(wait, u); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("%s: worker %s did not become healthy within %ds: %w", r.name, u, timeoutSecs, err)
		}
	}
	if r.workersAPI {
		r.model = r.workerModel(ctx)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listening on %s: %w", r.name, addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /v1/models", r.forwardWhole)
	mux.HandleFunc("POST /v1/completions", r.route)
	mux.HandleFunc("POST /v1/chat/completions", r.route)
	if r.workersAPI {
		mux.HandleFunc("GET /workers", r.workers)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(r.log, "%s (stand-in): serving on %s\n", r.name, ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s: serving: %w", r.name, err)
	}
	return nil
}

func (r *pdRouter) waitHealthy(ctx context.Context, base string) error {
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := r.client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// workerModel is the model the first decode worker lists ("" when it
// lists none), which /workers reports as every worker's model_id.
func (r *pdRouter) workerModel(ctx context.Context) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.decode[0]+"/v1/models", nil)
	if err != nil {
		return ""
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var m struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&m) != nil || len(m.Data) == 0 {
		return ""
	}
	return m.Data[0].ID
}

type targetKey struct{}

func (r *pdRouter) next(list []string, rr *atomic.Uint64) string {
	return list[(rr.Add(1)-1)%uint64(len(list))]
}

// forwardWhole sends the request, as it is, to the next decode worker.
func (r *pdRouter) forwardWhole(w http.ResponseWriter, req *http.Request) {
	r.forwardTo(w, req, r.next(r.decode, &r.rrD))
}

func (r *pdRouter) forwardTo(w http.ResponseWriter, req *http.Request, base string) {
	u, err := url.Parse(base)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	r.proxy.ServeHTTP(w, req.WithContext(context.WithValue(req.Context(), targetKey{}, u)))
}

// route runs a generation request: its prefill first (the same request
// with one output token, not streamed), then the whole request on a
// decode worker, whose answer goes back as it streams.
func (r *pdRouter) route(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(r.prefill) > 0 {
		if err := r.prefillOnce(req, body); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	out := req.Clone(req.Context())
	out.Body, out.ContentLength, out.GetBody = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	r.forwardTo(w, out, r.next(r.decode, &r.rrD))
}

func (r *pdRouter) prefillOnce(req *http.Request, body []byte) error {
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("request body: %w", err)
	}
	m["max_tokens"], m["stream"] = 1, false
	delete(m, "stream_options")
	pb, err := json.Marshal(m)
	if err != nil {
		return err
	}
	target := r.next(r.prefill, &r.rrP)
	// The path is one of the two the mux routes here; the host is a
	// worker from the command line or ser.yaml.
	preq, err := http.NewRequestWithContext(req.Context(), http.MethodPost, target+req.URL.Path, bytes.NewReader(pb)) //nolint:gosec // a worker the router was configured with
	if err != nil {
		return err
	}
	preq.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(preq) //nolint:gosec // likewise
	if err != nil {
		return fmt.Errorf("prefill on %s: %w", target, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("prefill on %s: %s: %s", target, resp.Status, strings.TrimSpace(string(msg)))
	}
	if r.prefilled.Add(1) == 1 {
		fmt.Fprintf(r.log, "%s (stand-in): first prefill answered by %s\n", r.name, target)
	}
	return nil
}

// routerWorker is one entry of vllm-router's GET /workers: the fields of
// vllm-project/router src/server.rs@00edc4e9 list_workers_rest (single
// router mode), bootstrap_port only on a prefill worker. load, priority
// and cost are the stand-in's fixed values; no client reads them.
type routerWorker struct {
	URL            string `json:"url"`
	ModelID        string `json:"model_id"`
	WorkerType     string `json:"worker_type"`
	IsHealthy      bool   `json:"is_healthy"`
	Load           int    `json:"load"`
	ConnectionMode string `json:"connection_mode"`
	Priority       int    `json:"priority"`
	Cost           int    `json:"cost"`
	BootstrapPort  *int   `json:"bootstrap_port,omitempty"`
}

// routerWorkers is the body: workers, total, and stats counting prefill,
// decode and regular workers.
type routerWorkers struct {
	Workers []routerWorker `json:"workers"`
	Total   int            `json:"total"`
	Stats   struct {
		PrefillCount int `json:"prefill_count"`
		DecodeCount  int `json:"decode_count"`
		RegularCount int `json:"regular_count"`
	} `json:"stats"`
}

func (r *pdRouter) workers(w http.ResponseWriter, _ *http.Request) {
	body := routerWorkers{Workers: []routerWorker{}}
	add := func(u, typ string, bootstrap *int) {
		body.Workers = append(body.Workers, routerWorker{URL: u, ModelID: r.model, WorkerType: typ, IsHealthy: true,
			ConnectionMode: "Http", Priority: 50, Cost: 1, BootstrapPort: bootstrap})
	}
	for i, u := range r.prefill {
		var bp *int
		if i < len(r.bootstrap) && r.bootstrap[i] != "" {
			var n int
			if _, err := fmt.Sscan(r.bootstrap[i], &n); err == nil {
				bp = &n
			}
		}
		add(u, "prefill", bp)
		body.Stats.PrefillCount++
	}
	typ := "regular"
	if len(r.prefill) > 0 {
		typ = "decode"
	}
	for _, u := range r.decode {
		add(u, typ, nil)
		if typ == "decode" {
			body.Stats.DecodeCount++
		} else {
			body.Stats.RegularCount++
		}
	}
	body.Total = len(body.Workers)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}
