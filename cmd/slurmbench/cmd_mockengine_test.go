package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/syncbuf"
	"github.com/slurmbench/slurmbench/mockengine"
)

// The mock engine is tested as a real process: the test binary re-executes
// itself into TestMockEngineHelperProcess, which runs the CLI with the
// arguments passed through the environment, so exit codes, stderr and
// signal handling are the ones the job driver will see.
const helperArgsEnv = "SLURMBENCH_TEST_MOCKENGINE_ARGS"

func TestMockEngineHelperProcess(t *testing.T) {
	args := os.Getenv(helperArgsEnv)
	if args == "" {
		t.Skip("helper process for the mock-engine command tests, not a test by itself")
	}
	os.Exit(run(append([]string{"slurmbench", "mock-engine"}, strings.Split(args, "\x1f")...), os.Stdout, os.Stderr))
}

type engineProc struct {
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	done   chan struct{}
	err    error // Wait's result, valid after done
}

var listenRE = regexp.MustCompile(`listen=(\S+)`)

// startEngine runs `slurmbench mock-engine --listen 127.0.0.1:0 ARGS` with
// extra environment and returns once it has printed its address.
// hangGuard bounds waits for the helper process to start or exit. It only
// stops a hung test; a loaded machine must never reach it.
const hangGuard = time.Minute

func startEngine(t *testing.T, env []string, args ...string) (*engineProc, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMockEngineHelperProcess$")
	all := append([]string{"--listen", "127.0.0.1:0"}, args...)
	cmd.Env = append(append(os.Environ(), helperArgsEnv+"="+strings.Join(all, "\x1f")), env...)
	p := &engineProc{cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	deadline := time.Now().Add(hangGuard)
	for {
		if m := listenRE.FindStringSubmatch(p.stderr.String()); m != nil {
			return p, "http://" + m[1]
		}
		select {
		case <-p.done:
			// A fast fault may exit right after printing the address.
			if m := listenRE.FindStringSubmatch(p.stderr.String()); m != nil {
				return p, "http://" + m[1]
			}
			t.Fatalf("mock-engine exited before printing its address: %v\n%s", p.err, p.stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mock-engine printed no address:\n%s", p.stderr.String())
		}
	}
}

// wait returns the exit code, failing the test if the process outlives timeout.
func (p *engineProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("mock-engine still running after %s:\n%s", timeout, p.stderr.String())
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		return exit.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// healthUntilExit polls /health until the process exits and reports whether
// it ever answered 200.
func (p *engineProc) healthUntilExit(url string) (sawHealthy bool) {
	client := &http.Client{Timeout: 200 * time.Millisecond}
	for {
		select {
		case <-p.done:
			return sawHealthy
		default:
		}
		if resp, err := client.Get(url + "/health"); err == nil {
			sawHealthy = sawHealthy || resp.StatusCode == 200
			resp.Body.Close()
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitHealthy polls /health until it answers 200: the engine prints its
// address when it listens, before it has "loaded" (requests before that
// get 503, as from a real engine).
func (p *engineProc) waitHealthy(t *testing.T, url string) {
	t.Helper()
	client := &http.Client{Timeout: 200 * time.Millisecond}
	deadline := time.Now().Add(hangGuard)
	for {
		if resp, err := client.Get(url + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("mock-engine exited before it was healthy: %v\n%s", p.err, p.stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mock-engine not healthy after %s:\n%s", hangGuard, p.stderr.String())
		}
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestMockEngineFailBeforeHealthy(t *testing.T) {
	const oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB"
	traceback := strings.Join([]string{
		"Traceback (most recent call last):",
		`  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 412, in __init__`,
		"    self.capture()",
		"Exception: Capture cuda graph failed: add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad.",
	}, "\n")
	logFile := filepath.Join(t.TempDir(), "nccl.log")
	if err := os.WriteFile(logFile, []byte("NCCL WARN Call to connect returned Connection refused\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		env      []string
		args     []string
		wantCode int
		wantTail string // the stderr's last lines, verbatim
	}{
		{name: "oom line from flags", args: []string{"--mode", "decode", "--fail-before-healthy-after", "300ms", "--fail-log-line", oom},
			wantCode: 1, wantTail: oom},
		{name: "cuda graph traceback from env", env: []string{
			"SLURMBENCH_MOCK_FAIL_BEFORE_HEALTHY_AFTER=200ms", "SLURMBENCH_MOCK_FAIL_LOG_LINE=" + traceback, "SLURMBENCH_MOCK_FAIL_EXIT_CODE=3"},
			wantCode: 3, wantTail: traceback},
		{name: "exit 0 before healthy", args: []string{"--fail-before-healthy-after", "100ms", "--fail-exit-code", "0", "--fail-log-line", "Exiting: no more work."},
			wantCode: 0, wantTail: "Exiting: no more work."},
		{name: "lines from a file", args: []string{"--fail-before-healthy-after", "0s", "--fail-log-file", logFile},
			wantCode: 1, wantTail: "NCCL WARN Call to connect returned Connection refused\nRuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := startEngine(t, tt.env, tt.args...)
			if p.healthUntilExit(url) {
				t.Error("/health answered 200 before the injected failure")
			}
			if code := p.wait(t, hangGuard); code != tt.wantCode {
				t.Errorf("exit code %d, want %d\n%s", code, tt.wantCode, p.stderr.String())
			}
			if out := strings.TrimRight(p.stderr.String(), "\n"); !strings.HasSuffix(out, "\n"+tt.wantTail) {
				t.Errorf("stderr does not end with the fault lines %q:\n%s", tt.wantTail, out)
			}
		})
	}
}

func TestMockEngineHangAndSIGTERM(t *testing.T) {
	p, url := startEngine(t, nil, "--hang")
	client := &http.Client{Timeout: 500 * time.Millisecond}
	if resp, err := client.Get(url + "/health"); err == nil {
		resp.Body.Close()
		t.Fatalf("hung engine answered /health with %d", resp.StatusCode)
	}
	select {
	case <-p.done:
		t.Fatalf("hung engine exited: %v", p.err)
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, hangGuard); code != 0 {
		t.Errorf("exit code after SIGTERM %d, want 0", code)
	}
}

func TestMockEngineExitAfterRequests(t *testing.T) {
	p, url := startEngine(t, nil, "--model", "dsr1", "--ttft", "5ms", "--itl", "1ms",
		"--exit-after-requests", "1", "--fail-exit-code", "7", "--fail-log-line", "RuntimeError: NCCL communicator was aborted on rank 3.")
	p.waitHealthy(t, url)
	resp, err := http.Post(url+"/v1/completions", "application/json",
		strings.NewReader(`{"model":"dsr1","prompt":[1,2,3],"max_tokens":5,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	resp.Body.Close()
	if n := strings.Count(body.String(), `"text":" tok"`); n != 5 || !strings.Contains(body.String(), `"completion_tokens":5`) {
		t.Errorf("response before the fault: %d tokens\n%s", n, body.String())
	}
	if code := p.wait(t, hangGuard); code != 7 {
		t.Errorf("exit code %d, want 7", code)
	}
	if got := lastLine(p.stderr.String()); got != "RuntimeError: NCCL communicator was aborted on rank 3." {
		t.Errorf("last stderr line %q", got)
	}
}

func TestMockEngineWorkerDeregistersOnSIGTERM(t *testing.T) {
	front := mockengine.StartTest(t, mockengine.Options{Mode: mockengine.ModeFrontend, WorkerTTL: time.Minute})
	p, _ := startEngine(t, []string{"SLURMBENCH_MOCK_FRONTEND=" + front}, "--mode", "prefill", "--heartbeat", "50ms")
	prefillCount := func() (prefill int) {
		resp, err := http.Get(front + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h mockengine.FrontendHealth
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		for _, in := range h.Instances {
			if in.Endpoint == "generate" && in.Component == "prefill" {
				prefill++
			}
		}
		return prefill
	}
	deadline := time.Now().Add(hangGuard)
	for prefillCount() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("worker never registered:\n%s", p.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t, hangGuard); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	if n := prefillCount(); n != 0 {
		t.Errorf("%d prefill instances after a graceful stop, want 0 (deregistered)", n)
	}
	if !strings.Contains(p.stderr.String(), "deregistered from frontend") {
		t.Errorf("no deregistration in the log:\n%s", p.stderr.String())
	}
}

func TestMockEngineBadFlags(t *testing.T) {
	for name, args := range map[string][]string{
		"unknown mode":       {"--mode", "router"},
		"missing answer key": {"--answer-key", filepath.Join(t.TempDir(), "none.jsonl")},
		"bad fail duration":  {"--fail-before-healthy-after", "soon"},
		"negative ttft":      {"--ttft", "-1s"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestMockEngineHelperProcess$")
			cmd.Env = append(os.Environ(), helperArgsEnv+"="+strings.Join(append([]string{"--listen", "127.0.0.1:0"}, args...), "\x1f"))
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exitcode.Code(exit.ExitCode()) != exitcode.Config {
				t.Errorf("err %v, want exit code %d\n%s", err, exitcode.Config, out)
			}
		})
	}
}

func TestMockEngineExitZeroAfterHealthy(t *testing.T) {
	p, url := startEngine(t, nil, "--mode", "decode", "--exit-after", "300ms", "--fail-exit-code", "0")
	if !p.healthUntilExit(url) {
		t.Error("/health never answered 200 before the exit")
	}
	if code := p.wait(t, hangGuard); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if !strings.Contains(lastLine(p.stderr.String()), "injected exit 300ms after healthy") {
		t.Errorf("last line %q", lastLine(p.stderr.String()))
	}
}
