package srtctlbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// uvInstaller is where srtctl's trace-replay script installs uv from when
// the container has none; the installer is a shell script piped to sh.
const (
	uvInstaller   = "https://astral.sh/uv/install.sh"
	uvInstallText = `curl -LsSf "$1" | sh`
)

// mooncakeTraces are the Mooncake traces mooncake-router replays, by
// benchmark.mooncake_workload (srtctl's scripts/mooncake-router/bench.sh
// @c88ef731).
var mooncakeTraces = map[string]string{
	"mooncake":     "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release/arxiv-trace/mooncake_trace.jsonl",
	"conversation": "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release/traces/conversation_trace.jsonl",
	"synthetic":    "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release/traces/synthetic_trace.jsonl",
	"toolagent":    "https://raw.githubusercontent.com/kvcache-ai/Mooncake/main/FAST25-release/traces/toolagent_trace.jsonl",
}

// maxTraceBytes bounds a downloaded trace.
const maxTraceBytes = 4 << 30

// aiperfDirs are the base and artifact directories (BASE_DIR, ARTIFACT_DIR,
// which srtctl's scripts let the environment move).
func (r *run) aiperfDirs() (string, string) {
	base := r.getenv("BASE_DIR")
	if base == "" {
		base = r.o.Logs
	}
	art := r.getenv("ARTIFACT_DIR")
	if art == "" {
		art = filepath.Join(base, "artifacts")
	}
	return base, art
}

// serverMetrics is aiperf's --server-metrics list from
// AIPERF_SERVER_METRICS_URLS (comma-separated), nothing when unset.
func (r *run) serverMetrics() []string {
	urls := splitList(r.getenv("AIPERF_SERVER_METRICS_URLS"), ",")
	if len(urls) == 0 {
		return nil
	}
	return append([]string{"--server-metrics"}, urls...)
}

func goodput(ttft, itl string) string {
	return "time_to_first_token:" + ttft + " inter_token_latency:" + itl
}

// modelBase is the model's name after its last slash (artifact names).
func modelBase(model string) string { return model[strings.LastIndex(model, "/")+1:] }

// traceReplay is srtctl's trace-replay (scripts/trace-replay/bench.sh
// @c88ef731): arguments ENDPOINT MODEL TRACE_FILE CONCURRENCIES
// [TTFT_MS] [ITL_MS] [TOKENIZER] then extra aiperf flags; aiperf from a
// fresh uv environment in /tmp (AIPERF_PACKAGE names it), a five-request
// warmup into artifacts/warmup, then one replay of the trace per
// concurrency (comma-separated) into
// artifacts/<model>_trace_c<C>_<YYYYmmdd_HHMMSS>, the workers profiled
// around the replays.
func (r *run) traceReplay(ctx context.Context) error {
	endpoint, model, trace := r.arg(0, ""), r.arg(1, "test-model"), r.arg(2, "")
	concs, ttft, itl, tokenizer := r.arg(3, "1"), r.arg(4, "2000"), r.arg(5, "25"), r.arg(6, "/model")
	var extra []string
	if len(r.args) > 7 {
		extra = r.args[7:]
	}
	prof, err := r.profilingFromEnv(r.getenv("PROFILING_BACKEND") == "trtllm")
	if err != nil {
		return err
	}
	defer func() { prof.stop(context.WithoutCancel(ctx)) }()
	r.setenv("PYTHONUNBUFFERED", "1")
	metrics := r.serverMetrics()
	if metrics != nil {
		metrics = append(metrics, "--server-metrics-formats", "json", "jsonl")
	}
	_, art := r.aiperfDirs()
	if err := os.MkdirAll(art, 0o755); err != nil {
		return fmt.Errorf("trace-replay: %w", err)
	}
	// Many concurrent streams: as many descriptors as the node allows,
	// 600000 or else 65536; neither is required.
	if r.o.RaiseFileLimit(600000) != nil {
		_ = r.o.RaiseFileLimit(65536)
	}
	r.setenv("AIPERF_HTTP_SO_RCVTIMEO", "120")
	r.logf("trace-replay: endpoint %s, model %s, trace %s, concurrencies %s, goodput TTFT %s ms ITL %s ms, tokenizer %s, extra %q",
		endpoint, model, trace, concs, ttft, itl, tokenizer, extra)
	if st, err := os.Stat(trace); err != nil || st.IsDir() {
		return fmt.Errorf("trace-replay: trace file %s not found", trace)
	}
	if err := r.aiperfVenv(ctx); err != nil {
		return err
	}
	warmup := filepath.Join(art, "warmup")
	if err := os.MkdirAll(warmup, 0o755); err != nil {
		return fmt.Errorf("trace-replay: %w", err)
	}
	if err := r.exec(ctx, "", "aiperf", "profile", "-m", model, "--tokenizer", tokenizer, "--tokenizer-trust-remote-code",
		"--url", endpoint, "--streaming", "--ui", "simple", "--extra-inputs", "ignore_eos:true", "--concurrency", "1",
		"--request-count", "5", "--artifact-dir", warmup); err != nil {
		return err
	}
	stamp := r.o.Now().Format("20060102_150405")
	if err := prof.start(ctx); err != nil {
		return err
	}
	for _, c := range splitList(concs, ",") {
		dir := filepath.Join(art, modelBase(model)+"_trace_c"+c+"_"+stamp)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("trace-replay: %w", err)
		}
		argv := []string{"aiperf", "profile", "-m", model, "--tokenizer", tokenizer, "--tokenizer-trust-remote-code",
			"--input-file", trace, "--custom-dataset-type", "mooncake_trace", "--url", endpoint, "--streaming",
			"--extra-inputs", "ignore_eos:true", "--concurrency", c, "--random-seed", "42", "--ui", "simple", "--artifact-dir", dir}
		argv = append(append(append(argv, metrics...), "--goodput", goodput(ttft, itl)), extra...)
		r.logf("trace-replay: concurrency %s into %s", c, dir)
		if err := r.exec(ctx, "", argv...); err != nil {
			return err
		}
	}
	r.logf("Trace Replay Benchmark Complete: results in %s", art)
	return nil
}

// aiperfVenv installs aiperf (AIPERF_PACKAGE, default the latest) and
// tiktoken into /tmp/aiperf-<job id>, fetching uv first when the container
// lacks it, and puts the environment first on PATH.
func (r *run) aiperfVenv(ctx context.Context) error {
	if r.lookPath("uv") == "" {
		if err := r.exec(ctx, "", "sh", "-c", uvInstallText, "srtctl-uv-install", uvInstaller); err != nil {
			return err
		}
		r.setenv("PATH", filepath.Join(r.getenv("HOME"), ".local", "bin")+":"+r.getenv("PATH"))
	}
	spec := r.getenv("AIPERF_PACKAGE")
	if spec == "" {
		spec = "aiperf"
	}
	id := r.getenv("SLURM_JOB_ID")
	if id == "" {
		id = strconv.Itoa(os.Getpid())
	}
	venv := filepath.Join(r.o.Tmp, "aiperf-"+id)
	if err := r.exec(ctx, "", "uv", "venv", venv); err != nil {
		return err
	}
	if err := r.exec(ctx, "", "uv", "pip", "install", "-p", venv, spec, "tiktoken"); err != nil {
		return err
	}
	r.setenv("PATH", filepath.Join(venv, "bin")+":"+r.getenv("PATH"))
	return nil
}

// mooncakeRouter is srtctl's mooncake-router (scripts/mooncake-router/
// bench.sh @c88ef731): arguments ENDPOINT [MODEL] [WORKLOAD] [TTFT_MS]
// [ITL_MS] [TOKENIZER]; the workload's Mooncake trace downloaded once into
// traces/, a 20-request warmup, one replay on the trace's own schedule into
// artifacts/<model>_<workload>_<YYYYmmdd_HHMMSS>; then the rollup srtctl's
// post-processing writes (benchmark-rollup.json in the log directory),
// also when the replay failed.
func (r *run) mooncakeRouter(ctx context.Context) error {
	endpoint, model, workload := r.arg(0, ""), r.arg(1, "Qwen/Qwen3-32B"), r.arg(2, "conversation")
	ttft, itl, tokenizer := r.arg(3, "2000"), r.arg(4, "25"), r.arg(5, "/model")
	if len(r.args) > 6 {
		// srtctl's runner appends benchmark.aiperf_args here too, and its
		// script never reads them; neither does this.
		r.logf("mooncake-router: extra aiperf flags %q are not passed (srtctl's script ignores them)", r.args[6:])
	}
	url, ok := mooncakeTraces[workload]
	if !ok {
		return fmt.Errorf("mooncake-router: no Mooncake trace for workload %q", workload)
	}
	base, art := r.aiperfDirs()
	traces := r.getenv("TRACE_DIR")
	if traces == "" {
		traces = filepath.Join(base, "traces")
	}
	for _, d := range []string{traces, art} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("mooncake-router: %w", err)
		}
	}
	r.setenv("AIPERF_HTTP_SO_RCVTIMEO", "120")
	r.logf("mooncake-router: endpoint %s, model %s, workload %s, goodput TTFT %s ms ITL %s ms, tokenizer %s", endpoint, model, workload, ttft, itl, tokenizer)
	runErr := func() error {
		if r.lookPath("aiperf") == "" {
			if err := r.exec(ctx, "", "pip", "install", "aiperf"); err != nil {
				return err
			}
		}
		input := filepath.Join(traces, workload+"_trace.jsonl")
		if _, err := os.Stat(input); err != nil {
			r.logf("mooncake-router: downloading the %s trace", workload)
			if err := r.download(ctx, url, input); err != nil {
				return fmt.Errorf("mooncake-router: %w", err)
			}
		}
		if err := r.exec(ctx, "", "aiperf", "profile", "-m", model, "--tokenizer", tokenizer, "--url", endpoint,
			"--streaming", "--ui", "simple", "--concurrency", "10", "--request-count", "20"); err != nil {
			return err
		}
		dir := filepath.Join(art, modelBase(model)+"_"+workload+"_"+r.o.Now().Format("20060102_150405"))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("mooncake-router: %w", err)
		}
		argv := []string{"aiperf", "profile", "-m", model, "--tokenizer", tokenizer, "--input-file", input,
			"--custom-dataset-type", "mooncake_trace", "--fixed-schedule", "--url", endpoint, "--streaming",
			"--random-seed", "42", "--ui", "simple", "--artifact-dir", dir}
		argv = append(append(argv, r.serverMetrics()...), "--goodput", goodput(ttft, itl))
		return r.exec(ctx, "", argv...)
	}()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := Rollup(filepath.Join(r.o.Logs), r.o.Now()); err != nil {
		r.logf("Warning: mooncake-router rollup: %v", err)
	} else {
		r.logf("mooncake-router: wrote %s", filepath.Join(r.o.Logs, RollupFile))
	}
	return runErr
}

// download fetches url into path atomically (a partial download never
// passes for the trace), bounded.
func (r *run) download(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := r.o.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("downloading %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("downloading %s: HTTP %d", url, resp.StatusCode)
	}
	return atomicfile.Write(path, atomicfile.Options{Overwrite: true}, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(resp.Body, maxTraceBytes+1))
		if err == nil && n > maxTraceBytes {
			err = fmt.Errorf("downloading %s: more than %d bytes", url, int64(maxTraceBytes))
		}
		return err
	})
}

// RollupFile is the rollup's name in the log directory.
const RollupFile = "benchmark-rollup.json"

// maxAIPerfExport bounds the aiperf summary the rollup reads.
const maxAIPerfExport = 256 << 20

// Rollup writes logDir/benchmark-rollup.json from the newest
// artifacts/*/profile_export_aiperf.json, as srtctl's post-processing does
// for mooncake-router (its _generate_rollup runs the type's rollup.py on
// the log directory after the benchmark, src/srtctl/cli/mixins/
// postprocess_stage.py@0b1f6fdb; the record it writes, read as facts from
// scripts/mooncake-router/rollup.py@c88ef731): benchmark_type, a UTC
// timestamp, config (the export's workload and model, null when absent) and
// the whole export as data, indented by two. No export, or one that is not
// JSON, writes nothing and says so.
func Rollup(logDir string, now time.Time) error {
	matches, _ := filepath.Glob(filepath.Join(logDir, "artifacts", "*", "profile_export_aiperf.json"))
	var newest string
	var newestMod time.Time
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && (newest == "" || st.ModTime().After(newestMod)) {
			newest, newestMod = m, st.ModTime()
		}
	}
	if newest == "" {
		return errors.New("no aiperf results (artifacts/*/profile_export_aiperf.json)")
	}
	raw, err := readlimit.ReadFile(newest, maxAIPerfExport)
	if err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("%s: %w", newest, err)
	}
	field := func(k string) json.RawMessage {
		if v, ok := top[k]; ok {
			return v
		}
		return json.RawMessage("null")
	}
	doc := struct {
		Type      string `json:"benchmark_type"`
		Timestamp string `json:"timestamp"`
		Config    struct {
			Workload json.RawMessage `json:"workload"`
			Model    json.RawMessage `json:"model"`
		} `json:"config"`
		Data json.RawMessage `json:"data"`
	}{Type: "mooncake-router", Timestamp: pyUTC(now), Data: raw}
	doc.Config.Workload, doc.Config.Model = field("workload"), field("model")
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(logDir, RollupFile), bytes.TrimSuffix(out.Bytes(), []byte("\n")), atomicfile.Options{Overwrite: true})
}

// pyUTC is Python's datetime.now(timezone.utc).isoformat() with Z for the
// offset: microseconds shown unless zero.
func pyUTC(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 == 0 {
		return t.Format("2006-01-02T15:04:05") + "Z"
	}
	return t.Format("2006-01-02T15:04:05.000000") + "Z"
}

// lookPath finds name on the run's PATH, "" when it is not there.
func (r *run) lookPath(name string) string { return lookPathIn(name, r.getenv("PATH")) }

// lookPathIn finds name in the directories of path.
func lookPathIn(name, path string) string {
	for _, dir := range filepath.SplitList(path) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
