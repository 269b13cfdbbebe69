package driver

import (
	"encoding/json"
	"os"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
)

// Phases of a run, in order.
const (
	PhaseStarting  = "starting"
	PhaseInfra     = "infra"
	PhaseWorkers   = "workers"
	PhaseFrontend  = "frontend"
	PhaseHealth    = "health"
	PhaseBenchmark = "benchmark"
	PhaseEval      = "eval"
	PhaseStopping  = "stopping"
	PhaseDone      = "done"
	PhaseFailed    = "failed"
)

// Status is status.json: what the driver is doing now. The launcher on the
// login node follows a run by reading it.
type Status struct {
	Phase       string          `json:"phase"`
	Updated     time.Time       `json:"updated"`
	JobID       string          `json:"job_id"`
	Hosts       []string        `json:"hosts,omitempty"`
	FrontendURL string          `json:"frontend_url,omitempty"`
	Health      *HealthStatus   `json:"health,omitempty"`
	Processes   []ProcessStatus `json:"processes"`
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

// Outcome is outcome.json: how the run ended and, on failure, why.
type Outcome struct {
	Result     string         `json:"result"` // succeeded, failed, cancelled
	Phase      string         `json:"phase"`  // phase reached
	Class      diagnose.Class `json:"class,omitempty"`
	Process    string         `json:"process,omitempty"`
	Host       string         `json:"host,omitempty"`
	ExitCode   *int           `json:"exit_code,omitempty"`
	FirstError string         `json:"first_error,omitempty"`
	Hint       string         `json:"hint,omitempty"`
	Message    string         `json:"message,omitempty"`
	LastLines  []string       `json:"last_lines,omitempty"`
	Log        string         `json:"log,omitempty"`
	JobID      string         `json:"job_id"`
	Started    time.Time      `json:"started"`
	Ended      time.Time      `json:"ended"`
}

// statusFile serialises status writes.
type statusFile struct {
	mu   sync.Mutex
	path string
	s    Status
}

func (f *statusFile) update(fn func(*Status)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.s)
	f.s.Updated = time.Now().UTC()
	b, err := json.MarshalIndent(f.s, "", "  ")
	if err == nil {
		err = atomicfile.WriteFile(f.path, append(b, '\n'), atomicfile.Options{Overwrite: true, Perm: 0o644})
	}
	if err != nil {
		// A status file is a convenience for watchers; the run goes on.
		os.Stderr.WriteString("slurmbench driver: writing status: " + err.Error() + "\n")
	}
}

// WriteOutcome writes outcome.json atomically.
func WriteOutcome(path string, o Outcome) error {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), atomicfile.Options{Overwrite: true, Perm: 0o644})
}

// ReadStatus and ReadOutcome are for the launcher side.
func ReadStatus(path string) (Status, error) {
	var s Status
	b, err := os.ReadFile(path)
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

func ReadOutcome(path string) (Outcome, error) {
	var o Outcome
	b, err := os.ReadFile(path)
	if err != nil {
		return o, err
	}
	return o, json.Unmarshal(b, &o)
}
