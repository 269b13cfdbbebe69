package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
)

// Phase is a stage of the driver's run, in order.
type Phase string

const (
	PhaseStarting  Phase = "starting"
	PhaseHostSetup Phase = "host_setup" // commands on the nodes' bare hosts, before anything else
	PhaseInfra     Phase = "infra"
	PhasePrepare   Phase = "prepare" // steps that run to their end before the workers
	PhaseWorkers   Phase = "workers"
	PhaseFrontend  Phase = "frontend"
	PhaseHealth    Phase = "health"
	PhaseBenchmark Phase = "benchmark"
	PhaseEval      Phase = "eval"
	PhaseStopping  Phase = "stopping"
	PhaseDone      Phase = "done"
	PhaseFailed    Phase = "failed"
)

// Status is status.json: what the driver is doing now. The launcher on the
// login node follows a run by reading it.
type Status struct {
	Phase       Phase     `json:"phase"`
	Updated     time.Time `json:"updated"`
	JobID       string    `json:"job_id"`
	Hosts       []string  `json:"hosts,omitempty"`
	FrontendURL string    `json:"frontend_url,omitempty"`
	// Serving is set in a held deployment's status (slurmbench up).
	Serving   *Serving        `json:"serving,omitempty"`
	Health    *HealthStatus   `json:"health,omitempty"`
	Processes []ProcessStatus `json:"processes"`
}

// HealthStatus is the gate's last poll.
type HealthStatus struct {
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	PrefillSeen int    `json:"prefill_seen"`
	DecodeSeen  int    `json:"decode_seen"`
	PrefillWant int    `json:"prefill_expected"`
	DecodeWant  int    `json:"decode_expected"`
	LastError   string `json:"last_error,omitempty"`
	Ready       bool   `json:"ready"`
}

// ProcessStatus is one step's state.
type ProcessStatus struct {
	Name     string     `json:"name"`
	Role     string     `json:"role"`
	Host     string     `json:"host"`
	State    string     `json:"state"` // pending, running, exited, stopped
	ExitCode *int       `json:"exit_code,omitempty"`
	Started  *time.Time `json:"started,omitempty"`
	Ended    *time.Time `json:"ended,omitempty"`
	Log      string     `json:"log"`
}

// Result is how a run ended, the "result" of outcome.json.
type Result string

const (
	Succeeded Result = "succeeded"
	Failed    Result = "failed"
	Cancelled Result = "cancelled"
)

// Outcome is outcome.json: how the run ended and, on failure, why. The
// driver writes it; the runner writes one only when the driver could not
// (the job never started, or was cancelled under it).
type Outcome struct {
	Result     Result         `json:"result"`
	Phase      Phase          `json:"phase"` // phase reached
	Class      diagnose.Class `json:"class,omitempty"`
	Process    string         `json:"process,omitempty"`
	Host       string         `json:"host,omitempty"`
	ExitCode   *int           `json:"exit_code,omitempty"`
	FirstError string         `json:"first_error,omitempty"`
	Hint       string         `json:"hint,omitempty"`
	Message    string         `json:"message,omitempty"`
	LastLines  []string       `json:"last_lines,omitempty"`
	// RuntimeLog is enroot's own log from the failed step's output (pyxis
	// prints it on a container start failure; diagnose.RuntimeLog).
	RuntimeLog []string  `json:"runtime_log,omitempty"`
	Log        string    `json:"log,omitempty"`
	JobID      string    `json:"job_id"`
	Started    time.Time `json:"started"`
	Ended      time.Time `json:"ended"`
	// Held is set for a run a held deployment served (run --in).
	Held *HeldRun `json:"held,omitempty"`
}

// PointState is a benchmark point's state in the progress file.
type PointState string

const (
	StateRunning     PointState = "running"
	StateDone        PointState = "done"        // the point's result is valid
	StateInvalid     PointState = "invalid"     // kept, marked invalid, or missing
	StateInterrupted PointState = "interrupted" // the step was cancelled during the point
)

// BenchProgress is the progress file, rewritten at the start and end of
// every point, so the launcher can show "benchmark point k of n".
type BenchProgress struct {
	Point       int        `json:"point"` // 1-based
	Of          int        `json:"of"`
	Concurrency int        `json:"concurrency"`
	State       PointState `json:"state"`
	// Invalid lists the concurrencies of the points that failed so far.
	Invalid []int `json:"invalid,omitempty"`
}

// Journal is the submit journal, submit.json: written before the submit
// request leaves (run id, submit key, time) and again once the job id is
// known. A runner that dies between the two leaves the key, with which a
// later run or attach for the same run id finds the job instead of
// submitting a second one.
type Journal struct {
	RunID   string `json:"run_id"`
	JobName string `json:"job_name"`
	// SubmitKey is the marker the job's comment carries (slurm.SubmitResult).
	SubmitKey string `json:"submit_key"`
	// Sending is when the submit request was about to leave.
	Sending time.Time `json:"sending"`
	// JobID is set once slurmrestd (or the lookup by key) named the job.
	JobID     string    `json:"job_id,omitempty"`
	Submitted time.Time `json:"submitted,omitzero"`
	// Recovered: the id came from a lookup by key, not a submit answer.
	Recovered bool `json:"recovered,omitempty"`
}

func readJSON(path, what string, v any) error {
	b, err := readlimit.ReadFile(path, readlimit.Default)
	if err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decoding %s %s: %w", what, path, err)
	}
	return nil
}

// writeJSON replaces path atomically: readers never see half a file.
func writeJSON(path, what string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", what, err)
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), atomicfile.Options{Overwrite: true, Perm: 0o644}); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}

func ReadStatus(path string) (Status, error) {
	var s Status
	return s, readJSON(path, "status", &s)
}

func WriteStatus(path string, s Status) error { return writeJSON(path, "status", s) }

func ReadOutcome(path string) (Outcome, error) {
	var o Outcome
	return o, readJSON(path, "outcome", &o)
}

func WriteOutcome(path string, o Outcome) error { return writeJSON(path, "outcome", o) }

func ReadBenchProgress(path string) (BenchProgress, error) {
	var p BenchProgress
	return p, readJSON(path, "benchmark progress", &p)
}

func WriteBenchProgress(path string, p BenchProgress) error {
	return writeJSON(path, "benchmark progress", p)
}

// ReadJournal reads a submit journal; a missing one wraps fs.ErrNotExist
// (nothing was ever about to be submitted from this directory).
func ReadJournal(path string) (Journal, error) {
	var j Journal
	return j, readJSON(path, "submit journal", &j)
}

// WriteJournal writes the journal atomically and syncs it before returning:
// the submit must not leave before its key is on disk.
func WriteJournal(path string, j Journal) error {
	if j.SubmitKey == "" || j.RunID == "" {
		return errors.New("submit journal: run id and submit key are required")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing submit journal: %w", err)
	}
	return writeJSON(path, "submit journal", j)
}
