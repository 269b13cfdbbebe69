package srtctlbench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// fakeServer answers what the types ask of the network: the model list,
// the Mooncake trace, and the profiling requests (recorded).
type fakeServer struct {
	mu       sync.Mutex
	requests []string
	model    string // "" = /v1/models fails
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.Host+r.URL.Path+" "+string(body))
	f.mu.Unlock()
	switch {
	case r.URL.Path == "/v1/models" && f.model != "":
		_, _ = io.WriteString(w, `{"data":[{"id":"`+f.model+`"}]}`)
	case strings.HasSuffix(r.URL.Path, "_trace.jsonl"):
		_, _ = io.WriteString(w, `{"timestamp":0,"input_length":10,"output_length":2,"hash_ids":[1]}`+"\n")
	case strings.HasSuffix(r.URL.Path, "_profile"):
		_, _ = io.WriteString(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeServer) recorded(prefix string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// toServer sends every request to srv, keeping the original host in the
// request (so tests see which endpoint was asked).
type toServer struct{ srv *httptest.Server }

func (t toServer) RoundTrip(r *http.Request) (*http.Response, error) {
	u, _ := url.Parse(t.srv.URL)
	r2 := r.Clone(r.Context())
	r2.URL.Scheme, r2.URL.Host = u.Scheme, u.Host
	r2.Host = r.URL.Host
	return http.DefaultTransport.RoundTrip(r2)
}

type harness struct {
	logs, tmp, ws, bin string
	srv                *fakeServer
	cmds               []Cmd
	// effects runs for each command, by its first words, to leave what
	// the tool would.
	effects map[string]func(c Cmd) error
	limits  []uint64
}

func newHarness(t *testing.T) *harness {
	root := t.TempDir()
	h := &harness{logs: filepath.Join(root, "logs"), tmp: filepath.Join(root, "tmp"), ws: filepath.Join(root, "ws"),
		bin: filepath.Join(root, "bin"), srv: &fakeServer{}, effects: map[string]func(Cmd) error{}}
	for _, d := range []string{h.logs, h.tmp, h.ws, h.bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func (h *harness) run(t *testing.T, typ string, args []string, env ...string) error {
	srv := httptest.NewServer(h.srv)
	t.Cleanup(srv.Close)
	env = append([]string{"PATH=" + h.bin, "HOME=" + filepath.Join(h.tmp, "home")}, env...)
	return Run(context.Background(), Options{Type: typ, Args: args, Environ: env, Logs: h.logs, Tmp: h.tmp,
		HTTP: &http.Client{Transport: toServer{srv}},
		Now:  func() time.Time { return time.Date(2026, 12, 6, 4, 5, 6, 0, time.UTC) },
		Exec: func(_ context.Context, c Cmd) error {
			h.cmds = append(h.cmds, c)
			for prefix, f := range h.effects {
				if strings.HasPrefix(strings.Join(c.Argv, " "), prefix) {
					return f(c)
				}
			}
			return nil
		},
		RaiseFileLimit: func(n uint64) error { h.limits = append(h.limits, n); return nil },
	})
}

func (h *harness) argvs() []string {
	out := make([]string, len(h.cmds))
	for i, c := range h.cmds {
		out[i] = strings.Join(c.Argv, " ")
		if c.Dir != "" {
			out[i] = "(" + c.Dir + ") " + out[i]
		}
	}
	return out
}

func envOf(c Cmd, k string) string {
	for _, kv := range c.Env {
		if v, ok := strings.CutPrefix(kv, k+"="); ok {
			return v
		}
	}
	return ""
}

func put(t *testing.T, path, content string, mod time.Time) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mod.IsZero() {
		if err := os.Chtimes(path, mod, mod); err != nil {
			t.Fatal(err)
		}
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

const endpoint = "http://10.0.0.1:8000"

// TestRunEvalTypes: mmlu, gpqa, longbenchv2 and gsm8k on SGLang run
// sglang's run_eval with srtctl's arguments (its defaults where the plan
// leaves one empty), and the newest result file of /tmp (and HTML report)
// lands in /logs/accuracy, an older one and another eval's not.
func TestRunEvalTypes(t *testing.T) {
	const runEval = "python3 -m sglang.test.run_eval --base-url " + endpoint
	cases := []struct {
		typ, model string
		args       []string
		want       string
		prefix     string
		html       bool
	}{
		{typ: "mmlu", args: []string{endpoint}, prefix: "mmlu_",
			want: runEval + " --model deepseek-ai/DeepSeek-R1 --eval-name mmlu --num-examples 200 --max-tokens 2048 --repeat 8 --num-threads 512"},
		{typ: "mmlu", args: []string{endpoint, "50", "100", "2", "4"}, prefix: "mmlu_",
			want: runEval + " --model deepseek-ai/DeepSeek-R1 --eval-name mmlu --num-examples 50 --max-tokens 100 --repeat 2 --num-threads 4"},
		{typ: "gpqa", model: "org/served", args: []string{endpoint, "198", "32768", "8", "128"}, prefix: "gpqa_",
			want: runEval + " --model org/served --eval-name gpqa --num-examples 198 --max-tokens 32768 --repeat 8 --num-threads 128"},
		{typ: "gpqa", args: []string{endpoint}, prefix: "gpqa_",
			want: runEval + " --model deepseek-ai/DeepSeek-R1 --eval-name gpqa --num-examples 198 --max-tokens 32768 --repeat 8 --num-threads 128"},
		{typ: "longbenchv2", args: []string{endpoint, "128000", "16", "16384", "", "a,b"}, prefix: "longbench_v2_", html: true,
			want: runEval + " --model nvidia/DeepSeek-R1-0528-NVFP4-v2 --eval-name longbench_v2 --max-tokens 16384 --max-context-length 128000 --num-threads 16 --categories a,b"},
		{typ: "longbenchv2", args: []string{endpoint, "", "", "", "20"}, prefix: "longbench_v2_", html: true,
			want: runEval + " --model nvidia/DeepSeek-R1-0528-NVFP4-v2 --eval-name longbench_v2 --max-tokens 16384 --max-context-length 128000 --num-threads 16 --num-examples 20"},
		{typ: "gsm8k-sglang", args: []string{endpoint, "100", "16384", "512", "0", "0.0", "", ""}, prefix: "gsm8k_", html: true,
			want: runEval + " --eval-name gsm8k --num-examples 100 --max-tokens 16384 --num-threads 512 --num-shots 0 --temperature 0.0"},
		{typ: "gsm8k-sglang", args: []string{endpoint, "1319", "16384", "512", "5", "", "0.95", "20"}, prefix: "gsm8k_", html: true,
			want: runEval + " --eval-name gsm8k --num-examples 1319 --max-tokens 16384 --num-threads 512 --num-shots 5 --top-p 0.95 --top-k 20"},
	}
	for _, tc := range cases {
		t.Run(tc.typ+" "+strings.Join(tc.args[1:], ","), func(t *testing.T) {
			h := newHarness(t)
			h.srv.model = tc.model
			old := time.Now().Add(-time.Hour)
			put(t, filepath.Join(h.tmp, tc.prefix+"old.json"), "{}", old)
			put(t, filepath.Join(h.tmp, "other_eval.json"), "{}", time.Time{})
			h.effects["python3"] = func(Cmd) error {
				put(t, filepath.Join(h.tmp, tc.prefix+"new.json"), `{"score":1}`, time.Time{})
				put(t, filepath.Join(h.tmp, tc.prefix+"new.html"), "<html>", time.Time{})
				return nil
			}
			if err := h.run(t, tc.typ, tc.args); err != nil {
				t.Fatal(err)
			}
			if got := h.argvs(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("ran\n %q\nwant\n %q", got, tc.want)
			}
			if k := envOf(h.cmds[0], "OPENAI_API_KEY"); k != "EMPTY" {
				t.Errorf("OPENAI_API_KEY %q", k)
			}
			want := []string{tc.prefix + "new.json"}
			if tc.html {
				want = append([]string{tc.prefix + "new.html"}, want...)
			}
			if got := listDir(t, filepath.Join(h.logs, "accuracy")); !slices.Equal(got, want) {
				t.Errorf("accuracy holds %q, want %q", got, want)
			}
		})
	}
	t.Run("a failing eval fails the run and copies nothing", func(t *testing.T) {
		h := newHarness(t)
		put(t, filepath.Join(h.tmp, "mmlu_old.json"), "{}", time.Time{})
		h.effects["python3"] = func(Cmd) error { return exitcode.Errorf(exitcode.Benchmark, "python3 exited 1") }
		err := h.run(t, "mmlu", []string{endpoint}, "OPENAI_API_KEY=sk-1")
		if exitcode.Of(err) != exitcode.Benchmark || len(listDir(t, filepath.Join(h.logs, "accuracy"))) != 0 {
			t.Errorf("err %v, accuracy %q", err, listDir(t, filepath.Join(h.logs, "accuracy")))
		}
		if k := envOf(h.cmds[0], "OPENAI_API_KEY"); k != "sk-1" {
			t.Errorf("a set OPENAI_API_KEY became %q", k)
		}
	})
}

// TestLMEval: InferenceX's run_eval and summary run from the workspace in
// one shell with srtctl's derived variables, the served model's name, and
// the eval's files are copied to /logs/eval_results also when the eval
// fails, whose status is the run's.
func TestLMEval(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     []string
		fail    bool
		wantEnv map[string]string
	}{
		{name: "srtctl's variables", env: []string{"PREFILL_TP=4", "PREFILL_EP=8", "PREFILL_DP_ATTN=true", "EVAL_CONC=32"},
			wantEnv: map[string]string{"MODEL_NAME": "org/served", "EVAL_CONCURRENT_REQUESTS": "32", "TP": "4", "CONC": "32", "EP_SIZE": "8",
				"DP_ATTENTION": "true", "PREFILL_DP_ATTENTION": "true", "DECODE_DP_ATTENTION": "true", "IS_MULTINODE": "true"}},
		{name: "defaults, failing eval", env: []string{"MODEL_NAME=mine", "DECODE_DP_ATTN=false", "TP=2"}, fail: true,
			wantEnv: map[string]string{"MODEL_NAME": "mine", "EVAL_CONCURRENT_REQUESTS": "256", "TP": "2", "CONC": "256", "EP_SIZE": "1",
				"DP_ATTENTION": "false", "PREFILL_DP_ATTENTION": "false", "DECODE_DP_ATTENTION": "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.srv.model = "org/served"
			h.effects["bash -c"] = func(Cmd) error {
				for _, f := range []string{"meta_env.json", "results_2026.json", "samples_gsm8k.jsonl", "notes.txt"} {
					put(t, filepath.Join(h.ws, f), f, time.Time{})
				}
				if tc.fail {
					return exitcode.Errorf(exitcode.Benchmark, "bash exited 3")
				}
				return nil
			}
			err := h.run(t, "lm-eval", []string{"http://localhost:8000", h.ws}, tc.env...)
			if (err != nil) != tc.fail {
				t.Fatalf("err %v, want failure %v", err, tc.fail)
			}
			if len(h.cmds) != 1 {
				t.Fatalf("ran %q", h.argvs())
			}
			c := h.cmds[0]
			if want := []string{"bash", "-c", lmEvalScript, "srtctl-lm-eval", h.ws, "8000"}; !slices.Equal(c.Argv, want) || c.Dir != h.ws {
				t.Errorf("ran %q in %s", c.Argv, c.Dir)
			}
			for k, v := range tc.wantEnv {
				if got := envOf(c, k); got != v {
					t.Errorf("%s=%q, want %q", k, got, v)
				}
			}
			if got := listDir(t, filepath.Join(h.logs, "eval_results")); !slices.Equal(got, []string{"meta_env.json", "results_2026.json", "samples_gsm8k.jsonl"}) {
				t.Errorf("eval_results holds %q", got)
			}
		})
	}
}

// TestRouter: Dynamo is cloned once into /tmp, aiperf and matplotlib
// installed (a failure only warned about), and prefix_ratio_benchmark.py
// runs from the clone with one word per ratio.
func TestRouter(t *testing.T) {
	h := newHarness(t)
	h.effects["pip install"] = func(Cmd) error { return exitcode.Errorf(exitcode.Benchmark, "pip exited 1") }
	if err := h.run(t, "router", []string{endpoint, "14000", "200", "200", "20", "0.1 0.5"}); err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(h.tmp, "dynamo")
	want := []string{"git clone --depth 1 https://github.com/ai-dynamo/dynamo.git " + clone, "pip install aiperf matplotlib",
		"(" + filepath.Join(clone, "benchmarks", "router") + ") python prefix_ratio_benchmark.py --prefix-ratios 0.1 0.5 --isl 14000 --osl 200 --requests 200 --concurrency 20 --output-dir " + filepath.Join(h.logs, "router-bench")}
	if got := h.argvs(); !slices.Equal(got, want) {
		t.Errorf("ran\n %q\nwant\n %q", got, want)
	}
	if err := os.MkdirAll(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	h.cmds = nil
	if err := h.run(t, "router", []string{endpoint}); err != nil {
		t.Fatal(err)
	}
	if got := h.argvs(); len(got) != 2 || strings.HasPrefix(got[0], "git") || !strings.Contains(got[1], "--prefix-ratios 0.1 0.3 0.5 0.7 0.9 --isl 14000") {
		t.Errorf("second run %q: want no clone and srtctl's defaults", got)
	}
}

// TestSGLangBenchProfiled: one bench_serving per concurrency, and the
// workers are asked to start profiling before the sweep and to stop after
// it, as the profiling variables say.
func TestSGLangBenchProfiled(t *testing.T) {
	profEnv := []string{"PROFILE_TYPE=torch", "PROFILE_OUTPUT_DIR=PLACEHOLDER", "SRTCTL_FRONTEND_TYPE=sglang", "BENCH_MODEL_NAME=org/m",
		"PROFILE_PREFILL_ENDPOINTS=10.0.0.1:6100", "PROFILE_DECODE_IPS=10.0.0.2", "PROFILE_DECODE_START_STEP=5", "PROFILE_DECODE_STOP_STEP=5"}
	for _, tc := range []struct {
		name     string
		fail     bool
		env      []string
		requests []string
	}{
		{name: "sweep", env: profEnv, requests: []string{
			`POST 10.0.0.1:6100/start_profile {"output_dir":"DIR/prefill","start_step":0,"num_steps":50,"activities":["CPU","GPU"]}`,
			`POST 10.0.0.1:6100/stop_profile {}`, `POST 10.0.0.2:9090/stop_profile {}`}},
		{name: "failing sweep still stops", env: profEnv, fail: true, requests: []string{
			`POST 10.0.0.1:6100/start_profile {"output_dir":"DIR/prefill","start_step":0,"num_steps":50,"activities":["CPU","GPU"]}`,
			`POST 10.0.0.1:6100/stop_profile {}`, `POST 10.0.0.2:9090/stop_profile {}`}},
		{name: "no profiling", env: []string{"SRTCTL_FRONTEND_TYPE=sglang"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			dir := filepath.Join(h.logs, "profiles")
			env := slices.Clone(tc.env)
			for i := range env {
				env[i] = strings.ReplaceAll(env[i], "PLACEHOLDER", dir)
			}
			if tc.fail {
				h.effects["python3"] = func(Cmd) error { return exitcode.Errorf(exitcode.Benchmark, "python3 exited 1") }
			}
			err := h.run(t, "sglang-bench", []string{endpoint, "10", "20", "1x4"}, env...)
			if (err != nil) != tc.fail {
				t.Fatalf("err %v", err)
			}
			model := "deepseek-ai/DeepSeek-R1"
			if len(tc.env) > 1 {
				model = "org/m"
			}
			bench := func(c string) string {
				return "python3 -m sglang.bench_serving --backend sglang-oai --model " + model + " --host 10.0.0.1 --port 8000 --dataset-name random --max-concurrency " + c +
					" --num-prompts 128 --random-input-len 10 --random-output-len 20 --random-range-ratio 1 --request-rate inf --warmup-requests 0"
			}
			want := []string{bench("1"), bench("4")}
			if tc.fail {
				want = want[:1]
			}
			if got := h.argvs(); !slices.Equal(got, want) {
				t.Errorf("ran\n %q\nwant\n %q", got, want)
			}
			got := h.srv.recorded("POST")
			for i := range got {
				got[i] = strings.ReplaceAll(got[i], dir, "DIR")
			}
			if !slices.Equal(got, tc.requests) {
				t.Errorf("requests\n %q\nwant\n %q", got, tc.requests)
			}
		})
	}
}

// TestTraceReplay: uv is fetched when missing, aiperf installed into a
// fresh environment named by the job, a warmup, then one replay per
// concurrency with the server metrics, the goodput and the extra flags;
// on TRT-LLM nothing is sent to the workers.
func TestTraceReplay(t *testing.T) {
	h := newHarness(t)
	trace := filepath.Join(h.ws, "t.jsonl")
	put(t, trace, "{}\n", time.Time{})
	err := h.run(t, "trace-replay", []string{endpoint, "org/model", trace, "2,8", "2000", "25", "/model", "--benchmark-duration", "600"},
		"SLURM_JOB_ID=77", "AIPERF_PACKAGE=aiperf>=0.7.0", "AIPERF_SERVER_METRICS_URLS=http://a:1/metrics,http://b:2/metrics",
		"PROFILE_TYPE=nsys", "PROFILE_OUTPUT_DIR=/logs/profiles", "PROFILE_AGG_IPS=10.0.0.3", "PROFILING_BACKEND=trtllm")
	if err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(h.logs, "artifacts")
	venv := filepath.Join(h.tmp, "aiperf-77")
	replay := func(c string) string {
		return "aiperf profile -m org/model --tokenizer /model --tokenizer-trust-remote-code --input-file " + trace +
			" --custom-dataset-type mooncake_trace --url " + endpoint + " --streaming --extra-inputs ignore_eos:true --concurrency " + c +
			" --random-seed 42 --ui simple --artifact-dir " + filepath.Join(art, "model_trace_c"+c+"_20261206_040506") +
			" --server-metrics http://a:1/metrics http://b:2/metrics --server-metrics-formats json jsonl" +
			" --goodput time_to_first_token:2000 inter_token_latency:25 --benchmark-duration 600"
	}
	want := []string{
		"sh -c " + uvInstallText + " srtctl-uv-install " + uvInstaller,
		"uv venv " + venv,
		"uv pip install -p " + venv + " aiperf>=0.7.0 tiktoken",
		"aiperf profile -m org/model --tokenizer /model --tokenizer-trust-remote-code --url " + endpoint +
			" --streaming --ui simple --extra-inputs ignore_eos:true --concurrency 1 --request-count 5 --artifact-dir " + filepath.Join(art, "warmup"),
		replay("2"), replay("8"),
	}
	if got := h.argvs(); !slices.Equal(got, want) {
		t.Errorf("ran\n %q\nwant\n %q", got, want)
	}
	last := h.cmds[len(h.cmds)-1]
	path := envOf(last, "PATH")
	if !strings.HasPrefix(path, filepath.Join(venv, "bin")+":"+filepath.Join(h.tmp, "home", ".local", "bin")+":") ||
		envOf(last, "AIPERF_HTTP_SO_RCVTIMEO") != "120" || envOf(last, "PYTHONUNBUFFERED") != "1" {
		t.Errorf("environment: PATH %q, AIPERF_HTTP_SO_RCVTIMEO %q", path, envOf(last, "AIPERF_HTTP_SO_RCVTIMEO"))
	}
	if !slices.Equal(h.limits, []uint64{600000}) {
		t.Errorf("file limits asked %v", h.limits)
	}
	if got := h.srv.recorded("POST"); len(got) != 0 {
		t.Errorf("TRT-LLM workers were sent %q", got)
	}

	h2 := newHarness(t)
	if err := h2.run(t, "trace-replay", []string{endpoint, "m", filepath.Join(h2.ws, "missing.jsonl")}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing trace: %v", err)
	}
}

// TestMooncakeRouter: the workload's trace is downloaded once, aiperf
// installed only when missing, a warmup and one replay on the trace's
// schedule, then benchmark-rollup.json from the replay's export; an
// unknown workload fails.
func TestMooncakeRouter(t *testing.T) {
	h := newHarness(t)
	put(t, filepath.Join(h.bin, "aiperf"), "#!/bin/sh\n", time.Time{})
	if err := os.Chmod(filepath.Join(h.bin, "aiperf"), 0o755); err != nil {
		t.Fatal(err)
	}
	art := filepath.Join(h.logs, "artifacts")
	run := filepath.Join(art, "Qwen3-32B_toolagent_20261206_040506")
	h.effects["aiperf profile -m Qwen/Qwen3-32B --tokenizer /model --input-file"] = func(Cmd) error {
		put(t, filepath.Join(run, "profile_export_aiperf.json"), `{"model": "Qwen/Qwen3-32B", "records": {"ttft": {"avg": 1.5}}}`, time.Time{})
		return nil
	}
	err := h.run(t, "mooncake-router", []string{endpoint, "Qwen/Qwen3-32B", "toolagent", "500", "25", "/model", "--ignored", "1"},
		"AIPERF_SERVER_METRICS_URLS=http://a:1/metrics")
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(h.logs, "traces", "toolagent_trace.jsonl")
	want := []string{
		"aiperf profile -m Qwen/Qwen3-32B --tokenizer /model --url " + endpoint + " --streaming --ui simple --concurrency 10 --request-count 20",
		"aiperf profile -m Qwen/Qwen3-32B --tokenizer /model --input-file " + input + " --custom-dataset-type mooncake_trace --fixed-schedule --url " + endpoint +
			" --streaming --random-seed 42 --ui simple --artifact-dir " + run + " --server-metrics http://a:1/metrics --goodput time_to_first_token:500 inter_token_latency:25",
	}
	if got := h.argvs(); !slices.Equal(got, want) {
		t.Errorf("ran\n %q\nwant\n %q", got, want)
	}
	if got := h.srv.recorded("GET raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release/traces/toolagent_trace.jsonl"); len(got) != 1 {
		t.Errorf("trace downloads %q", h.srv.requests)
	}
	if b, err := os.ReadFile(input); err != nil || !strings.Contains(string(b), "hash_ids") {
		t.Errorf("trace %q %v", b, err)
	}
	var rollup struct {
		Type      string         `json:"benchmark_type"`
		Timestamp string         `json:"timestamp"`
		Config    map[string]any `json:"config"`
		Data      map[string]any `json:"data"`
	}
	b, err := os.ReadFile(filepath.Join(h.logs, RollupFile))
	if err != nil || json.Unmarshal(b, &rollup) != nil {
		t.Fatalf("rollup %s: %v", b, err)
	}
	if rollup.Type != "mooncake-router" || rollup.Timestamp != "2026-12-06T04:05:06Z" || rollup.Config["model"] != "Qwen/Qwen3-32B" ||
		rollup.Config["workload"] != nil || rollup.Data["records"] == nil || !strings.Contains(string(b), "\n  \"config\": {\n    \"workload\": null,") {
		t.Errorf("rollup:\n%s", b)
	}

	// A second run finds the trace and downloads nothing; a failing
	// replay still leaves the rollup of what is there, and fails.
	h.cmds = nil
	h.effects["aiperf profile -m Qwen/Qwen3-32B --tokenizer /model --input-file"] = func(Cmd) error {
		return exitcode.Errorf(exitcode.Benchmark, "aiperf exited 1")
	}
	if err := os.Remove(filepath.Join(h.logs, RollupFile)); err != nil {
		t.Fatal(err)
	}
	if err := h.run(t, "mooncake-router", []string{endpoint, "Qwen/Qwen3-32B", "toolagent"}); exitcode.Of(err) != exitcode.Benchmark {
		t.Errorf("failing replay: %v", err)
	}
	if n := len(h.srv.recorded("GET raw.")); n != 1 {
		t.Errorf("%d downloads, want the first only", n)
	}
	if _, err := os.Stat(filepath.Join(h.logs, RollupFile)); err != nil {
		t.Errorf("no rollup after a failing replay: %v", err)
	}
	if err := newHarness(t).run(t, "mooncake-router", []string{endpoint, "m", "chat"}); err == nil || !strings.Contains(err.Error(), "chat") {
		t.Errorf("unknown workload: %v", err)
	}
}

// TestRollupNothing: no aiperf export, or one that is not JSON, writes no
// rollup and says why.
func TestRollupNothing(t *testing.T) {
	dir := t.TempDir()
	if err := Rollup(dir, time.Now()); err == nil || !strings.Contains(err.Error(), "no aiperf results") {
		t.Errorf("empty: %v", err)
	}
	put(t, filepath.Join(dir, "artifacts", "x", "profile_export_aiperf.json"), "{not json", time.Time{})
	if err := Rollup(dir, time.Now()); err == nil {
		t.Error("bad JSON: no error")
	}
	if _, err := os.Stat(filepath.Join(dir, RollupFile)); err == nil {
		t.Error("a rollup was written")
	}
}

// TestUnknownType: a type srtctl has no script for is a usage error.
func TestUnknownType(t *testing.T) {
	if err := newHarness(t).run(t, "gsm8k", nil); exitcode.Of(err) != exitcode.Config {
		t.Errorf("gsm8k: %v", err)
	}
}
