package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/clients/sabench"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
)

// DefaultSABenchScript is where benchmark_serving.py sits in an InferenceX checkout.
const DefaultSABenchScript = "utils/bench_serving/benchmark_serving.py"

// BenchOptions are what the bench step needs beyond the plan.
type BenchOptions struct {
	// Frontend is the serving endpoint, http://host:port (the driver has
	// substituted the head node's address).
	Frontend string
	// ProgressFile defaults to the plan's layout.bench_progress.
	ProgressFile string
	// Out gets one line per finished point; Log the in-flight progress and
	// the container client's output. Nil discards.
	Out, Log io.Writer
	// ProgressInterval is how often a running point logs; default
	// sabench.DefaultProgressInterval.
	ProgressInterval time.Duration

	// For the sa-bench client: the InferenceX checkout as the container sees
	// it (the working directory) and benchmark_serving.py, default
	// <Workspace>/DefaultSABenchScript.
	Workspace string
	Script    string
	// Exec runs benchmark_serving.py; default ExecOS.
	Exec ExecFunc

	// Chat makes the native client send chat completions (see
	// sabench.Config.Chat); a plan always benchmarks completions.
	Chat bool
	// Probe sends one short request before the first point and refuses an
	// endpoint the benchmark cannot measure (a *sabench.ProbeError): the
	// health gate of a run has no equivalent against an arbitrary URL.
	Probe bool
	// Progress, when set, replaces the per-interval log lines of the
	// native client; index is the point's 1-based position.
	Progress func(index int, pt plan.BenchPoint, p sabench.Progress)
	// Getenv reads the slow_down settings the driver filled in (default
	// os.Getenv); SlowDownClient sends its requests (default a plain client).
	Getenv         func(string) string
	SlowDownClient *http.Client
}

// PointResult is how one point ended.
type PointResult struct {
	Index int // 1-based
	Point plan.BenchPoint
	Path  string                 // the result file
	Res   *results.SABenchResult // nil when no result file was produced
	Err   error                  // nil when the point is valid
}

// PointsError names every point that is invalid or missing.
type PointsError struct {
	Of     int
	Failed []PointResult
}

func (e *PointsError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, p := range e.Failed {
		parts[i] = fmt.Sprintf("c%d (%s)", p.Point.Concurrency, pointReason(p.Err))
	}
	return fmt.Sprintf("benchmark: %d of %d points failed: %s", len(e.Failed), e.Of, strings.Join(parts, ", "))
}

// pointReason is the short why of a failed point.
func pointReason(err error) string {
	var inv *results.InvalidSABenchError
	if errors.As(err, &inv) {
		return strings.Join(inv.Reasons, "; ")
	}
	return err.Error()
}

// CheckBench reports what makes the plan's benchmark impossible to run with
// opts before anything is sent: a configuration error.
func CheckBench(pl *plan.Plan, opts BenchOptions) error {
	bm := pl.Benchmark
	var errs []error
	if bm.Type == "" || len(pl.Points) == 0 {
		errs = append(errs, errors.New("the plan has no benchmark points (eval only)"))
	}
	if !filepath.IsAbs(bm.ResultDir) {
		errs = append(errs, fmt.Errorf("benchmark result_dir %q is not absolute", bm.ResultDir))
	}
	if pl.Model.ServedName == "" {
		errs = append(errs, errors.New("model served_name is empty"))
	}
	if _, err := progressFile(pl, opts); err != nil {
		errs = append(errs, err)
	}
	rate, err := parseRequestRate(bm.RequestRate)
	if err != nil {
		errs = append(errs, err)
	}
	if bm.Client == profile.BenchSABench {
		if opts.Script == "" && opts.Workspace == "" {
			errs = append(errs, errors.New("the sa-bench client needs the InferenceX workspace (with "+DefaultSABenchScript+") or the script's path"))
		}
		if !math.IsInf(rate, 1) {
			errs = append(errs, fmt.Errorf("request rate %s: the sa-bench client runs at rate inf only (use the native client)", bm.RequestRate))
		}
		for _, pt := range pl.Points {
			if err := sabenchParams(pl, opts, pt).Check(); err != nil {
				errs = append(errs, fmt.Errorf("sa-bench point c%d: %w", pt.Concurrency, err))
				break
			}
		}
	}
	for _, pt := range pl.Points {
		if pt.ResultFile == "" || filepath.Base(pt.ResultFile) != pt.ResultFile {
			errs = append(errs, fmt.Errorf("point c%d: result file %q is not a base name", pt.Concurrency, pt.ResultFile))
		}
	}
	return errors.Join(errs...)
}

func progressFile(pl *plan.Plan, opts BenchOptions) (string, error) {
	if opts.ProgressFile != "" {
		return opts.ProgressFile, nil
	}
	if !filepath.IsAbs(pl.Layout.Progress) {
		return "", fmt.Errorf("layout.bench_progress %q is not absolute (or pass a progress file)", pl.Layout.Progress)
	}
	return pl.Layout.Progress, nil
}

// parseRequestRate reads the plan's request rate: "inf" (or empty) or a
// positive number of requests per second.
func parseRequestRate(s string) (float64, error) {
	if s == "" || strings.EqualFold(s, "inf") {
		return math.Inf(1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) {
		return 0, fmt.Errorf("request rate %q: want inf or a positive number", s)
	}
	return v, nil
}

// Bench runs every point of the plan in order and returns how each ended.
// A failed point does not stop the others (a lab wants as many points as
// the allocation can give); the error is then a *PointsError naming each.
// When ctx ends, the running point's result is kept marked partial, the
// remaining points are not started, and the error wraps ctx.Err(). An
// unreachable frontend is a *FrontendError.
func Bench(ctx context.Context, pl *plan.Plan, opts BenchOptions) ([]PointResult, error) {
	if err := CheckBench(pl, opts); err != nil {
		return nil, err
	}
	progressPath, _ := progressFile(pl, opts)
	if err := checkFrontend(ctx, opts.Frontend); err != nil {
		return nil, err
	}
	if opts.Probe && pl.Benchmark.Client == profile.BenchNative {
		if err := sabench.Probe(ctx, nativeConfig(pl, opts, pl.Points[0])); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(pl.Benchmark.ResultDir, 0o755); err != nil {
		return nil, fmt.Errorf("creating benchmark result directory: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(progressPath), 0o755); err != nil {
		return nil, fmt.Errorf("creating benchmark progress directory: %w", err)
	}
	out := orDiscard(opts.Out)
	n := len(pl.Points)
	var done []PointResult
	prog := rundir.BenchProgress{Of: n}
	for i, pt := range pl.Points {
		prog.Point, prog.Concurrency, prog.State = i+1, pt.Concurrency, rundir.StateRunning
		if err := rundir.WriteBenchProgress(progressPath, prog); err != nil {
			return done, err
		}
		stopSlowDown := startSlowDown(ctx, pl, opts)
		pr := runPoint(ctx, pl, opts, i+1, pt)
		stopSlowDown()
		done = append(done, pr)
		fmt.Fprintln(out, pointLine(pr, n))

		prog.State = rundir.StateDone
		if pr.Err != nil {
			prog.State = rundir.StateInvalid
			prog.Invalid = append(prog.Invalid, pt.Concurrency)
		}
		if ctx.Err() != nil {
			prog.State = rundir.StateInterrupted
		}
		if err := rundir.WriteBenchProgress(progressPath, prog); err != nil {
			return done, err
		}
		if err := ctx.Err(); err != nil {
			return done, fmt.Errorf("benchmark interrupted at point %d of %d (c%d): %w%s",
				i+1, n, pt.Concurrency, err, causeSuffix(ctx))
		}
	}
	var failed []PointResult
	for _, pr := range done {
		if pr.Err != nil {
			failed = append(failed, pr)
		}
	}
	if len(failed) > 0 {
		return done, &PointsError{Of: n, Failed: failed}
	}
	return done, nil
}

// causeSuffix names the signal that cancelled ctx, when it was one.
func causeSuffix(ctx context.Context) string {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, ctx.Err()) {
		return " (" + cause.Error() + ")"
	}
	return ""
}

// runPoint runs one point with the plan's client, then validates the result
// and keeps it, marked.
func runPoint(ctx context.Context, pl *plan.Plan, opts BenchOptions, index int, pt plan.BenchPoint) PointResult {
	pr := PointResult{Index: index, Point: pt, Path: filepath.Join(pl.Benchmark.ResultDir, pt.ResultFile)}
	var runErr error
	win := openWindow(pl, pr.Path, pt, opts.Log)
	if pl.Benchmark.Client == profile.BenchSABench {
		pr.Res, runErr = runContainerPoint(ctx, pl, opts, pt, pr.Path)
	} else {
		pr.Res, runErr = runNativePoint(ctx, pl, opts, index, pt)
	}
	if pr.Res == nil {
		pr.Err = fmt.Errorf("no result: %w", runErr)
		return pr
	}
	pr.Err = results.ValidateSABench(pr.Res, pt.NumPrompts)
	if err := results.WriteSABench(pr.Path, pr.Res); err != nil {
		pr.Err = errors.Join(pr.Err, err)
	} else {
		win.close(pr.Res, pr.Err)
	}
	// The per-request records are for people (the report's distributions,
	// results compare): a point whose result is written is not failed for
	// want of them.
	if pr.Res.Requests != nil {
		if err := results.WriteRequests(results.RequestsPath(pr.Path), pr.Res.Requests); err != nil && opts.Log != nil {
			fmt.Fprintf(opts.Log, "point c%d: %v\n", pt.Concurrency, err)
		}
	}
	return pr
}

// nativeConfig is the native client's configuration of one point.
func nativeConfig(pl *plan.Plan, opts BenchOptions, pt plan.BenchPoint) sabench.Config {
	bm := pl.Benchmark
	cfg := sabench.NewConfig(opts.Frontend, pl.Model.ServedName, bm.ISL, bm.OSL, pt.Concurrency)
	cfg.NumPrompts = pt.NumPrompts
	cfg.WarmupPrompts = pt.WarmupPrompts
	if pt.WarmupPrompts == 0 {
		cfg.WarmupPrompts = -1 // sabench reads 0 as "the default 2·C"
	}
	if bm.RangeRatio > 0 {
		cfg.RangeRatio = bm.RangeRatio
	}
	cfg.RequestRate, _ = parseRequestRate(bm.RequestRate) // checked by CheckBench
	cfg.ProgressInterval = opts.ProgressInterval
	cfg.Chat = opts.Chat
	cfg.Goodput = bm.Goodput
	return cfg
}

func runNativePoint(ctx context.Context, pl *plan.Plan, opts BenchOptions, index int, pt plan.BenchPoint) (*results.SABenchResult, error) {
	// sabench.Run closes the connections it opened when the point ends:
	// thousands of idle connections do not linger into the next point.
	cfg := nativeConfig(pl, opts, pt)
	if opts.Progress != nil {
		cfg.Progress = func(p sabench.Progress) { opts.Progress(index, pt, p) }
	} else if opts.Log != nil {
		n := len(pl.Points)
		cfg.Progress = func(p sabench.Progress) {
			fmt.Fprintf(opts.Log, "point %d/%d c%d %s: %d/%d finished, %d failed, %s\n",
				index, n, pt.Concurrency, p.Phase, p.Finished, p.Total, p.Failed, p.Elapsed.Round(time.Second))
		}
	}
	return sabench.Run(ctx, cfg)
}

func sabenchParams(pl *plan.Plan, opts BenchOptions, pt plan.BenchPoint) sabench.Params {
	bm := pl.Benchmark
	script := opts.Script
	if script == "" && opts.Workspace != "" {
		script = filepath.Join(opts.Workspace, DefaultSABenchScript)
	}
	return sabench.Params{
		Script: script, Model: pl.Model.ServedName, BaseURL: opts.Frontend,
		InputLen: bm.ISL, OutputLen: bm.OSL, RangeRatio: bm.RangeRatio,
		Concurrency: pt.Concurrency, NumPrompts: pt.NumPrompts, NumWarmups: pt.WarmupPrompts,
		ResultDir: bm.ResultDir, ResultFilename: pt.ResultFile, UseChatTemplate: bm.UseChatTemplate,
		// srt-slurm's bench.sh loads a custom tokenizer with remote code trusted.
		Tokenizer: bm.Tokenizer, TokenizerMode: bm.TokenizerMode, CustomTokenizer: bm.CustomTokenizer,
		TrustRemoteCode: bm.CustomTokenizer != "",
	}
}

// runContainerPoint runs benchmark_serving.py (this step already runs in the
// engine container) and reads the file it saved. The InferenceX copy exits
// non-zero after saving when more than 5 % of the requests failed, so the
// file is read whatever the exit status; only a file older than this run is
// ignored.
func runContainerPoint(ctx context.Context, pl *plan.Plan, opts BenchOptions, pt plan.BenchPoint, path string) (*results.SABenchResult, error) {
	run := opts.Exec
	if run == nil {
		run = ExecOS
	}
	log := orDiscard(opts.Log)
	// Whole seconds: some filesystems keep coarse modification times.
	start := time.Now().Truncate(time.Second)
	runErr := run(ctx, Command{Argv: sabench.ContainerArgv(sabenchParams(pl, opts, pt)), Dir: opts.Workspace, Stdout: log, Stderr: log})
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, errors.Join(runErr, fmt.Errorf("benchmark_serving.py saved no result: %w", err))
	case info.ModTime().Before(start):
		return nil, errors.Join(runErr, fmt.Errorf("benchmark_serving.py saved no new result (%s is from %s)", path, info.ModTime().Format(time.RFC3339)))
	}
	res, err := results.ReadSABench(path)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	if res.Client == "" {
		res.Client = string(profile.BenchSABench)
	}
	if runErr != nil {
		fmt.Fprintf(log, "benchmark_serving.py c%d: %v (its saved result is judged by the validity gate)\n", pt.Concurrency, runErr)
	}
	return res, nil
}

// pointLine is the one line a point leaves in the process log.
func pointLine(pr PointResult, n int) string {
	head := fmt.Sprintf("point %d/%d: c%d", pr.Index, n, pr.Point.Concurrency)
	if pr.Res == nil {
		return fmt.Sprintf("%s MISSING: %v", head, pr.Err)
	}
	r := pr.Res
	ttft, _ := r.Metric("ttft")
	tpot, _ := r.Metric("tpot")
	added := ""
	if a := r.AddedLatency; a != nil {
		// Only a server that stamps its chunks (the mock engine) gives it.
		added = fmt.Sprintf(", client-added latency median %.3f / p99 %.3f / max %.1f ms", a.Median, a.P99, a.Max)
	}
	stats := fmt.Sprintf("completed %d/%d, %.1f tok/s (%.1f output), median TTFT %.1f ms, median TPOT %.2f ms%s -> %s",
		r.Completed, pr.Point.NumPrompts, r.TotalTokenThroughput, r.OutputThroughput, ttft.Median, tpot.Median, added, filepath.Base(pr.Path))
	if pr.Err != nil {
		return fmt.Sprintf("%s INVALID: %s; %s", head, stats, pointReason(pr.Err))
	}
	return head + " valid: " + stats
}
