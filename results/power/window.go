package power

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// Window statuses.
const (
	WindowRunning     = "running"
	WindowCompleted   = "completed"
	WindowFailed      = "failed"
	WindowInterrupted = "interrupted"
)

// WindowRecord is one windows/<result stem>.json: the formal measurement
// window of one benchmark point, on the head node's clock. End, duration
// and reason are null exactly where the status says so.
type WindowRecord struct {
	SchemaVersion int      `json:"schema_version"`
	BenchmarkType string   `json:"benchmark_type"`
	ResultPath    string   `json:"result_path"`
	Concurrency   int      `json:"concurrency"`
	StartUnix     float64  `json:"benchmark_start_time_unix"`
	EndUnix       *float64 `json:"benchmark_end_time_unix"`
	Duration      *float64 `json:"duration"`
	ClockSource   string   `json:"clock_source"`
	Status        string   `json:"status"`
	Reason        *string  `json:"reason"`
}

// WindowWriter records one point's window. The benchmark step creates it
// only for a measured run (never a warmup) and only when the driver asked
// for windows.
type WindowWriter struct {
	path string
	rec  WindowRecord
}

// NewWindowWriter returns the writer for the result file resultFile (an
// absolute path under logRoot) into windowDir, or nil when windowDir is empty
// or the result lies outside logRoot (the consumer could not resolve it).
func NewWindowWriter(windowDir, logRoot, resultFile, benchmarkType string, concurrency int) (*WindowWriter, error) {
	if windowDir == "" {
		return nil, nil
	}
	if st, err := os.Stat(windowDir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("measurement window directory %s: not a directory", windowDir)
	}
	rel, err := filepath.Rel(logRoot, resultFile)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("result %s lies outside the log root %s, so no window can point at it", resultFile, logRoot)
	}
	stem := strings.TrimSuffix(filepath.Base(resultFile), filepath.Ext(resultFile))
	return &WindowWriter{
		path: filepath.Join(windowDir, stem+".json"),
		rec: WindowRecord{
			SchemaVersion: SchemaVersion, BenchmarkType: benchmarkType,
			ResultPath: filepath.ToSlash(rel), Concurrency: concurrency, ClockSource: ClockSource,
		},
	}, nil
}

// Path is the window file's path.
func (w *WindowWriter) Path() string { return w.path }

// MarkRunning records the formal start before the first measured request.
func (w *WindowWriter) MarkRunning(startUnix float64) error {
	w.rec.Status, w.rec.StartUnix = WindowRunning, startUnix
	w.rec.EndUnix, w.rec.Duration, w.rec.Reason = nil, nil, nil
	return w.write()
}

// MarkCompleted publishes the boundary the saved result was computed from:
// the same three numbers the result file carries.
func (w *WindowWriter) MarkCompleted(startUnix, endUnix, duration float64) error {
	w.rec.Status, w.rec.StartUnix = WindowCompleted, startUnix
	w.rec.EndUnix, w.rec.Duration, w.rec.Reason = &endUnix, &duration, nil
	return w.write()
}

// MarkFailed keeps a trustworthy boundary that produced no publishable result.
func (w *WindowWriter) MarkFailed(startUnix, endUnix, duration float64, reason string) error {
	w.rec.Status, w.rec.StartUnix = WindowFailed, startUnix
	w.rec.EndUnix, w.rec.Duration, w.rec.Reason = &endUnix, &duration, &reason
	return w.write()
}

func (w *WindowWriter) write() error {
	b, err := json.MarshalIndent(w.rec, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(w.path, append(b, '\n'), atomicfile.Options{Overwrite: true})
}

// ConvertRunning turns every window still "running" into "interrupted" with
// reason; end and duration stay null (a boundary is never invented). Call it
// only once the benchmark process is known to be gone.
func ConvertRunning(windowsDir, reason string) (int, error) {
	entries, err := os.ReadDir(windowsDir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() || path.Ext(e.Name()) != ".json" {
			continue
		}
		p := filepath.Join(windowsDir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var rec WindowRecord
		if json.Unmarshal(b, &rec) != nil || rec.Status != WindowRunning {
			continue
		}
		rec.Status, rec.EndUnix, rec.Duration, rec.Reason = WindowInterrupted, nil, nil, &reason
		out, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			return n, err
		}
		if err := atomicfile.WriteFile(p, append(out, '\n'), atomicfile.Options{Overwrite: true}); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// IsWindowsDir reports whether dir is a power package's windows/ directory
// (beside samples.csv): its files are named after result files, and a tool
// that looks for results by name must pass over them.
func IsWindowsDir(dir string) bool {
	if filepath.Base(dir) != WindowsDir {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(dir), SamplesFile))
	return err == nil
}
