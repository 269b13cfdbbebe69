package steps

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
)

// pointWindow records one point's measurement window for the power package
// (docs/power.md) when the plan collects telemetry; every method is a no-op
// on a nil window, and a window that cannot be written never fails the
// benchmark: the package then lacks it and says so.
type pointWindow struct {
	w   *power.WindowWriter
	log io.Writer
}

func openWindow(pl *plan.Plan, resultPath string, pt plan.BenchPoint, log io.Writer) *pointWindow {
	t := pl.Telemetry
	if t == nil {
		return nil
	}
	dir, typ := t.WindowDir, t.WindowBenchmarkType
	if dir == "" {
		dir = filepath.Join(t.PowerDir, power.WindowsDir)
	}
	if typ == "" {
		typ = power.BenchmarkTypeSABench
	}
	w, err := power.NewWindowWriter(dir, t.ResultRoot, resultPath, typ, pt.Concurrency)
	if err != nil || w == nil {
		logWindow(log, "point c%d: no measurement window: %v", pt.Concurrency, err)
		return nil
	}
	pw := &pointWindow{w: w, log: log}
	if err := w.MarkRunning(float64(time.Now().UnixNano()) / 1e9); err != nil {
		logWindow(log, "point c%d: measurement window: %v", pt.Concurrency, err)
	}
	return pw
}

// close publishes the boundary the saved result was computed from:
// completed for a valid result, failed (same boundary, with the reason) for
// one that failed validation. A point without a result keeps its window
// running; the collector turns it into interrupted.
func (pw *pointWindow) close(res *results.SABenchResult, invalid error) {
	if pw == nil || res == nil || res.Duration <= 0 || res.BenchmarkEndTimeUnix <= res.BenchmarkStartTimeUnix {
		return
	}
	var err error
	if invalid == nil {
		err = pw.w.MarkCompleted(res.BenchmarkStartTimeUnix, res.BenchmarkEndTimeUnix, res.Duration)
	} else {
		err = pw.w.MarkFailed(res.BenchmarkStartTimeUnix, res.BenchmarkEndTimeUnix, res.Duration, invalid.Error())
	}
	if err != nil {
		logWindow(pw.log, "measurement window %s: %v", pw.w.Path(), err)
	}
}

func logWindow(w io.Writer, format string, args ...any) {
	if w != nil {
		fmt.Fprintf(w, format+"\n", args...)
	}
}
