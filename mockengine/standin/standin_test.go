package standin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// Every tool refuses a command line the real one would refuse, with exit
// code 2 and the offending piece named.
func TestRefusesWhatTheRealToolRefuses(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("max_batch_size: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		args []string
		want string
	}{
		{"trtllm-serve", []string{"/model", "--port", "1", "--tensor-parallel-size", "4"}, "no such option: --tensor-parallel-size"},
		{"trtllm-serve", []string{"--port", "1"}, "missing argument 'MODEL'"},
		{"trtllm-serve", []string{"/model", "/other"}, "unexpected extra argument (/other)"},
		{"trtllm-serve", []string{"/model", "--port"}, "--port requires an argument"},
		{"trtllm-serve", []string{"/model", "--trust_remote_code=1"}, "--trust_remote_code takes no value"},
		{"trtllm-serve", []string{"disaggregated", "--config", cfg, "--port", "8000"}, "no such option: --port"},
		{"trtllm-serve", []string{"disaggregated"}, "no config file"},
		{"trtllm-llmapi-launch", nil, "no command to launch"},
		{"vllm", []string{"/model", "--port", "1"}, "want `vllm serve MODEL"},
		{"vllm", []string{"serve", "/model", "--tensor_parallel_size", "4"}, "no such option: --tensor_parallel_size"},
		{"vllm", []string{"serve", "/model", "--kv-transfer-config", "nixl"}, "--kv-transfer-config: not a JSON object"},
		{"vllm-router", []string{"--prefill", "http://a:1", "--decode", "http://b:1", "--host", "0.0.0.0", "--port", "1"}, "need --vllm-pd-disaggregation"},
		{"vllm-router", []string{"--vllm-pd-disaggregation", "--prefill", "--decode", "http://b:1"}, "Invalid url --decode"},
		{"vllm-router", []string{"--vllm-pd-disaggregation", "--prefill"}, "--prefill requires a URL"},
		{"vllm-router", []string{"--worker-urls", "http://a:1", "--policy", "fastest"}, "invalid value 'fastest' for '--policy'"},
		{"vllm-router", []string{"--worker-urls", "http://a:1", "--port", "70000"}, "invalid value '70000' for '--port'"},
		{"vllm-router", []string{"--vllm-pd-disaggregation", "--vllm-discovery-address", "0.0.0.0:30001"}, "routes only to the workers on its command line"},
		{"vllm-router", []string{"--vllm-pd-disaggregation", "--decode", "http://b:1", "--host", "h", "--port", "1"}, "needs --prefill and --decode"},
		{"vllm-router", []string{"--worker-urls", "--host", "h", "--port", "1"}, "no workers"},
		{"vllm-router", []string{"--worker-urls", "http://a:1", "--host", "h", "--port", "1", "--pd-disaggregation"}, "no such option: --pd-disaggregation"},
		{"sglang", nil, "unknown tool"},
	}
	for _, tc := range cases {
		err := Run(context.Background(), Options{Tool: tc.tool, Args: tc.args, Log: io.Discard, Getenv: func(string) string { return "" }})
		if exitcode.Of(err) != exitcode.Config || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v (exit %d), want exit 2 with %q", tc.tool, tc.args, err, exitcode.Of(err), tc.want)
		}
	}
}

// trtllm-llmapi-launch runs the command on rank 0 only; any other rank
// waits for the step to end.
func TestLLMAPILaunchRanks(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		runs bool
	}{
		{map[string]string{}, true},
		{map[string]string{"SLURM_PROCID": "0"}, true},
		{map[string]string{"SLURM_PROCID": "3"}, false},
		{map[string]string{"OMPI_COMM_WORLD_RANK": "1"}, false},
		{map[string]string{"PMI_RANK": "0", "PMI_ID": "2"}, true},
		{map[string]string{"PMI_ID": "2"}, false},
	} {
		var ran []string
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := Run(ctx, Options{Tool: "trtllm-llmapi-launch", Args: []string{"trtllm-serve", "/model"}, Log: io.Discard,
			Getenv: func(k string) string { return tc.env[k] },
			Exec:   func(argv []string) error { ran = argv; return nil }})
		cancel()
		if err != nil || (ran != nil) != tc.runs {
			t.Errorf("env %v: ran %q, err %v; want runs=%v", tc.env, ran, err, tc.runs)
		}
	}
}

// startWorker serves a stand-in engine on a free port and returns its URL.
func startWorker(t *testing.T, tool string, args ...string) string {
	t.Helper()
	port := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Tool: tool, Args: append(args, "--host", "127.0.0.1", "--port", port), Log: io.Discard,
			Getenv: func(string) string { return "" }})
	}()
	t.Cleanup(func() { cancel(); <-done })
	u := "http://127.0.0.1:" + port
	waitUp(t, u+"/health")
	return u
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

func waitUp(t *testing.T, u string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if resp, err := http.Get(u); err == nil { //nolint:noctx // test poll
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("%s never answered 200", u)
}

// vllm-router reports its workers as the real one's GET /workers does and
// sends a P/D request's prefill to the prefill worker, its generation to
// the decode worker.
func TestVLLMRouterWorkersAndRouting(t *testing.T) {
	p := startWorker(t, "vllm", "serve", "/model", "--served-model-name", "m", "--kv-transfer-config", `{"kv_connector": "NixlConnector"}`)
	d1 := startWorker(t, "vllm", "serve", "/model", "--served-model-name", "m")
	d2 := startWorker(t, "vllm", "serve", "/model", "--served-model-name", "m")
	cases := []struct {
		args                     []string
		prefill, decode, regular int
		bootstrap                []int
	}{
		{[]string{"--vllm-pd-disaggregation", "--prefill", p, "5400", "--decode", d1, "--decode", d2}, 1, 2, 0, []int{5400}},
		{[]string{"--vllm-pd-disaggregation", "--prefill", p, "none", "--decode", d1, "--prometheus-host", "127.0.0.1", "--disable-retries"}, 1, 1, 0, nil},
		{[]string{"--worker-urls", d1, d2, "--policy", "round_robin"}, 0, 0, 2, nil},
	}
	for _, tc := range cases {
		var log syncWriter
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, Options{Tool: "vllm-router", Args: append(tc.args, "--host", "127.0.0.1", "--port", port, "--worker-startup-timeout-secs", "10"),
				Log: &log, Getenv: func(string) string { return "" }})
		}()
		base := "http://127.0.0.1:" + port
		waitUp(t, base+"/health")
		var w routerWorkers
		getJSON(t, base+"/workers", &w)
		if w.Stats.PrefillCount != tc.prefill || w.Stats.DecodeCount != tc.decode || w.Stats.RegularCount != tc.regular || w.Total != tc.prefill+tc.decode+tc.regular {
			t.Errorf("%q: /workers %+v", tc.args, w)
		}
		var ports []int
		for _, x := range w.Workers {
			if x.BootstrapPort != nil {
				ports = append(ports, *x.BootstrapPort)
			}
			if x.ModelID != "m" {
				t.Errorf("%q: worker %s model_id %q, want m (the worker's /v1/models)", tc.args, x.URL, x.ModelID)
			}
		}
		if fmt.Sprint(ports) != fmt.Sprint(tc.bootstrap) {
			t.Errorf("%q: bootstrap ports %v, want %v", tc.args, ports, tc.bootstrap)
		}
		resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(`{"model":"m","prompt":"hi","max_tokens":3}`)) //nolint:noctx // test
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&c)
		resp.Body.Close()
		if resp.StatusCode != 200 || c.Usage.CompletionTokens != 3 {
			t.Errorf("%q: completion %d, %d tokens; want 200 and 3 (the decode worker's whole answer)", tc.args, resp.StatusCode, c.Usage.CompletionTokens)
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("%q: %v", tc.args, err)
		}
		if got := strings.Contains(log.String(), "first prefill answered by "+p); got != (tc.prefill > 0) {
			t.Errorf("%q: prefill logged %v, want %v:\n%s", tc.args, got, tc.prefill > 0, log.String())
		}
	}
}

// trtllm-serve disaggregated reads ser.yaml: it routes to the servers it
// lists and refuses a file whose counts and lists disagree.
func TestTRTLLMDisaggregatedReadsSerYAML(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "engine.yaml")
	if err := os.WriteFile(cfg, []byte("tensor_parallel_size: 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctxURL := startWorker(t, "trtllm-serve", "/model", "--config", cfg)
	genURL := startWorker(t, "trtllm-serve", "serve", "/model", "--config", cfg, "--tp_size", "4")
	host := func(u string) string { return strings.TrimPrefix(u, "http://") }
	port := freePort(t)
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := []struct{ body, want string }{
		{"context_servers:\n  num_instances: 2\n  urls:\n  - " + host(ctxURL) + "\ngeneration_servers:\n  num_instances: 1\n  urls:\n  - " + host(genURL) + "\nhostname: 127.0.0.1\nport: " + port + "\n", "context_servers.num_instances is 2 but urls lists 1"},
		{"context_servers:\n  num_instances: 0\n  urls: []\ngeneration_servers:\n  num_instances: 1\n  urls:\n  - " + host(genURL) + "\nhostname: 127.0.0.1\nport: " + port + "\n", "must each list urls"},
		{"context_servers: [", "yaml"},
	}
	for i, b := range bad {
		f := write(fmt.Sprintf("bad%d.yaml", i), b.body)
		err := Run(context.Background(), Options{Tool: "trtllm-serve", Args: []string{"disaggregated", "-c", f}, Log: io.Discard, Getenv: func(string) string { return "" }})
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("ser.yaml %d: %v, want %q", i, err, b.want)
		}
	}
	ser := write("ser.yaml", "context_servers:\n  num_instances: 1\n  urls:\n  - "+host(ctxURL)+"\ngeneration_servers:\n  num_instances: 1\n  urls:\n  - "+host(genURL)+"\nhostname: 127.0.0.1\nport: "+port+"\n")
	var log syncWriter
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Tool: "trtllm-serve", Args: []string{"disaggregated", "--config", ser, "--log_level", "info"}, Log: &log, Getenv: func(string) string { return "" }})
	}()
	base := "http://127.0.0.1:" + port
	waitUp(t, base+"/health")
	var models struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	getJSON(t, base+"/v1/models", &models)
	if len(models.Data) != 1 || models.Data[0].ID != "/model" {
		t.Errorf("/v1/models %+v, want the generation server's /model", models)
	}
	resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(`{"model":"anything","prompt":"hi","max_tokens":2,"stream":true}`)) //nolint:noctx // test
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || strings.Count(string(body), "data: {") != 2 || !strings.Contains(string(body), "data: [DONE]") {
		t.Errorf("streamed completion %d:\n%s", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
	if !strings.Contains(log.String(), "first prefill answered by "+ctxURL) {
		t.Errorf("the context server took no prefill:\n%s", log.String())
	}
}

// A worker that never turns healthy keeps the router from serving: it
// fails, naming the worker, once the startup timeout passes.
func TestRouterFailsWhenAWorkerNeverStarts(t *testing.T) {
	dead := "http://127.0.0.1:" + freePort(t)
	up := startWorker(t, "vllm", "serve", "/model")
	err := Run(context.Background(), Options{Tool: "vllm-router", Args: []string{"--vllm-pd-disaggregation", "--prefill", up, "--decode", dead,
		"--host", "127.0.0.1", "--port", freePort(t), "--worker-startup-timeout-secs", "1"}, Log: io.Discard, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "worker "+dead+" did not become healthy") {
		t.Errorf("got %v", err)
	}
}

// The workers take latency and the answer key from the environment.
func TestEngineOptionsFromEnvironment(t *testing.T) {
	key := filepath.Join(t.TempDir(), "key.jsonl")
	if err := os.WriteFile(key, []byte(`{"question": "q", "completion": "The answer is 4."}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvTTFT: "7ms", EnvITL: "2ms", EnvAnswerKey: key}
	o, err := engineOptions(Options{Getenv: func(k string) string { return env[k] }}, "m")
	if err != nil || o.TTFT != 7*time.Millisecond || o.ITL != 2*time.Millisecond || o.AnswerKey == nil {
		t.Errorf("options %+v, %v", o, err)
	}
	env[EnvITL] = "fast"
	if _, err := engineOptions(Options{Getenv: func(k string) string { return env[k] }}, "m"); err == nil || !strings.Contains(err.Error(), EnvITL) {
		t.Errorf("a bad %s: %v", EnvITL, err)
	}
}

func getJSON(t *testing.T, u string, into any) {
	t.Helper()
	resp, err := http.Get(u) //nolint:noctx // test
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		t.Fatalf("%s: %v", u, err)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
