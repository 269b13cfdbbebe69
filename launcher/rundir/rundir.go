// Package rundir owns a run directory: where each file of a run lives and
// how it is read and written. A run directory sits on the shared filesystem
// under the profile's runs_dir; the launcher on the login node writes the
// plan and the submit journal into it, the driver inside the allocation
// writes status, outcome, step specs and logs, the bench step writes the
// progress file, and every reader (run, attach, logs, runs ls) goes through
// this package instead of naming files itself.
//
//	<root>/plan.json             the plan (plan.Plan)
//	<root>/bin/slurmbench        the binary the job runs
//	<root>/job.sh                the batch script, for the record
//	<root>/submit.json           the submit journal (Journal)
//	<root>/.lock                 held by the runner following the job
//	<root>/status.json           what the driver does now (Status)
//	<root>/outcome.json          how the run ended (Outcome)
//	<root>/steps/<name>.json     each process's spec, as the driver ran it
//	<root>/logs/                 batch.out, driver.log, one log per process
//	<root>/results/              results; bench_progress.json (BenchProgress)
package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Names inside a run directory.
const (
	PlanName      = "plan.json"
	BinaryName    = "bin/slurmbench"
	JobScriptName = "job.sh"
	JournalName   = "submit.json"
	LockName      = ".lock"
	StatusName    = "status.json"
	OutcomeName   = "outcome.json"
	StepsName     = "steps"
	LogsName      = "logs"
	ResultsName   = "results"
	DriverLogName = "driver.log"          // in logs/
	BatchOutName  = "batch.out"           // in logs/
	ProgressName  = "bench_progress.json" // in results/
)

// Layout names a run directory's files. It is part of the plan, so the
// driver and the in-job steps find every file from the plan alone.
type Layout struct {
	Logs      string `json:"logs"`
	Results   string `json:"results"`
	Status    string `json:"status"`
	Outcome   string `json:"outcome"`
	DriverLog string `json:"driver_log"`
	BatchOut  string `json:"batch_out"`
	Steps     string `json:"steps"`
	Progress  string `json:"bench_progress"`
	Journal   string `json:"journal"`
}

// New is the layout of the run directory at root (an absolute path).
func New(root string) Layout {
	logs, results := filepath.Join(root, LogsName), filepath.Join(root, ResultsName)
	return Layout{
		Logs:      logs,
		Results:   results,
		Status:    filepath.Join(root, StatusName),
		Outcome:   filepath.Join(root, OutcomeName),
		DriverLog: filepath.Join(logs, DriverLogName),
		BatchOut:  filepath.Join(logs, BatchOutName),
		Steps:     filepath.Join(root, StepsName),
		Progress:  filepath.Join(results, ProgressName),
		Journal:   filepath.Join(root, JournalName),
	}
}

// PlanPath, BinaryPath, JobScriptPath and LockPath name root's files that
// the plan itself points to (or that outlive any one plan).
func PlanPath(root string) string      { return filepath.Join(root, PlanName) }
func BinaryPath(root string) string    { return filepath.Join(root, BinaryName) }
func JobScriptPath(root string) string { return filepath.Join(root, JobScriptName) }
func LockPath(root string) string      { return filepath.Join(root, LockName) }

// StepSpec is where the driver writes the spec of the process name.
func (l Layout) StepSpec(name string) string {
	return filepath.Join(l.Steps, name+".json")
}

// Fingerprints is the directory every step's `slurmbench exec` shim writes
// its fingerprint into (package fingerprint), read into the manifest.
func (l Layout) Fingerprints() string {
	return filepath.Join(l.Steps, "fingerprint")
}

// Dirs are the directories a run needs before its job starts.
func (l Layout) Dirs() []string { return []string{l.Logs, l.Results, l.Steps} }

// ErrExists is wrapped by Create when the run directory is already there.
var ErrExists = fs.ErrExist

// Create makes the run directory root and its subdirectories. Making root
// itself is exclusive (mkdir, not mkdir -p): of two runs that pick the same
// run id at once exactly one gets the directory, the other an error that
// wraps fs.ErrExist.
func Create(root string) error {
	if err := os.MkdirAll(filepath.Dir(root), 0o755); err != nil {
		return fmt.Errorf("creating the runs directory: %w", err)
	}
	if err := os.Mkdir(root, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("run directory %s already exists: %w", root, fs.ErrExist)
		}
		return fmt.Errorf("creating run directory: %w", err)
	}
	l := New(root)
	for _, d := range append(l.Dirs(), filepath.Dir(BinaryPath(root))) {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating run directory: %w", err)
		}
	}
	return nil
}

// IsRunDir reports whether dir holds a plan: the test attach and logs use to
// accept a job's working directory as a slurmbench run.
func IsRunDir(dir string) error {
	if _, err := os.Stat(PlanPath(dir)); err != nil {
		return fmt.Errorf("%s is not a slurmbench run directory: %w", dir, err)
	}
	return nil
}
