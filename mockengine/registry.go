package mockengine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The frontend's internal registration API. Workers POST a Registration
// every heartbeat interval; the frontend drops a worker whose last
// heartbeat is older than its TTL, and at once on deregistration.
const (
	registerPath   = "/internal/mock/register"
	deregisterPath = "/internal/mock/deregister"
)

// Registration is what a worker tells the frontend about itself.
type Registration struct {
	InstanceID int64  `json:"instance_id"`
	Component  string `json:"component"` // prefill, decode, backend
	Namespace  string `json:"namespace"`
	Model      string `json:"model"`
	URL        string `json:"url"` // where the frontend forwards requests
}

// Instance is one entry of the frontend's /health "instances" list, in
// Dynamo's shape (docs/observability/health-checks.md, "Frontend Health
// Check"). srt-slurm's check_dynamo_health (core/health.py) counts only
// entries with
// endpoint == "generate", by component: "prefill" → P; "decode",
// "tensorrt_llm" or "backend" → D; ready iff P >= n_prefill and D >= n_decode.
// Like a real Dynamo worker, each registered worker contributes three
// entries (clear_kv_blocks, generate, load_metrics), so a gate that forgets
// the endpoint filter counts three times too many.
type Instance struct {
	Component  string            `json:"component"`
	Endpoint   string            `json:"endpoint"`
	InstanceID int64             `json:"instance_id"`
	Namespace  string            `json:"namespace"`
	Transport  map[string]string `json:"transport"`
}

// FrontendHealth is the frontend's GET /health body. Dynamo answers 200
// in both states; "status" is "healthy" once any endpoint is registered,
// otherwise "unhealthy" with message "No endpoints available".
type FrontendHealth struct {
	Status    string     `json:"status"`
	Message   string     `json:"message,omitempty"`
	Endpoints []string   `json:"endpoints,omitempty"`
	Instances []Instance `json:"instances"`
}

// instanceEndpoints are the endpoints a Dynamo worker serves, in the order
// Dynamo lists them.
var instanceEndpoints = []string{"clear_kv_blocks", "generate", "load_metrics"}

type registered struct {
	Registration
	target   *url.URL
	lastSeen time.Time
}

// registry is the frontend's view of its workers.
type registry struct {
	ttl time.Duration
	log *log.Logger
	now func() time.Time

	mu      sync.Mutex
	workers map[int64]*registered
	rr      atomic.Uint64
}

func newRegistry(ttl time.Duration, l *log.Logger) *registry {
	return &registry{ttl: ttl, log: l, now: time.Now, workers: map[int64]*registered{}}
}

func (g *registry) register(reg Registration) error {
	if reg.InstanceID == 0 {
		return errors.New("instance_id is required")
	}
	switch reg.Component {
	case "prefill", "decode", "backend":
	default:
		return fmt.Errorf("component %q: want prefill, decode or backend", reg.Component)
	}
	target, err := url.Parse(reg.URL)
	if err != nil || target.Scheme == "" || target.Host == "" {
		return fmt.Errorf("url %q: want http://host:port", reg.URL)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.workers[reg.InstanceID]; !ok {
		g.log.Printf("worker registered: %s instance %d at %s (model %s)", reg.Component, reg.InstanceID, reg.URL, reg.Model)
	}
	g.workers[reg.InstanceID] = &registered{Registration: reg, target: target, lastSeen: g.now()}
	return nil
}

func (g *registry) deregister(id int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w, ok := g.workers[id]; ok {
		g.log.Printf("worker deregistered: %s instance %d at %s", w.Component, id, w.URL)
		delete(g.workers, id)
	}
}

// live returns the workers whose heartbeat is recent, sorted by component
// and id, and forgets the others.
func (g *registry) live() []*registered {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	out := make([]*registered, 0, len(g.workers))
	for id, w := range g.workers {
		if now.Sub(w.lastSeen) > g.ttl {
			g.log.Printf("worker expired: %s instance %d at %s (no heartbeat for %s)", w.Component, id, w.URL, now.Sub(w.lastSeen).Round(time.Millisecond))
			delete(g.workers, id)
			continue
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b *registered) int {
		if c := strings.Compare(a.Component, b.Component); c != 0 {
			return c
		}
		return cmp.Compare(a.InstanceID, b.InstanceID)
	})
	return out
}

// sweepLoop expires silent workers even when nobody polls /health, so the
// expiry shows in the log when it happens.
func (g *registry) sweepLoop(ctx context.Context) {
	t := time.NewTicker(max(g.ttl/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			g.live()
		}
	}
}

func (g *registry) health() FrontendHealth {
	h := FrontendHealth{Status: "healthy", Instances: []Instance{}}
	seen := map[string]bool{}
	for _, w := range g.live() {
		ep := fmt.Sprintf("dyn://%s.%s.generate", w.Namespace, w.Component)
		if !seen[ep] {
			seen[ep] = true
			h.Endpoints = append(h.Endpoints, ep)
		}
		for _, e := range instanceEndpoints {
			h.Instances = append(h.Instances, Instance{
				Component:  w.Component,
				Endpoint:   e,
				InstanceID: w.InstanceID,
				Namespace:  w.Namespace,
				Transport:  map[string]string{"nats_tcp": fmt.Sprintf("%s_%s.%s-%x", w.Namespace, w.Component, e, w.InstanceID)},
			})
		}
	}
	if len(h.Instances) == 0 {
		h.Status, h.Message = "unhealthy", "No endpoints available"
	}
	return h
}

// RouterWorkers is the GET /workers body of sglang's and vLLM's router,
// which srt-slurm's check_static_router_health reads: ready iff
// stats.prefill_count >= nP and stats.decode_count + stats.regular_count >= nD.
type RouterWorkers struct {
	Workers []RouterWorker `json:"workers"`
	Total   int            `json:"total"`
	Stats   struct {
		PrefillCount int `json:"prefill_count"`
		DecodeCount  int `json:"decode_count"`
		RegularCount int `json:"regular_count"`
	} `json:"stats"`
}

// RouterWorker is one entry of RouterWorkers.
type RouterWorker struct {
	URL        string `json:"url"`
	ModelID    string `json:"model_id"`
	WorkerType string `json:"worker_type"` // prefill, decode, regular
	IsHealthy  bool   `json:"is_healthy"`
}

func (g *registry) routerWorkers() RouterWorkers {
	var rw RouterWorkers
	rw.Workers = []RouterWorker{}
	for _, w := range g.live() {
		typ := w.Component
		switch typ {
		case "prefill":
			rw.Stats.PrefillCount++
		case "decode":
			rw.Stats.DecodeCount++
		default:
			typ = "regular"
			rw.Stats.RegularCount++
		}
		rw.Workers = append(rw.Workers, RouterWorker{URL: w.URL, ModelID: w.Model, WorkerType: typ, IsHealthy: true})
	}
	rw.Total = len(rw.Workers)
	return rw
}

func (g *registry) models() []string {
	var names []string
	for _, w := range g.live() {
		if !slices.Contains(names, w.Model) {
			names = append(names, w.Model)
		}
	}
	slices.Sort(names)
	return names
}

// nextTarget picks the next decode or agg worker, round robin.
func (g *registry) nextTarget() *registered {
	var targets []*registered
	for _, w := range g.live() {
		if w.Component == "decode" || w.Component == "backend" {
			targets = append(targets, w)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	return targets[(g.rr.Add(1)-1)%uint64(len(targets))]
}

func (s *Server) handleRegister(w http.ResponseWriter, r *http.Request) {
	var reg Registration
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&reg); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("registration: %v", err))
		return
	}
	if err := s.reg.register(reg); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("registration: %v", err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleDeregister(w http.ResponseWriter, r *http.Request) {
	var reg Registration
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&reg); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("deregistration: %v", err))
		return
	}
	s.reg.deregister(reg.InstanceID)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) handleRouterWorkers(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.reg.routerWorkers())
}

// proxy forwards the frontend's /v1 requests to decode workers.
type proxy struct {
	s  *Server
	rp *httputil.ReverseProxy
}

type targetKey struct{}

func newProxy(s *Server) *proxy {
	transport := &http.Transport{
		Proxy:               nil, // workers are on the cluster network, never behind HTTP_PROXY
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 4096, // one kept-alive connection per concurrent stream
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	p := &proxy{s: s}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(pr.In.Context().Value(targetKey{}).(*url.URL))
		},
		Transport:     transport,
		FlushInterval: -1, // SSE: every chunk goes out as it arrives
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() != nil {
				return // the client left
			}
			writeError(w, http.StatusBadGateway, fmt.Sprintf("forwarding to worker: %v", err))
		},
	}
	return p
}

// maxProxyBody bounds a forwarded request body, as a worker bounds what it
// reads.
const maxProxyBody = 64 << 20

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	t := p.s.reg.nextTarget()
	if t == nil {
		writeError(w, http.StatusServiceUnavailable, "no decode workers are registered")
		return
	}
	out, err := detachBody(w, r)
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("reading body: %v", err))
		return
	}
	p.rp.ServeHTTP(w, out.WithContext(context.WithValue(r.Context(), targetKey{}, t.target)))
}

// detachBody returns r with its body read whole into memory. Forwarded as
// the stream it is, the body may still be open in the transport's writer
// (its last Read, for EOF) when the first streamed chunk writes the
// response headers; net/http then consumes and closes the request body
// (server.go, chunkWriter.writeHeader), the writer's Read fails, and the
// transport closes the worker connection mid-stream: the client's stream
// ends early (the nine-node e2e test lost a request so, about one run in
// ten).
func detachBody(w http.ResponseWriter, r *http.Request) (*http.Request, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxProxyBody))
	if err != nil {
		return nil, err
	}
	out := r.Clone(r.Context())
	out.Body, out.ContentLength, out.GetBody = io.NopCloser(bytes.NewReader(body)), int64(len(body)), nil
	return out, nil
}

// advertiseURL is how the frontend reaches this worker.
func (s *Server) advertiseURL() string {
	if s.opts.AdvertiseURL != "" {
		return s.opts.AdvertiseURL
	}
	host, port, err := net.SplitHostPort(s.addr.String())
	if err != nil {
		return "http://" + s.addr.String()
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// registerLoop registers the worker and re-registers every heartbeat
// interval until ctx ends, then deregisters — unless the engine crashed.
func (s *Server) registerLoop(ctx context.Context, crashed *atomic.Bool) {
	reg := Registration{
		InstanceID: rand.Int64N(1<<62) + 1, //nolint:gosec // a mock worker's id, not a secret
		Component:  s.opts.Mode.component(),
		Namespace:  s.opts.Namespace,
		Model:      s.opts.Model,
		URL:        s.advertiseURL(),
	}
	body, _ := json.Marshal(reg)
	base := strings.TrimRight(s.opts.FrontendURL, "/")
	// No HTTP_PROXY: clusters often set one, and the frontend is on the job's network.
	client := &http.Client{
		Timeout:   max(s.opts.HeartbeatInterval, time.Second),
		Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1, IdleConnTimeout: 90 * time.Second},
	}
	t := time.NewTicker(s.opts.HeartbeatInterval)
	defer t.Stop()
	registered, failures := false, 0
	for {
		err := post(ctx, client, base+registerPath, body)
		switch {
		case err == nil && !registered:
			s.log.Printf("registered with frontend %s as %s instance %d (namespace %s, url %s)", base, reg.Component, reg.InstanceID, reg.Namespace, reg.URL)
			registered, failures = true, 0
		case err == nil:
			failures = 0
		case ctx.Err() == nil:
			// Log the first failure and then every 30th, like a worker waiting for etcd.
			if failures%30 == 0 {
				s.log.Printf("frontend %s not reachable (%v); retrying every %s", base, err, s.opts.HeartbeatInterval)
			}
			failures++
			registered = false
		}
		select {
		case <-t.C:
			continue
		case <-ctx.Done():
		}
		break
	}
	if crashed.Load() {
		return
	}
	// ctx is done by now: deregistering is part of stopping, bounded on its own.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := post(dctx, client, base+deregisterPath, body); err != nil {
		s.log.Printf("deregistering from frontend %s: %v", base, err)
		return
	}
	s.log.Printf("deregistered from frontend %s", base)
}

func post(ctx context.Context, c *http.Client, u string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s: HTTP %d", u, resp.StatusCode)
	}
	return nil
}
