// Package urlmode is `slurmbench bench --url` and `eval --url`: the in-job
// steps against an endpoint that is already serving, from a plan built out
// of flags (steps.URLBench, steps.URLEval), then the run's collection, Pareto
// picture and summary, so results, names and the table are a run's.
package endpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/progress"
	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/clients/sabench"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/job/steps"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// Endpoint kinds of --endpoint.
const (
	EndpointCompletions = "completions"
	EndpointChat        = "chat"
)

// BenchOptions are `bench --url`'s.
type BenchOptions struct {
	launch.IO
	URLBench steps.URLBench
	// Conc is the --conc text, parsed here.
	Conc string
	// Endpoint is EndpointCompletions or EndpointChat.
	Endpoint       string
	ResultFilename string
	// Overwrite allows an --out that already holds files.
	Overwrite bool
	// Warmups is --warmups (nil: not given, the client's default).
	Warmups *int
}

// Bench runs the points, collects and stages them, saves the Pareto
// picture and prints the summary.
func Bench(ctx context.Context, o BenchOptions) error {
	u := o.URLBench
	var err error
	if u.Concurrencies, err = parseConc(o.Conc); err != nil {
		return err
	}
	chat := false
	switch o.Endpoint {
	case EndpointCompletions, "":
	case EndpointChat:
		chat = true
	default:
		return exitcode.Errorf(exitcode.Config, "--endpoint %q: want %s or %s", o.Endpoint, EndpointCompletions, EndpointChat)
	}
	if u.Warmups = -1; o.Warmups != nil {
		if u.Warmups = *o.Warmups; u.Warmups < 0 {
			return exitcode.Errorf(exitcode.Config, "--warmups %d: must not be negative", u.Warmups)
		}
	}
	given := u.Out
	if u.Out, err = OutDir(u.Out, "bench", o.Overwrite, time.Now()); err != nil {
		return err
	}
	pl, err := u.Plan()
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	pl.Telemetry = MeasurementWindows(os.Getenv)
	name := o.ResultFilename
	if err := runner.CheckStaging(pl, runner.CollectOptions{ResultFilename: name}); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if given == "" {
		fmt.Fprintf(o.Stderr, "results into %s (--out)\n", u.Out)
	}
	live := progress.New(o.Stderr)
	opts := steps.BenchOptions{
		Frontend: strings.TrimSuffix(u.URL, "/"), Out: o.Stderr, Log: o.Stderr,
		Chat: chat, Probe: true, ProgressInterval: live.Interval, Progress: pointProgress(live, len(pl.Points)),
	}
	done, benchErr := steps.Bench(ctx, pl, opts)
	live.End()
	if len(done) == 0 {
		return StepError(ctx, benchErr, exitcode.Benchmark, o.Interrupted) // refused before the first point: nothing to show
	}
	co := runner.CollectOptions{ResultFilename: name, Provenance: results.Provenance{SlurmbenchVersion: o.Version}}
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
	return summary(o.IO, pl, col, StepError(ctx, cmp.Or(benchErr, colErr), exitcode.Benchmark, o.Interrupted))
}

func parseConc(s string) ([]int, error) {
	concs, err := recipe.ParseConcurrencies(s)
	if err != nil {
		return nil, exitcode.Errorf(exitcode.Config, "--conc %q: %v", s, err)
	}
	return concs, nil
}

// StepError gives a step's failure its exit code: a probe refusal is bad
// input (exit 2, before anything was timed); an interrupt is the signal's;
// a dead frontend is the engine layer; the rest is the step's own.
func StepError(ctx context.Context, err error, own exitcode.Code, interrupted func() exitcode.Code) error {
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
	var below *gsm8k.ThresholdError
	if errors.As(err, &below) {
		return exitcode.With(exitcode.Eval, err)
	}
	return exitcode.With(steps.ExitCode(ctx, err, own, interrupted), err)
}

// EvalOptions are `eval --url`'s.
type EvalOptions struct {
	launch.IO
	URLEval              steps.URLEval
	ModelPrefix          string
	Limit, ContextLength int
	Overwrite            bool // allows an --out that already holds files
}

// Eval runs gsm8k against the endpoint and prints the summary.
func Eval(ctx context.Context, o EvalOptions) error {
	e := o.URLEval
	given := e.Out
	var err error
	if e.Out, err = OutDir(e.Out, "eval", o.Overwrite, time.Now()); err != nil {
		return err
	}
	pl, err := e.Plan()
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if given == "" {
		fmt.Fprintf(o.Stderr, "results into %s (--out)\n", e.Out)
	}
	live := progress.New(o.Stderr)
	var meter *progress.Meter
	opts := steps.EvalOptions{
		Frontend: strings.TrimSuffix(e.URL, "/"), ModelPrefix: o.ModelPrefix,
		Limit: o.Limit, ContextLength: o.ContextLength,
		Out: o.Stderr, Log: o.Stderr,
		Progress: func(done, total int) {
			if meter != nil {
				meter.Set(done, total)
			}
		},
	}
	if err := steps.CheckEval(pl, opts); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	meter = live.Start("gsm8k", "documents", 0)
	_, err = steps.Eval(ctx, pl, opts)
	meter.Stop()
	var below *gsm8k.ThresholdError
	if err != nil && !errors.As(err, &below) {
		if _, statErr := os.Stat(pl.Eval.ResultDir); statErr != nil {
			return StepError(ctx, err, exitcode.Eval, o.Interrupted) // nothing to show
		}
	}
	err = StepError(ctx, err, exitcode.Eval, o.Interrupted)
	return summary(o.IO, pl, nil, err)
}

// summary prints the table a run prints (and, in GitHub Actions, writes
// the same step summary and outputs), then returns err.
func summary(o launch.IO, pl *plan.Plan, col *runner.Collected, err error) error {
	sum := runner.Summary(pl, &runner.Result{Collected: col}, err)
	sum.RunDir = pl.Layout.Results
	if perr := launch.PrintSummary(o, sum); perr != nil {
		return perr
	}
	return err
}

// pointProgress shows a running point: done of total with %, rate and
// ETA, failures, tokens per second and the median TTFT once there is one.
func pointProgress(d *progress.Display, n int) func(int, plan.BenchPoint, sabench.Progress) {
	return func(index int, pt plan.BenchPoint, s sabench.Progress) {
		d.Show(PointLine(d, index, n, pt, s), s.Final)
	}
}

// PointLine is one point's state, e.g. "point 1/2 c8 benchmark: 50% 40/80
// requests, 13.3/s, ETA 3s, 0 failed, 1234 tok/s, p50 TTFT 51.2 ms".
func PointLine(d *progress.Display, index, n int, pt plan.BenchPoint, s sabench.Progress) string {
	line := fmt.Sprintf("point %d/%d c%d %s: %s, %d failed", index, n, pt.Concurrency, s.Phase,
		d.Line(s.Finished, s.Total, "requests", s.Elapsed), s.Failed)
	if sec := s.Elapsed.Seconds(); sec > 0 && s.Tokens > 0 {
		line += fmt.Sprintf(", %.0f tok/s", float64(s.Tokens)/sec)
	}
	if s.MedianTTFT > 0 {
		line += fmt.Sprintf(", p50 TTFT %.1f ms", float64(s.MedianTTFT)/float64(time.Millisecond))
	}
	return line
}

// OutDir is the results directory of a URL-mode command: --out, or a fresh
// <kind>-<UTC time> directory here when none is given. Checked before any
// request: a file is refused (exit 2), and so is a directory that already
// holds files unless overwrite (a second run would replace some of the
// first's points and leave the others beside them).
func OutDir(out, kind string, overwrite bool, now time.Time) (string, error) {
	if out == "" {
		out = kind + "-" + now.UTC().Format("20060102T150405Z")
	}
	st, err := os.Stat(out)
	switch {
	case err == nil && !st.IsDir():
		return "", exitcode.Errorf(exitcode.Config, "--out %s is a file, not a directory", out)
	case err == nil && !overwrite:
		entries, rerr := os.ReadDir(out)
		if rerr != nil {
			return "", exitcode.Errorf(exitcode.Config, "--out %s: %v", out, rerr)
		}
		if len(entries) > 0 {
			return "", exitcode.Errorf(exitcode.Config, "--out %s already holds %d entries (%s, ...): give a new directory, or --overwrite to write into it", out, len(entries), entries[0].Name())
		}
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", exitcode.Errorf(exitcode.Config, "--out %s: %v", out, err)
	}
	return out, nil
}

// MeasurementWindows is srtctl's window contract for a client run inside a
// custom benchmark (its sa-bench client's measurement_window.py): with
// SRT_MEASUREMENT_WINDOW_DIR set, each measured point writes its window
// there, result_path relative to SRT_MEASUREMENT_WINDOW_RESULT_ROOT (else
// /logs, the container's log mount), benchmark_type from
// SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE (else sa-bench). nil without it.
func MeasurementWindows(getenv func(string) string) *plan.Telemetry {
	dir := getenv(plan.EnvMeasurementWindowDir)
	if dir == "" {
		return nil
	}
	return &plan.Telemetry{WindowDir: dir, ResultRoot: cmp.Or(getenv(plan.EnvMeasurementWindowResultRoot), "/logs"),
		WindowBenchmarkType: getenv(plan.EnvMeasurementWindowType)}
}
