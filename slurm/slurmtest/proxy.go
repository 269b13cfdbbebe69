package slurmtest

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Action is what a Fault does to a request.
type Action int

const (
	// Drop closes the connection without forwarding or answering: the
	// server never sees the request.
	Drop Action = iota + 1
	// DropAfterForward forwards the request, lets the server act on it,
	// then closes the connection without answering: the client cannot know
	// the request succeeded. The worst case for a submit.
	DropAfterForward
	// Reset is Drop with a TCP RST instead of a clean close.
	Reset
	// Stall waits Delay before forwarding; if the client gives up first,
	// the request is never forwarded.
	Stall
	// StallResponse forwards at once, then holds the answer for Delay: the
	// server acts, the client may time out.
	StallResponse
	// Respond answers Status with Body without forwarding.
	Respond
	// RespondAfterForward forwards the request, lets the server act, then
	// answers Status with Body instead of the server's answer: slurmrestd's
	// 502 "Zero Bytes were transmitted or received" after slurmctld took
	// the job.
	RespondAfterForward
)

func (a Action) String() string {
	switch a {
	case Drop:
		return "drop"
	case DropAfterForward:
		return "drop-after-forward"
	case Reset:
		return "reset"
	case Stall:
		return "stall"
	case StallResponse:
		return "stall-response"
	case Respond:
		return "respond"
	case RespondAfterForward:
		return "respond-after-forward"
	}
	return "pass"
}

// Fault applies Action to matching requests: those whose method is Method
// ("" = any) and whose URL path contains Path ("" = any). The first Skip
// matches pass untouched; then Times matches (0 = every one) get Action.
type Fault struct {
	Method string
	Path   string
	Skip   int
	Times  int
	Action Action
	Delay  time.Duration // Stall, StallResponse
	Status int           // Respond, RespondAfterForward (default 500)
	Body   string        // Respond, RespondAfterForward

	matched int
}

func (f *Fault) take(r *http.Request) bool {
	if (f.Method != "" && f.Method != r.Method) || !strings.Contains(r.URL.Path, f.Path) {
		return false
	}
	f.matched++
	n := f.matched - f.Skip
	return n >= 1 && (f.Times == 0 || n <= f.Times)
}

// Request is one request the proxy saw.
type Request struct {
	Method string
	Path   string
	Action Action // 0 when passed through untouched
	Status int    // upstream status when forwarded (0 otherwise)
	// Delivered is set when the upstream answer reached the client
	// unchanged; Body is that answer.
	Delivered bool
	Body      []byte
}

// FaultProxy is a reverse proxy in front of a slurmrestd (real or fake)
// that injects faults and counts requests. Point the client at URL.
type FaultProxy struct {
	URL string

	target string
	srv    *httptest.Server
	client *http.Client

	mu       sync.Mutex
	faults   []*Fault
	requests []Request
}

// NewFaultProxy starts a proxy to target (a base URL such as
// http://127.0.0.1:6820), closed when the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	p := &FaultProxy{
		target: strings.TrimRight(target, "/"),
		client: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()},
	}
	p.srv = httptest.NewServer(http.HandlerFunc(p.serve))
	p.URL = p.srv.URL
	t.Cleanup(p.srv.Close)
	return p
}

// Add installs faults; the first matching one that is due applies.
func (p *FaultProxy) Add(faults ...Fault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range faults {
		f := faults[i]
		p.faults = append(p.faults, &f)
	}
}

// Clear removes every fault.
func (p *FaultProxy) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults = nil
}

// Count is the number of requests received with method ("" = any) whose
// path contains path, faulted or not.
func (p *FaultProxy) Count(method, path string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, r := range p.requests {
		if (method == "" || r.Method == method) && strings.Contains(r.Path, path) {
			n++
		}
	}
	return n
}

// Requests returns every request seen so far, in arrival order.
func (p *FaultProxy) Requests() []Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Request(nil), p.requests...)
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request) {
	// Reading the body first also lets the server notice a client that
	// hangs up during a stall (it cancels r.Context()).
	in, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	p.mu.Lock()
	var fault Fault
	for _, f := range p.faults {
		if f.take(r) {
			fault = *f
			break
		}
	}
	idx := len(p.requests)
	p.requests = append(p.requests, Request{Method: r.Method, Path: r.URL.Path, Action: fault.Action})
	p.mu.Unlock()

	switch fault.Action {
	case Drop:
		hangUp(w, false)
		return
	case Reset:
		hangUp(w, true)
		return
	case Respond:
		writeFault(w, fault)
		return
	case Stall:
		select {
		case <-time.After(fault.Delay):
		case <-r.Context().Done():
			return // the client gave up; the server never sees it
		}
	}

	ctx := r.Context()
	if fault.Action == DropAfterForward || fault.Action == StallResponse || fault.Action == RespondAfterForward {
		// The server must finish acting even though the client goes away.
		ctx = context.WithoutCancel(ctx)
	}
	resp, body, err := p.forward(ctx, r, in) //nolint:bodyclose // forward reads and closes the body
	if err != nil {
		http.Error(w, "fault proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	p.mu.Lock()
	p.requests[idx].Status = resp.StatusCode
	p.mu.Unlock()

	switch fault.Action {
	case DropAfterForward:
		hangUp(w, false)
		return
	case RespondAfterForward:
		writeFault(w, fault)
		return
	case StallResponse:
		select {
		case <-time.After(fault.Delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	// Recorded before the write: once the client has the answer it may act
	// on it (and a test read the record) before this handler runs again.
	p.mu.Lock()
	p.requests[idx].Delivered, p.requests[idx].Body = true, body
	p.mu.Unlock()
	w.WriteHeader(resp.StatusCode)
	if _, err := w.Write(body); err != nil { //nolint:gosec // a test proxy relays the fake server's own answer
		p.mu.Lock()
		p.requests[idx].Delivered = false
		p.mu.Unlock()
	}
}

func (p *FaultProxy) forward(ctx context.Context, r *http.Request, in []byte) (*http.Response, []byte, error) {
	out, err := http.NewRequestWithContext(ctx, r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(in)) //nolint:gosec // forwards to the target the test configured
	if err != nil {
		return nil, nil, err
	}
	out.Header = r.Header.Clone()
	resp, err := p.client.Do(out) //nolint:gosec // likewise
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// hangUp closes the client connection without an answer; with reset, the
// kernel sends RST instead of FIN.
func hangUp(w http.ResponseWriter, reset bool) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("slurmtest: response writer cannot be hijacked")
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
