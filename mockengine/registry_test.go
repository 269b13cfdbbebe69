package mockengine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// srtctlCounts mirrors srt-slurm's check_dynamo_health (core/health.py):
// only endpoint "generate" entries count; "prefill" → P, "decode",
// "tensorrt_llm" and "backend" → D.
func srtctlCounts(h FrontendHealth) (prefill, decode int) {
	for _, in := range h.Instances {
		if in.Endpoint != "generate" {
			continue
		}
		switch in.Component {
		case "prefill":
			prefill++
		case "decode", "tensorrt_llm", "backend":
			decode++
		}
	}
	return prefill, decode
}

func getHealth(t *testing.T, url string) FrontendHealth {
	t.Helper()
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("frontend /health status %d", resp.StatusCode)
	}
	var h FrontendHealth
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// waitCounts polls the frontend until srtctl would count want P and D.
func waitCounts(t *testing.T, url string, wantP, wantD int) FrontendHealth {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard, not a speed bound
	for {
		h := getHealth(t, url)
		if p, d := srtctlCounts(h); p == wantP && d == wantD {
			return h
		}
		if time.Now().After(deadline) {
			p, d := srtctlCounts(h)
			t.Fatalf("frontend counts %dP/%dD, want %dP/%dD; health %+v", p, d, wantP, wantD, h)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startServer runs a server the test can stop on its own; stop returns
// Serve's result.
func startServer(t *testing.T, opts Options) (url string, stop func() error) {
	t.Helper()
	if opts.Log == nil {
		opts.Log = testLogWriter{t: t}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	var once sync.Once
	var result error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case result = <-done:
			case <-time.After(time.Minute):
				result = errors.New("Serve did not return")
			}
		})
		return result
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + ln.Addr().String(), stop
}

func TestFrontendEmptyHealth(t *testing.T) {
	url := StartTest(t, Options{Mode: ModeFrontend})
	h := getHealth(t, url)
	if h.Status != "unhealthy" || h.Message != "No endpoints available" || h.Instances == nil || len(h.Instances) != 0 {
		t.Errorf("health before workers = %+v", h)
	}
	// The raw JSON must carry "instances": [] (srtctl refuses a body without the key).
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if !bytes.Contains(raw, []byte(`"instances":[]`)) {
		t.Errorf("raw health %s lacks \"instances\":[]", raw)
	}
	if r := postJSON(t, url+"/v1/completions", `{"prompt":"x"}`); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("completion without workers: status %d, want 503", r.StatusCode)
	}
}

func TestFrontend2P1D(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	worker := Options{FrontendURL: front, HeartbeatInterval: 20 * time.Millisecond, Model: "dsr1"}
	for _, m := range []Mode{ModePrefill, ModePrefill, ModeDecode} {
		o := worker
		o.Mode = m
		StartTest(t, o)
	}
	h := waitCounts(t, front, 2, 1)
	if h.Status != "healthy" || len(h.Instances) != 9 {
		t.Errorf("health: status %q, %d instances (want 3 endpoints per worker)", h.Status, len(h.Instances))
	}
	if len(h.Endpoints) != 2 || h.Endpoints[0] != "dyn://dynamo.decode.generate" || h.Endpoints[1] != "dyn://dynamo.prefill.generate" {
		t.Errorf("endpoints %q", h.Endpoints)
	}
	for _, in := range h.Instances {
		if in.Namespace != "dynamo" || in.InstanceID <= 0 || !strings.HasPrefix(in.Transport["nats_tcp"], "dynamo_"+in.Component+"."+in.Endpoint+"-") {
			t.Errorf("instance %+v", in)
		}
	}

	// The sglang-router view agrees.
	resp, err := http.Get(front + "/workers")
	if err != nil {
		t.Fatal(err)
	}
	var rw RouterWorkers
	if err := json.NewDecoder(resp.Body).Decode(&rw); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if rw.Total != 3 || rw.Stats.PrefillCount != 2 || rw.Stats.DecodeCount != 1 || rw.Stats.RegularCount != 0 {
		t.Errorf("/workers = %+v", rw)
	}

	// /v1/models lists the workers' model; a stream through the frontend
	// returns the requested number of tokens.
	resp, err = http.Get(front + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct{ Data []modelCard }
	_ = json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if len(models.Data) != 1 || models.Data[0].ID != "dsr1" {
		t.Errorf("frontend models %+v", models)
	}
	r := postJSON(t, front+"/v1/completions", `{"model":"dsr1","prompt":[1,2,3],"max_tokens":25,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
	res := readStream(t, r.Body)
	if !res.done || len(res.chunks) != 26 || res.chunks[25].Usage == nil || res.chunks[25].Usage.CompletionTokens != 25 {
		t.Fatalf("through frontend: %d chunks, done=%v", len(res.chunks), res.done)
	}
	if r := postJSON(t, front+"/v1/completions", `{"model":"nope","prompt":"x"}`); r.StatusCode != 404 {
		t.Errorf("unknown model through frontend: status %d", r.StatusCode)
	}
}

func TestFrontendRoundRobin(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	for _, name := range []string{"m-a", "m-b"} {
		StartTest(t, Options{Mode: ModeDecode, Model: name, FrontendURL: front, HeartbeatInterval: 20 * time.Millisecond})
	}
	waitCounts(t, front, 0, 2)
	seen := map[string]int{}
	for range 6 {
		r := postJSON(t, front+"/v1/completions", `{"prompt":"x","max_tokens":1}`)
		var body completionResponseBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		seen[body.Model]++
	}
	if seen["m-a"] != 3 || seen["m-b"] != 3 {
		t.Errorf("requests per worker %v, want 3 each", seen)
	}
}

func TestWorkerDeregistersOnShutdown(t *testing.T) {
	// A TTL of a minute: only deregistration can remove the worker in time.
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	_, stopPrefill := startServer(t, Options{Mode: ModePrefill, FrontendURL: front, HeartbeatInterval: 20 * time.Millisecond})
	StartTest(t, Options{Mode: ModeAgg, FrontendURL: front, HeartbeatInterval: 20 * time.Millisecond})
	waitCounts(t, front, 1, 1)
	if err := stopPrefill(); err != nil {
		t.Fatalf("graceful stop: %v", err)
	}
	if p, d := srtctlCounts(getHealth(t, front)); p != 0 || d != 1 {
		t.Errorf("after graceful stop: %dP/%dD, want 0P/1D at once", p, d)
	}
}

func TestCrashedWorkerStaysUntilExpiry(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	worker, stop := startServer(t, Options{Mode: ModeDecode, FrontendURL: front, HeartbeatInterval: 20 * time.Millisecond,
		Faults: Faults{ExitAfterRequests: 1, ExitCode: 1, LogLines: []string{"RuntimeError: NCCL error"}}})
	waitCounts(t, front, 0, 1)
	postJSON(t, worker+"/v1/completions", `{"prompt":"x","max_tokens":1}`)
	var exit *ExitError
	if err := stop(); !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("Serve = %v, want ExitError code 1", err)
	}
	// A crash does not deregister; with a one-minute TTL the worker is still listed.
	if _, d := srtctlCounts(getHealth(t, front)); d != 1 {
		t.Errorf("crashed worker gone at once (%d decode); only expiry should remove it", d)
	}
}

func TestFrontendExpiresSilentWorker(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: 200 * time.Millisecond})
	body := `{"instance_id":42,"component":"decode","namespace":"dynamo","model":"m","url":"http://127.0.0.1:1"}`
	if r := postJSON(t, front+registerPath, body); r.StatusCode != http.StatusNoContent {
		t.Fatalf("register: status %d", r.StatusCode)
	}
	if _, d := srtctlCounts(getHealth(t, front)); d != 1 {
		t.Fatalf("registered worker not listed")
	}
	waitCounts(t, front, 0, 0) // no heartbeat: gone after the TTL
	for _, bad := range []string{
		`{"instance_id":0,"component":"decode","url":"http://h:1"}`,
		`{"instance_id":1,"component":"router","url":"http://h:1"}`,
		`{"instance_id":1,"component":"decode","url":"h:1"}`,
	} {
		if r := postJSON(t, front+registerPath, bad); r.StatusCode != 400 {
			t.Errorf("register %s: status %d, want 400", bad, r.StatusCode)
		}
	}
}

func TestRegistryExpiryClock(t *testing.T) {
	now := time.Unix(1000, 0)
	g := newRegistry(3*time.Second, log.New(io.Discard, "", 0))
	g.now = func() time.Time { return now }
	for id, c := range map[int64]string{1: "prefill", 2: "decode", 3: "backend"} {
		if err := g.register(Registration{InstanceID: id, Component: c, Namespace: "dynamo", Model: "m", URL: "http://w:1"}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Second)
	_ = g.register(Registration{InstanceID: 1, Component: "prefill", Namespace: "dynamo", Model: "m", URL: "http://w:1"}) // heartbeat
	now = now.Add(2 * time.Second)                                                                                        // 4s since 2 and 3, 2s since 1
	if p, d := srtctlCounts(g.health()); p != 1 || d != 0 {
		t.Errorf("after expiry: %dP/%dD, want 1P/0D", p, d)
	}
	if g.nextTarget() != nil {
		t.Error("an expired decode worker is still a forwarding target")
	}
}

func TestWorkerRetriesUntilFrontendUp(t *testing.T) {
	// Reserve a port for a frontend that starts after the worker.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	StartTest(t, Options{Mode: ModeDecode, FrontendURL: "http://" + addr, HeartbeatInterval: 20 * time.Millisecond})
	time.Sleep(50 * time.Millisecond)
	s, err := New(Options{Mode: ModeFrontend, Log: testLogWriter{t: t}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s taken meanwhile: %v", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	stopped := false
	defer func() {
		cancel()
		if !stopped {
			<-done
		}
	}()
	// Bounded: a frontend that never gets ready fails the test instead of
	// hanging it.
	deadline := time.After(time.Minute)
	for !s.Ready() {
		select {
		case err := <-done:
			stopped = true
			t.Fatalf("the frontend stopped before it was ready: %v", err)
		case <-deadline:
			t.Fatal("the frontend is not ready after 10 s")
		case <-time.After(time.Millisecond):
		}
	}
	waitCounts(t, "http://"+addr, 0, 1)
}

func TestFrontendGenerates(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, FrontendGenerates: true, WorkerTTL: time.Minute})
	if r := postJSON(t, front+"/v1/completions", `{"prompt":"x"}`); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("without workers: status %d, want 503", r.StatusCode)
	}
	// The worker only registers; a hung worker proves the frontend answers by itself.
	StartTest(t, Options{Mode: ModeDecode, Model: "dsr1", FrontendURL: front, HeartbeatInterval: 20 * time.Millisecond,
		Faults: Faults{HangAfterRequests: 1}})
	waitCounts(t, front, 0, 1)
	for range 3 {
		r := postJSON(t, front+"/v1/completions", `{"model":"dsr1","prompt":[1,2],"max_tokens":4,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`)
		if res := readStream(t, r.Body); len(res.chunks) != 5 || res.chunks[4].Usage == nil || res.chunks[4].Usage.CompletionTokens != 4 {
			t.Fatalf("frontend-generated stream: %d chunks", len(res.chunks))
		}
	}
	if r := postJSON(t, front+"/v1/completions", `{"model":"mock-model","prompt":"x"}`); r.StatusCode != 404 {
		t.Errorf("model no worker serves: status %d, want 404", r.StatusCode)
	}
}
