package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/clients/gsm8k"
	"github.com/slurmbench/slurmbench/clients/sabench"
	"github.com/slurmbench/slurmbench/inputs/recipe"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/job/steps"
	"github.com/slurmbench/slurmbench/login/report"
	"github.com/slurmbench/slurmbench/login/runner"
	"github.com/slurmbench/slurmbench/plan"
	"github.com/slurmbench/slurmbench/planner"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// The URL mode of bench and eval: the in-job steps against an endpoint that
// is already serving, from a plan built out of flags (steps.URLBench,
// steps.URLEval), so results, names and the table are a run's.

// Endpoint kinds of --endpoint.
const (
	endpointCompletions = "completions"
	endpointChat        = "chat"
)

func urlFlag() cli.Flag {
	return &cli.StringFlag{Name: "url", Usage: "URL mode: the serving endpoint `URL`, http://host:port (no plan needed)"}
}

func urlCommonFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "URL mode: the served model `NAME` (sent as \"model\")"},
		&cli.StringFlag{Name: "out", Value: "results", Usage: "URL mode: results `DIR`, laid out like a run's results directory"},
	}
}

func benchURLFlags() []cli.Flag {
	return append([]cli.Flag{urlFlag()}, append(urlCommonFlags(),
		&cli.IntFlag{Name: "isl", Usage: "URL mode: input length in `TOKENS`"},
		&cli.IntFlag{Name: "osl", Usage: "URL mode: output length in `TOKENS` (max_tokens, ignore_eos)"},
		&cli.StringFlag{Name: "conc", Usage: "URL mode: concurrencies, e.g. 8x32x64, \"8 32\" or 8,32"},
		&cli.IntFlag{Name: "num-prompts", Usage: "URL mode: measured requests per point `N` (default 10 × concurrency)"},
		&cli.IntFlag{Name: "warmups", Usage: "URL mode: warmup requests per point `N` (default 2 × concurrency; 0: none)"},
		&cli.StringFlag{Name: "req-rate", Value: "inf", Usage: "URL mode: request rate, inf or requests per second"},
		&cli.Float64Flag{Name: "range-ratio", Value: sabench.DefaultRangeRatio, Usage: "URL mode: lengths are drawn uniformly from [ratio × L, L]"},
		&cli.StringFlag{Name: "endpoint", Value: endpointCompletions, Usage: "URL mode: completions (token-id prompts) or chat (text prompts, /v1/chat/completions)"},
		&cli.StringFlag{Name: "result-filename", Usage: "URL mode: also stage the results into --out under InferenceX's names, <NAME>_<config>_conc<C>_gpus_<T>...json", EnvVars: []string{"RESULT_FILENAME"}},
		&cli.IntFlag{Name: "gpus", Value: 1, Usage: "URL mode: GPUs serving the endpoint (result names, per-GPU throughput)"},
		&cli.IntFlag{Name: "prefill-gpus", Usage: "URL mode: of --gpus, the prefill GPUs of a disaggregated deployment"},
		&cli.IntFlag{Name: "decode-gpus", Usage: "URL mode: of --gpus, the decode GPUs of a disaggregated deployment"},
	)...)
}

func evalURLFlags() []cli.Flag {
	return append([]cli.Flag{urlFlag()}, append(urlCommonFlags(),
		&cli.StringFlag{Name: "data-dir", Usage: "URL mode: `DIR` holding gsm8k's test.jsonl and train.jsonl", EnvVars: []string{"SLURMBENCH_GSM8K"}},
		&cli.IntFlag{Name: "concurrency", Usage: "URL mode: requests in flight (default 64)"},
	)...)
}

// urlMode says whether the command runs against --url, refusing a mix of
// the two modes.
func urlMode(c *cli.Context) (bool, error) {
	if c.String("url") == "" {
		return false, nil
	}
	for _, name := range []string{"plan", "frontend"} {
		if c.String(name) != "" {
			return true, configErrorf("--url and --%s: give a plan (--plan, --frontend) or a URL, not both", name)
		}
	}
	return true, nil
}

func benchURL(c *cli.Context) error {
	concs, err := recipe.ParseConcurrencies(c.String("conc"))
	if err != nil {
		return configErrorf("--conc %q: %v", c.String("conc"), err)
	}
	chat := false
	switch c.String("endpoint") {
	case endpointCompletions:
	case endpointChat:
		chat = true
	default:
		return configErrorf("--endpoint %q: want %s or %s", c.String("endpoint"), endpointCompletions, endpointChat)
	}
	warmups := -1
	if c.IsSet("warmups") {
		if warmups = c.Int("warmups"); warmups < 0 {
			return configErrorf("--warmups %d: must not be negative", warmups)
		}
	}
	u := steps.URLBench{
		URL: c.String("url"), Model: c.String("model"), ISL: c.Int("isl"), OSL: c.Int("osl"),
		Concurrencies: concs, NumPrompts: c.Int("num-prompts"), Warmups: warmups,
		RequestRate: c.String("req-rate"), RangeRatio: c.Float64("range-ratio"), Out: c.String("out"),
		GPUs: c.Int("gpus"), PrefillGPUs: c.Int("prefill-gpus"), DecodeGPUs: c.Int("decode-gpus"),
	}
	pl, err := u.Plan()
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	pl.Telemetry = measurementWindows(os.Getenv)
	name := c.String("result-filename")
	if err := runner.CheckStaging(pl, runner.CollectOptions{ResultFilename: name}); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	live := newLiveProgress(c.App.ErrWriter)
	opts := steps.BenchOptions{
		Frontend: strings.TrimSuffix(u.URL, "/"), Out: c.App.ErrWriter, Log: c.App.ErrWriter,
		Chat: chat, Probe: true, ProgressInterval: live.interval, Progress: live.point(len(pl.Points)),
	}
	done, benchErr := steps.Bench(c.Context, pl, opts)
	live.end()
	if len(done) == 0 {
		return urlBenchError(c, benchErr) // refused before the first point: nothing to show
	}
	co := runner.CollectOptions{ResultFilename: name, Provenance: results.Provenance{SlurmbenchVersion: version}}
	if name != "" {
		co.StageDir = pl.Layout.Results
	}
	col, colErr := runner.Collect(pl, co)
	if col != nil && len(col.Points) > 0 {
		// The Pareto picture and its data beside the results, as a run stages them.
		if _, _, _, err := pareto.SaveRun(pl.Layout.Results, "bench --url", col.Points); err != nil {
			colErr = cmp.Or(colErr, exitcode.With(exitcode.Collect, err))
		}
	}
	// The points' own error names more than collection's.
	return printURLSummary(c, pl, col, urlBenchError(c, cmp.Or(benchErr, colErr)))
}

// urlBenchError gives a URL-mode failure its exit code: a probe refusal is
// bad input (exit 2, before anything was timed), the rest as in a run.
func urlBenchError(c *cli.Context, err error) error {
	if err == nil {
		return nil
	}
	var probe *sabench.ProbeError
	if errors.As(err, &probe) {
		return exitcode.With(exitcode.Config, err)
	}
	var coded *exitcode.Error
	if errors.As(err, &coded) {
		return err // collection's, already coded
	}
	return exitcode.With(stepExitCode(c.Context, err, exitcode.Benchmark), err)
}

func evalURL(c *cli.Context) error {
	e := steps.URLEval{URL: c.String("url"), Model: c.String("model"), DataDir: c.String("data-dir"),
		Concurrency: c.Int("concurrency"), Out: c.String("out")}
	pl, err := e.Plan()
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	live := newLiveProgress(c.App.ErrWriter)
	opts := steps.EvalOptions{
		Frontend: strings.TrimSuffix(e.URL, "/"), ModelPrefix: c.String("model-prefix"),
		Limit: c.Int("limit"), ContextLength: c.Int("context-length"),
		Out: c.App.ErrWriter, Log: c.App.ErrWriter, Progress: live.docs(),
	}
	if err := steps.CheckEval(pl, opts); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	_, err = steps.Eval(c.Context, pl, opts)
	live.end()
	var below *gsm8k.ThresholdError
	switch {
	case err == nil:
	case errors.As(err, &below):
		err = exitcode.With(exitcode.Eval, err)
	default:
		if _, statErr := os.Stat(pl.Eval.ResultDir); statErr != nil {
			return exitcode.With(stepExitCode(c.Context, err, exitcode.Eval), err) // nothing to show
		}
		err = exitcode.With(stepExitCode(c.Context, err, exitcode.Eval), err)
	}
	return printURLSummary(c, pl, nil, err)
}

// printURLSummary prints the table a run prints (and, in GitHub Actions,
// writes the same step summary and outputs), then returns err.
func printURLSummary(c *cli.Context, pl *plan.Plan, col *runner.Collected, err error) error {
	sum := runner.Summary(pl, &runner.Result{Collected: col}, err)
	sum.RunDir = pl.Layout.Results
	fmt.Fprint(c.App.Writer, sum.Text())
	if report.Enabled(os.Getenv) {
		if gerr := writeGitHub(sum); gerr != nil {
			fmt.Fprintf(c.App.ErrWriter, "slurmbench: writing GitHub outputs: %v\n", gerr)
		}
	}
	return err
}

// liveProgress shows a running point: on a terminal one line rewritten in
// place twice a second, otherwise a plain line every 5 s.
type liveProgress struct {
	w        io.Writer
	tty      bool
	interval time.Duration
	mu       sync.Mutex
	open     bool // a rewritten line is showing
}

func newLiveProgress(w io.Writer) *liveProgress {
	p := &liveProgress{w: w, tty: isTerminal(w), interval: sabench.DefaultProgressInterval}
	if p.tty {
		p.interval = 500 * time.Millisecond
	}
	return p
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *liveProgress) show(line string, final bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K"+line)
	p.open = !final
	if final {
		fmt.Fprintln(p.w)
	}
}

// end finishes a line left open on the terminal.
func (p *liveProgress) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
}

func (p *liveProgress) point(n int) func(int, plan.Point, sabench.Progress) {
	return func(index int, pt plan.Point, s sabench.Progress) {
		p.show(progressLine(index, n, pt, s), s.Final)
	}
}

// progressLine is one point's state, e.g.
// "point 1/2 c8 benchmark: 40/80 done, 0 failed, 1234 tok/s, p50 TTFT 51.2 ms, 3s".
func progressLine(index, n int, pt plan.Point, s sabench.Progress) string {
	rate := 0.0
	if sec := s.Elapsed.Seconds(); sec > 0 {
		rate = float64(s.Tokens) / sec
	}
	return fmt.Sprintf("point %d/%d c%d %s: %d/%d done, %d failed, %.0f tok/s, p50 TTFT %.1f ms, %s",
		index, n, pt.Concurrency, s.Phase, s.Finished, s.Total, s.Failed, rate,
		float64(s.MedianTTFT)/float64(time.Millisecond), s.Elapsed.Round(time.Second))
}

// docs is the eval's progress: every document on a terminal (rewritten in
// place, at most twice a second), a plain line every 5 s otherwise.
func (p *liveProgress) docs() func(done, total int) {
	var mu sync.Mutex
	var last time.Time
	start := time.Now()
	return func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		final := done == total
		if !final && time.Since(last) < p.interval {
			return
		}
		last = time.Now()
		p.show(fmt.Sprintf("gsm8k: %d/%d documents, %s", done, total, time.Since(start).Round(time.Second)), final)
	}
}

// measurementWindows is srtctl's window contract for a client run inside a
// custom benchmark (its sa-bench client's measurement_window.py): with
// SRT_MEASUREMENT_WINDOW_DIR set, each measured point writes its window
// there, result_path relative to SRT_MEASUREMENT_WINDOW_RESULT_ROOT (else
// /logs, the container's log mount), benchmark_type from
// SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE (else sa-bench). nil without it.
func measurementWindows(getenv func(string) string) *plan.Telemetry {
	dir := getenv(planner.EnvMeasurementWindowDir)
	if dir == "" {
		return nil
	}
	return &plan.Telemetry{WindowDir: dir, ResultRoot: cmp.Or(getenv(planner.EnvMeasurementWindowResultRoot), "/logs"),
		WindowBenchmarkType: getenv(planner.EnvMeasurementWindowType)}
}
