package workflow

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/slurm"
)

// TestPassthroughNamesNewest: every name pattern of the newest stored
// WORKLOAD_ENV (submit.py stored id 70212982679) passes a variable that is
// set, and only those: each case sets one variable and names whether the
// eval is passed it.
func TestPassthroughNamesNewest(t *testing.T) {
	for _, tc := range []struct {
		name string
		pass bool
	}{
		{"SWEBENCH_SPLIT", true},
		{"SWEBENCH_", true},
		{"MODAL_TOKEN_ID", true},
		{"MODAL_TOKEN_SECRET", true},
		{"MODAL_TOKEN", false},
		{"MODAL_TOKEN_ID_X", false},
		{"ATTN_DP_SIZE", true},
		{"PREFILL_ATTN_DP_SIZE", true},
		{"DECODE_ATTN_DP_SIZE", true},
		{"ATTN_DP", false},
		{"XSWEBENCH_A", false},
		{"EVAL_TASKS", true},
		{"TP", true},
		{"TP_SIZE", false},
	} {
		got := PassthroughNames(Env{tc.name: "v"})
		if pass := slices.Contains(got, tc.name); pass != tc.pass {
			t.Errorf("%s set: passed %v, want %v", tc.name, pass, tc.pass)
		}
		if empty := PassthroughNames(Env{tc.name: ""}); len(empty) != 0 {
			t.Errorf("%s empty: passed %v, want none", tc.name, empty)
		}
	}
}

// TestAttentionDPOverrides: each attention-DP size the workflow sets
// becomes a string in benchmark.env, in InferenceX's order; unset or empty
// ones add nothing.
func TestAttentionDPOverrides(t *testing.T) {
	for _, tc := range []struct {
		env  Env
		want []string
	}{
		{Env{}, nil},
		{Env{"ATTN_DP_SIZE": ""}, nil},
		{Env{"ATTN_DP_SIZE": "4"}, []string{`--set benchmark.env.ATTN_DP_SIZE="4"`}},
		{Env{"DECODE_ATTN_DP_SIZE": "16", "PREFILL_ATTN_DP_SIZE": "2", "ATTN_DP_SIZE": "8"},
			[]string{`--set benchmark.env.ATTN_DP_SIZE="8"`, `--set benchmark.env.PREFILL_ATTN_DP_SIZE="2"`, `--set benchmark.env.DECODE_ATTN_DP_SIZE="16"`}},
		{Env{"PREFILL_ATTN_DP_SIZE": `a"b`}, []string{`--set benchmark.env.PREFILL_ATTN_DP_SIZE="a\"b"`}},
	} {
		got, err := AttentionDPOverrides(tc.env)
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		var s []string
		for _, o := range got {
			s = append(s, o.String())
			if o.Value.Tag != "!!str" {
				t.Errorf("%v: %s parses as %s, want a string", tc.env, o.String(), o.Value.Tag)
			}
		}
		if !slices.Equal(s, tc.want) {
			t.Errorf("%v:\n got %q\nwant %q", tc.env, s, tc.want)
		}
	}
}

// TestRequestRules: each rule of InferenceX's request models
// (request.py@4b2ffc9c) on cases built for it — which path reads which
// integer, the order variables are named in, the validator that runs only
// on valid fields — and that no refusal echoes a value.
func TestRequestRules(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tc := range []struct {
		name    string
		env     Env
		ok      bool
		missing []string
		invalid []string
	}{
		{name: "multi-node does not read ISL/OSL/TP", env: with(multinodeEnv(), "ISL", secret, "OSL", secret, "TP", secret), ok: true},
		{name: "single-node reads ISL", env: with(singleNodeEnv(), "ISL", secret), invalid: []string{"ISL: " + intMessage}},
		{name: "CONC on every path", env: with(multinodeEnv(), "CONC", secret), invalid: []string{"CONC: " + intMessage}},
		{name: "SALLOC_TIME_LIMIT on every path", env: with(multinodeEnv(), "SALLOC_TIME_LIMIT", secret), invalid: []string{"SALLOC_TIME_LIMIT: " + intMessage}},
		{name: "ENROOT_IMPORT_TIME_LIMIT on every path", env: with(multinodeEnv(), "ENROOT_IMPORT_TIME_LIMIT", secret), invalid: []string{"ENROOT_IMPORT_TIME_LIMIT: " + intMessage}},
		{name: "ENROOT_IMPORT_TIME_LIMIT optional", env: with(singleNodeEnv(), "ENROOT_IMPORT_TIME_LIMIT", "<unset>"), ok: true},
		{name: "integers allow whitespace and a sign", env: with(singleNodeEnv(), "TP", " 8 ", "SALLOC_TIME_LIMIT", "+480"), ok: true},
		{name: "CONC_LIST word named by index", env: with(multinodeEnv(), "CONC_LIST", "4 "+secret+" 8 x"),
			invalid: []string{"CONC_LIST.1: " + intMessage, "CONC_LIST.3: " + intMessage}},
		{name: "field order: missing and invalid", env: with(singleNodeEnv(), "HF_HUB_CACHE", "", "TP", "", "MODEL", "", "GPU_COUNT", secret, "CONC", secret),
			missing: []string{"MODEL", "TP", "HF_HUB_CACHE"}, invalid: []string{"CONC: " + intMessage, "GPU_COUNT: " + intMessage}},
		{name: "THINKING_MODE rule waits for valid fields", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "mtp", "THINKING_MODE", "", "PRECISION", ""),
			missing: []string{"PRECISION"}, invalid: []string{}},
		{name: "THINKING_MODE rule on valid fields", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "mtp", "THINKING_MODE", ""),
			invalid: []string{"THINKING_MODE is required for speculative AgentX throughput runs"}},
		{name: "non-speculative AgentX needs none", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "none", "THINKING_MODE", ""), ok: true},
		{name: "EVAL_CONC value not echoed", env: with(multinodeEnv(), "EVAL_CONC", secret), invalid: []string{"EVAL_CONC: each entry must be a positive integer"}},
		{name: "RUNNER_NAME line break not echoed", env: with(multinodeEnv(), "RUNNER_NAME", secret+"\n"), invalid: []string{"RUNNER_NAME: must not hold a line break or NUL"}},
	} {
		r, err := ParseRequest(tc.env)
		if tc.ok {
			if err != nil || r == nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var re *RequestError
		if !errors.As(err, &re) || exitcode.Of(err) != exitcode.Config {
			t.Errorf("%s: err %v, want a RequestError, exit 2", tc.name, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the refusal echoes a value: %v", tc.name, err)
		}
		if tc.missing != nil && !slices.Equal(re.Missing, tc.missing) {
			t.Errorf("%s: missing %v, want %v", tc.name, re.Missing, tc.missing)
		}
		if tc.invalid != nil && !slices.Equal(append([]string{}, re.Invalid...), tc.invalid) {
			t.Errorf("%s: invalid %q, want %q", tc.name, re.Invalid, tc.invalid)
		}
	}
}

// TestLaunchFilesByPath: a launch records its job and its logs under the
// names InferenceX's launcher uses for its path — srt-submission.json and
// multinode_server_logs.tar.gz (rooted at the logs directory, as
// artifacts.py@2f19012d bundle_server_logs tars it) for a multi-node job;
// srt-single-node-submission.json and srt-single-node-logs.tar.gz (logs/
// inside) for a single-node point — and never the other path's.
func TestLaunchFilesByPath(t *testing.T) {
	for _, tc := range []struct {
		name          string
		env           Env
		submit        bool
		want, wantNot []string
		bundle        string
	}{
		{name: "multi-node", env: multinodeEnv(), submit: true,
			want: []string{SubmissionFile, results.ServerLogsBundleName}, wantNot: []string{SingleNodeSubmissionFile, SingleNodeLogsBundle}},
		{name: "single-node", env: singleNodeEnv(), submit: true,
			want: []string{SingleNodeSubmissionFile, SingleNodeLogsBundle}, wantNot: []string{SubmissionFile, results.ServerLogsBundleName},
			bundle: SingleNodeLogsBundle},
		{name: "single-node never submitted", env: singleNodeEnv(), bundle: SingleNodeLogsBundle,
			want: []string{SingleNodeLogsBundle}, wantNot: []string{SubmissionFile, SingleNodeSubmissionFile, results.ServerLogsBundleName}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, runDir := t.TempDir(), t.TempDir()
			pl := &plan.Plan{Name: "inferencex-x", RunID: "r-1", RunDir: runDir, Layout: rundir.New(runDir)}
			// What an earlier launch of this kind left is replaced, or
			// removed when this one never submits.
			if err := os.WriteFile(filepath.Join(ws, submissionFile(tc.env.isMultinode())), []byte(`{"slurm_job_id":1}`), 0o644); err != nil {
				t.Fatal(err)
			}
			run := func(_ context.Context, o launch.RunOptions) error {
				o.Hooks.Planned(pl, nil)
				if tc.submit {
					o.Hooks.Submitted(77)
				}
				if err := os.MkdirAll(pl.Layout.Logs, 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(pl.Layout.Logs, "host-1_agg_w0.out"), []byte("up\n"), 0o644); err != nil {
					return err
				}
				// The run's own staging, as runner.StageLogs leaves it.
				return runner.StageLogs(pl, ws, true)
			}
			err := Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Version: "v9"},
				Env: with(tc.env, "GITHUB_WORKSPACE", ws), Resolver: resolved("c", ""), Launch: run, Now: clock(time.Second)})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			for _, name := range tc.want {
				if _, err := os.Stat(filepath.Join(ws, name)); err != nil {
					t.Errorf("%s not left: %v", name, err)
				}
			}
			for _, name := range tc.wantNot {
				if _, err := os.Stat(filepath.Join(ws, name)); err == nil {
					t.Errorf("%s left", name)
				}
			}
			names := tarNames(t, filepath.Join(ws, firstNonEmpty(tc.bundle, results.ServerLogsBundleName)))
			if !tc.env.isMultinode() && !slices.Contains(names, "logs/host-1_agg_w0.out") {
				t.Errorf("single-node bundle entries %v, want logs/host-1_agg_w0.out", names)
			}
			if tc.env.isMultinode() && !slices.Contains(names, "host-1_agg_w0.out") {
				t.Errorf("multi-node bundle entries %v, want host-1_agg_w0.out at its root", names)
			}
		})
	}
}

func (e Env) isMultinode() bool { return e["IS_MULTINODE"] == "true" }

// tarNames lists a .tar.gz's entry names.
func tarNames(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("bundle: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}

// TestEventFailureRecord: a launch a signal ended is recorded as event.py
// records one (type Interrupted, "received SIG…", retriable) whatever the
// layer was doing; other failures keep their layer's type and message.
func TestEventFailureRecord(t *testing.T) {
	for _, tc := range []struct {
		name          string
		err           error
		viaDone       bool
		kind, message string
		retriable     bool
	}{
		{name: "SIGINT", err: exitcode.Errorf(exitcode.Interrupted, "interrupted while waiting for the job"), kind: "Interrupted", message: "received SIGINT", retriable: true},
		{name: "SIGTERM", err: exitcode.Errorf(exitcode.Terminated, "terminated"), kind: "Interrupted", message: "received SIGTERM", retriable: true},
		{name: "SIGTERM seen by the runner", err: exitcode.Errorf(exitcode.Terminated, "terminated"), viaDone: true, kind: "Interrupted", message: "received SIGTERM", retriable: true},
		{name: "health", err: exitcode.Errorf(exitcode.Health, "workers not healthy"), kind: "HealthError", message: "workers not healthy"},
		{name: "allocation", err: exitcode.Errorf(exitcode.Queue, "NODE_FAIL"), kind: "AllocationError", message: "NODE_FAIL", retriable: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			pl := &plan.Plan{Name: "inferencex-x", RunID: "r-1", RunDir: "/r", Layout: rundir.New("/r")}
			run := func(_ context.Context, o launch.RunOptions) error {
				o.Hooks.Planned(pl, nil)
				if tc.viaDone {
					o.Hooks.Done(pl, &runner.Result{}, tc.err)
				}
				return tc.err
			}
			_ = Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
				Env: with(multinodeEnv(), "GITHUB_WORKSPACE", ws), Resolver: resolved("c", ""), Launch: run, Now: clock(time.Second)})
			e, _ := readEvent(t, ws)["error"].(map[string]any)
			if e["type"] != tc.kind || e["message"] != tc.message || e["retriable"] != tc.retriable || e["exit_code"] != float64(exitcode.Of(tc.err)) {
				t.Errorf("error %v, want type %s message %q retriable %v", e, tc.kind, tc.message, tc.retriable)
			}
		})
	}
}

// TestStartedAt: started_at as pydantic writes a UTC datetime: whole
// microseconds, no fraction when it is zero, Z.
func TestStartedAt(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 12, 6, 9, 24, 43, 0, time.UTC), "2026-12-06T09:24:43Z"},
		{time.Date(2026, 12, 6, 9, 24, 43, 999, time.UTC), "2026-12-06T09:24:43Z"},
		{time.Date(2026, 12, 6, 9, 24, 43, 123456789, time.UTC), "2026-12-06T09:24:43.123456Z"},
		{time.Date(2026, 12, 6, 9, 24, 43, 400000000, time.UTC), "2026-12-06T09:24:43.400000Z"},
		{time.Date(2026, 12, 6, 10, 24, 43, 1000, time.FixedZone("CET", 3600)), "2026-12-06T09:24:43.000001Z"},
	} {
		if got := startedAt(tc.in); got != tc.want {
			t.Errorf("startedAt(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// TestPrepareAnnotation: under GitHub Actions a launch refused before it
// starts is annotated as InferenceX annotates a failed launch — the stage
// as the title, "<type>: <message>" as the text — and not outside it.
func TestPrepareAnnotation(t *testing.T) {
	for _, tc := range []struct {
		gha  string
		want string
	}{
		{"true", "::error title=prepare::RequestError: required environment variables are not set: IMAGE\n"},
		{"", ""},
		{"1", ""},
	} {
		var stderr bytes.Buffer
		ws := t.TempDir()
		err := Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &bytes.Buffer{}, Stderr: &stderr},
			Env: with(multinodeEnv(), "GITHUB_WORKSPACE", ws, "IMAGE", "", "GITHUB_ACTIONS", tc.gha), Resolver: resolved("c", ""), Now: clock(time.Second)})
		if exitcode.Of(err) != exitcode.Config {
			t.Fatalf("GITHUB_ACTIONS=%q: %v", tc.gha, err)
		}
		var got string
		for _, l := range strings.SplitAfter(stderr.String(), "\n") {
			if strings.HasPrefix(l, "::error") {
				got += l
			}
		}
		if got != tc.want {
			t.Errorf("GITHUB_ACTIONS=%q: annotations %q, want %q", tc.gha, got, tc.want)
		}
	}
}

// TestExporterProvenance: a registry reference names itself; a squash
// file (an absolute path) is named as sha256sum prints it; an unreadable
// one is an error, not a made-up line.
func TestExporterProvenance(t *testing.T) {
	dir := t.TempDir()
	sq := filepath.Join(dir, "dcgm.sqsh")
	if err := os.WriteFile(sq, []byte("squash bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		image, want string
		ok          bool
	}{
		{"nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless", "nvcr.io/nvidia/k8s/dcgm-exporter:4.6.0-4.8.3-distroless", true},
		{"nvcr.io#nvidia/k8s/dcgm-exporter@sha256:ab", "nvcr.io#nvidia/k8s/dcgm-exporter@sha256:ab", true},
		// sha256 of "squash bytes", as `sha256sum` prints it.
		{sq, "853aea857694939ee03a5595f39bd891c349cf239a5c6cfcc50c9a795517bd66  " + sq, true},
		{filepath.Join(dir, "missing.sqsh"), "", false},
	} {
		got, err := ExporterProvenance(tc.image)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.image, err, tc.ok)
			continue
		}
		if tc.ok && got != tc.want {
			t.Errorf("%s: %q, want %q", tc.image, got, tc.want)
		}
	}
}

// TestNativeJobStatus: a single-node power point that ran leaves
// LOGS/power/native-job-status.txt, "<job>|<state>|<exit>"; a multi-node
// job, an eval-only run, a point without power, or one that never got a
// job leaves none.
func TestNativeJobStatus(t *testing.T) {
	done := slurm.Job{State: slurm.State{Base: slurm.StateCompleted}, Exit: slurm.ExitStatus{Code: 0}}
	failed := slurm.Job{State: slurm.State{Base: "FAILED"}, Exit: slurm.ExitStatus{Code: 3, Signal: 0}}
	for _, tc := range []struct {
		name  string
		env   Env
		power bool
		res   *runner.Result
		want  string // "" : no file
	}{
		{"single-node power", singleNodeEnv(), true, &runner.Result{JobID: 42, Job: done}, "42|COMPLETED|0:0\n"},
		{"single-node power failed", singleNodeEnv(), true, &runner.Result{JobID: 7, Job: failed}, "7|FAILED|3:0\n"},
		{"single-node without power", singleNodeEnv(), false, &runner.Result{JobID: 42, Job: done}, ""},
		{"single-node eval-only", with(singleNodeEnv(), "EVAL_ONLY", "true"), true, &runner.Result{JobID: 42, Job: done}, ""},
		{"single-node never submitted", singleNodeEnv(), true, &runner.Result{}, ""},
		{"multi-node power", multinodeEnv(), true, &runner.Result{JobID: 42, Job: done}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, runDir := t.TempDir(), t.TempDir()
			pl := &plan.Plan{Name: "inferencex-x", RunID: "r-1", RunDir: runDir, Layout: rundir.New(runDir)}
			if tc.power {
				pl.Telemetry = &plan.Telemetry{ExporterImage: "dcgm:1"}
			}
			run := func(_ context.Context, o launch.RunOptions) error {
				o.Hooks.Planned(pl, nil)
				o.Hooks.Done(pl, tc.res, nil)
				return nil
			}
			if err := Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
				Env: with(tc.env, "GITHUB_WORKSPACE", ws), Resolver: resolved("c", ""), Launch: run, Now: clock(time.Second)}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			b, err := os.ReadFile(filepath.Join(ws, "LOGS", "power", NativeJobStatusFile))
			if tc.want == "" {
				if err == nil {
					t.Errorf("%s left: %q", NativeJobStatusFile, b)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Errorf("%s = %q, %v; want %q", NativeJobStatusFile, b, err, tc.want)
			}
		})
	}
}
