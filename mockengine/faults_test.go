package mockengine

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/syncbuf"
)

var (
	oomLine       = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB. GPU 0 has a total capacity of 79.10 GiB of which 12.00 MiB is free."
	cudaGraphLogs = []string{
		"Traceback (most recent call last):",
		`  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 412, in __init__`,
		"    self.capture()",
		"RuntimeError: add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
		"",
		"During handling of the above exception, another exception occurred:",
		"Exception: Capture cuda graph failed: add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
	}
)

// quickClient gives up soon: a hung server never answers.
var quickClient = &http.Client{Timeout: 300 * time.Millisecond}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

// waitLog waits until the log contains marker (the fault has fired).
func waitLog(t *testing.T, logs *syncbuf.Buffer, marker string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a hang guard, not a speed bound
	for !strings.Contains(logs.String(), marker) {
		if time.Now().After(deadline) {
			t.Fatalf("log never contained %q:\n%s", marker, logs.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestFailBeforeHealthy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		code  int
	}{
		{"oom", []string{oomLine}, 1},
		{"cuda graph traceback", cudaGraphLogs, 1},
		{"exit 0", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncbuf.Buffer{}
			url, stop := startServer(t, Options{Log: logs, Faults: Faults{
				FailBeforeHealthy: true, FailAfter: 300 * time.Millisecond, LogLines: tc.lines, ExitCode: tc.code,
			}})
			// While "loading", health is never 200.
			if resp, err := quickClient.Get(url + "/health"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					t.Error("/health answered 200 before the injected failure")
				}
			}
			marker := "injected failure before healthy"
			if tc.lines != nil {
				marker = tc.lines[len(tc.lines)-1]
			}
			waitLog(t, logs, marker)
			var exit *ExitError
			if err := stop(); !errors.As(err, &exit) || exit.Code != tc.code {
				t.Fatalf("Serve = %v, want ExitError with code %d", err, tc.code)
			}
			out := logs.String()
			if tc.lines != nil && !strings.Contains(out, "\n"+strings.Join(tc.lines, "\n")+"\n") {
				t.Errorf("fault lines not printed verbatim and together; log:\n%s", out)
			}
			if strings.Contains(out, "ready to roll") {
				t.Errorf("server claimed readiness before failing:\n%s", out)
			}
		})
	}
}

func TestFailBeforeHealthyWorkerNeverRegisters(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	logs := &syncbuf.Buffer{}
	_, stop := startServer(t, Options{Mode: ModeDecode, FrontendURL: front, HeartbeatInterval: 10 * time.Millisecond, Log: logs,
		Faults: Faults{FailBeforeHealthy: true, FailAfter: 50 * time.Millisecond, ExitCode: 1, LogLines: []string{oomLine}}})
	waitLog(t, logs, oomLine)
	var exit *ExitError
	if err := stop(); !errors.As(err, &exit) {
		t.Fatalf("Serve = %v", err)
	}
	if p, d := srtctlCounts(getHealth(t, front)); p+d != 0 {
		t.Errorf("a worker that failed before healthy registered (%dP/%dD)", p, d)
	}
}

func TestHang(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	worker := StartTest(t, Options{Mode: ModeDecode, FrontendURL: front, HeartbeatInterval: 10 * time.Millisecond, Faults: Faults{Hang: true}})
	standalone := StartTest(t, Options{Faults: Faults{Hang: true}})
	for _, u := range []string{worker + "/health", standalone + "/health", standalone + "/v1/models"} {
		resp, err := quickClient.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s answered %d; a hung engine answers nothing", u, resp.StatusCode)
		} else if !isTimeout(err) {
			t.Errorf("GET %s: %v, want a timeout (the process stays alive)", u, err)
		}
	}
	if p, d := srtctlCounts(getHealth(t, front)); p+d != 0 {
		t.Errorf("hung worker registered (%dP/%dD)", p, d)
	}
}

func TestHangAfterRequests(t *testing.T) {
	url := StartTest(t, Options{Faults: Faults{HangAfterRequests: 2}})
	for i := range 2 {
		resp, err := quickClient.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"x","max_tokens":2}`))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("request %d: %v %v", i+1, resp, err)
		}
		resp.Body.Close()
	}
	if _, err := quickClient.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"x"}`)); !isTimeout(err) {
		t.Errorf("request 3: %v, want a timeout", err)
	}
	if _, err := quickClient.Get(url + "/health"); !isTimeout(err) {
		t.Errorf("/health after the hang: %v, want a timeout", err)
	}
}

func TestExitAfterRequests(t *testing.T) {
	logs := &syncbuf.Buffer{}
	url, stop := startServer(t, Options{Log: logs, Faults: Faults{ExitAfterRequests: 2, ExitCode: 9, LogLines: []string{"RuntimeError: NCCL communicator was aborted on rank 3."}}})
	for i := range 2 {
		r := postJSON(t, url+"/v1/completions", `{"prompt":"x","max_tokens":3,"stream":true}`)
		if res := readStream(t, r.Body); !res.done || len(res.chunks) != 3 {
			t.Fatalf("request %d before the fault: %d chunks, done=%v", i+1, len(res.chunks), res.done)
		}
	}
	// The third request is never answered: the engine exits.
	if resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt":"x"}`)); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("request 3 answered 200 after the exit fault")
		}
	}
	var exit *ExitError
	if err := stop(); !errors.As(err, &exit) || exit.Code != 9 {
		t.Fatalf("Serve = %v, want ExitError code 9", err)
	}
	if !strings.Contains(logs.String(), "\nRuntimeError: NCCL communicator was aborted on rank 3.\n") {
		t.Errorf("log lacks the fault line:\n%s", logs.String())
	}
}

func TestExitAfterHealthy(t *testing.T) {
	front := StartTest(t, Options{Mode: ModeFrontend, WorkerTTL: time.Minute})
	logs := &syncbuf.Buffer{}
	_, stop := startServer(t, Options{Mode: ModeDecode, FrontendURL: front, HeartbeatInterval: 10 * time.Millisecond, Log: logs,
		Faults: Faults{ExitAfter: 200 * time.Millisecond, ExitCode: 0}})
	waitCounts(t, front, 0, 1) // registered first: this fault strikes after the gate
	waitLog(t, logs, "injected exit 200ms after healthy")
	var exit *ExitError
	if err := stop(); !errors.As(err, &exit) || exit.Code != 0 {
		t.Fatalf("Serve = %v, want ExitError with code 0", err)
	}
	if strings.Contains(logs.String(), "deregistered") {
		t.Error("a crashed worker deregistered")
	}
}
