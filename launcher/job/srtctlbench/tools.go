package srtctlbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// lmEvalScript runs InferenceX's lm-eval entry points, which are shell
// functions of its benchmarks/benchmark_lib.sh: run_eval, then
// append_lm_eval_summary (whose failure is ignored), in one shell so the
// second sees what the first left; the exit status is run_eval's. $1 is
// the workspace, $2 the frontend's port. The text is fixed: values reach it
// only as arguments.
const lmEvalScript = `source "$1/benchmarks/benchmark_lib.sh" || exit
rc=0
run_eval --framework lm-eval --port "$2" || rc=$?
append_lm_eval_summary || true
exit "$rc"`

var lmEvalPort = regexp.MustCompile(`:([0-9]+)`)

// lmEval is srtctl's lm-eval (scripts/lm-eval/bench.sh @c88ef731):
// arguments ENDPOINT [WORKSPACE]; InferenceX's run_eval in the workspace
// with the variables that script derives; meta_env.json, results*.json and
// sample*.jsonl copied to /logs/eval_results.
func (r *run) lmEval(ctx context.Context) error {
	endpoint := r.arg(0, "")
	ws := r.arg(1, "/infmax-workspace")
	port := ""
	if m := lmEvalPort.FindAllStringSubmatch(endpoint, -1); len(m) > 0 {
		port = m[len(m)-1][1]
	}
	if port == "" {
		return fmt.Errorf("lm-eval: endpoint %q has no port", endpoint)
	}
	if r.getenv("MODEL_NAME") == "" {
		if m := r.servedModel(ctx, endpoint); m != "" {
			r.setenv("MODEL_NAME", m)
			r.logf("lm-eval: MODEL_NAME from %s/v1/models: %s", endpoint, m)
		} else {
			r.logf("Warning: the served model's name is not known (%s/v1/models); MODEL_NAME stays %q", endpoint, r.getenv("MODEL"))
		}
	}
	// The concurrency and the summary's metadata, each from the first set
	// variable of its list (srtctl passes PREFILL_TP and the like, InferenceX
	// reads TP and the like). srtctl's script derives the summary's after
	// run_eval; the values differ only if run_eval set one of them.
	first := func(def string, names ...string) string {
		for _, n := range names {
			if v := r.getenv(n); v != "" {
				return v
			}
		}
		return def
	}
	r.setenv("EVAL_CONCURRENT_REQUESTS", first("256", "EVAL_CONC", "EVAL_CONCURRENT_REQUESTS"))
	r.setenv("IS_MULTINODE", first("true", "IS_MULTINODE"))
	r.setenv("TP", first("1", "TP", "PREFILL_TP"))
	r.setenv("CONC", first("1", "CONC", "EVAL_CONC", "EVAL_CONCURRENT_REQUESTS"))
	r.setenv("EP_SIZE", first("1", "EP_SIZE", "PREFILL_EP"))
	r.setenv("DP_ATTENTION", first("false", "DP_ATTENTION", "PREFILL_DP_ATTN"))
	r.setenv("PREFILL_DP_ATTENTION", first("false", "PREFILL_DP_ATTENTION", "PREFILL_DP_ATTN", "DP_ATTENTION"))
	r.setenv("DECODE_DP_ATTENTION", first("false", "DECODE_DP_ATTENTION", "DECODE_DP_ATTN", "DP_ATTENTION"))
	r.logf("lm-eval: endpoint %s, port %s, workspace %s, %s concurrent requests", endpoint, port, ws, r.getenv("EVAL_CONCURRENT_REQUESTS"))
	evalErr := r.exec(ctx, ws, "bash", "-c", lmEvalScript, "srtctl-lm-eval", ws, port)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	out := filepath.Join(r.o.Logs, "eval_results")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return errors.Join(evalErr, fmt.Errorf("lm-eval: %w", err))
	}
	for _, pattern := range []string{"meta_env.json", "results*.json", "sample*.jsonl"} {
		r.copyMatches(ws, pattern, out)
	}
	return evalErr
}

// dynamoRepo is where srtctl's router script clones Dynamo's benchmarks
// from, and dynamoDir where it keeps the clone.
const (
	dynamoRepo = "https://github.com/ai-dynamo/dynamo.git"
	dynamoDir  = "dynamo"
)

// router is srtctl's router (scripts/router/bench.sh @c88ef731): arguments
// ENDPOINT [ISL] [OSL] [REQUESTS] [CONCURRENCY] [PREFIX_RATIOS]; Dynamo's
// benchmarks/router/prefix_ratio_benchmark.py from a shallow clone in /tmp
// (kept for the next run), after pip installs aiperf and matplotlib (a
// failed install is not fatal), results in /logs/router-bench. The ratios
// are one word each.
func (r *run) router(ctx context.Context) error {
	endpoint := r.arg(0, "")
	r.logf("router: endpoint %s", endpoint)
	clone := filepath.Join(r.o.Tmp, dynamoDir)
	if _, err := os.Stat(clone); err != nil {
		if err := r.exec(ctx, "", "git", "clone", "--depth", "1", dynamoRepo, clone); err != nil {
			return err
		}
	}
	if err := r.exec(ctx, "", "pip", "install", "aiperf", "matplotlib"); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.logf("Warning: pip install aiperf matplotlib: %v (going on, as srtctl does)", err)
	}
	out := filepath.Join(r.o.Logs, "router-bench")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("router: %w", err)
	}
	argv := append([]string{"python", "prefix_ratio_benchmark.py", "--prefix-ratios"}, strings.Fields(r.arg(5, "0.1 0.3 0.5 0.7 0.9"))...)
	argv = append(argv, "--isl", r.arg(1, "14000"), "--osl", r.arg(2, "200"), "--requests", r.arg(3, "200"),
		"--concurrency", r.arg(4, "20"), "--output-dir", out)
	return r.exec(ctx, filepath.Join(clone, "benchmarks", "router"), argv...)
}

// sglangBench is srtctl's sglang-bench (scripts/sglang-bench/bench.sh
// @c88ef731): arguments ENDPOINT ISL OSL CONCURRENCIES [REQ_RATE];
// sglang.bench_serving once per concurrency (the list split at "x"), 128
// prompts of exactly ISL/OSL tokens, no warmup, with the workers profiled
// around the whole sweep when the plan profiles. Its log is its result.
func (r *run) sglangBench(ctx context.Context) (err error) {
	endpoint := r.arg(0, "")
	host, port := hostPort(endpoint)
	model := r.getenv("BENCH_MODEL_NAME")
	if model == "" {
		model = defaultModel
	}
	prof, err := r.profilingFromEnv(false)
	if err != nil {
		return err
	}
	defer func() { prof.stop(context.WithoutCancel(ctx)) }()
	if err := prof.start(ctx); err != nil {
		return err
	}
	for _, c := range splitList(r.arg(3, ""), "x") {
		r.logf("sglang-bench: concurrency %s (%s)", c, r.o.Now().Format("2006-01-02 15:04:05"))
		if err := r.exec(ctx, "", "python3", "-m", "sglang.bench_serving", "--backend", "sglang-oai", "--model", model,
			"--host", host, "--port", port, "--dataset-name", "random", "--max-concurrency", c, "--num-prompts", "128",
			"--random-input-len", r.arg(1, ""), "--random-output-len", r.arg(2, ""), "--random-range-ratio", "1",
			"--request-rate", r.arg(4, "inf"), "--warmup-requests", "0"); err != nil {
			return err
		}
	}
	r.logf("SGLang-Bench completed")
	return nil
}

// hostPort splits http://HOST:PORT/... as srtctl's scripts do (scheme
// dropped, then the colon-separated fields).
func hostPort(endpoint string) (string, string) {
	rest := strings.TrimPrefix(endpoint, "http://")
	host, port, _ := strings.Cut(rest, ":")
	port, _, _ = strings.Cut(port, ":")
	port, _, _ = strings.Cut(port, "/")
	return host, port
}

// splitList splits a list as bash's read -a does with IFS set to sep:
// empty items are dropped.
func splitList(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item != "" {
			out = append(out, item)
		}
	}
	return out
}
