package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// A held deployment (slurmbench up) takes its work through files in its run
// directory, the one channel the login node and the allocation share:
//
//	<held>/requests/<queued>-<run id>.json   a run queued by run --in (Request)
//	<held>/requests/taken/                   requests the driver has taken
//	<held>/down.json                         slurmbench down asked it to stop (Down)
//	<run>/cancel.json                        the queued run's runner was interrupted
//
// The driver takes requests in name order, which is queueing order, and
// writes each run's status and outcome into that run's own directory.
const (
	RequestsName = "requests"
	TakenName    = "taken" // in requests/
	DownName     = "down.json"
	CancelName   = "cancel.json"
)

// Phases only a held deployment and the runs queued on it go through.
const (
	// PhaseQueued: a run waits for the held deployment to take it.
	PhaseQueued Phase = "queued"
	// PhaseServing: the held topology passed its health gate and serves.
	PhaseServing Phase = "serving"
	// PhaseIdle: the allocation is held with no topology up (a server
	// exited); the next queued run starts its own.
	PhaseIdle Phase = "idle"
)

// Serving is the held deployment's part of status.json.
type Serving struct {
	// Endpoint is the frontend's URL while a topology serves.
	Endpoint string `json:"endpoint,omitempty"`
	// RunID is the run whose topology serves ("" when idle).
	RunID string    `json:"run_id,omitempty"`
	Since time.Time `json:"since,omitzero"`
	// Running is the queued run being run now; Queue the runs waiting.
	Running string   `json:"running,omitempty"`
	Queue   []string `json:"queue,omitempty"`
	// Runs counts the queued runs taken so far.
	Runs int `json:"runs"`
	// LastError is why the topology went down, when it did.
	LastError string `json:"last_error,omitempty"`
}

// HeldRun says how a held deployment served a queued run (its outcome's
// Held; the allocation is the outcome's JobID): the run's place among the
// deployment's runs and whether it ran on the held servers or restarted
// them in place, with the restart's times.
type HeldRun struct {
	// Run counts the deployment's runs, this one included.
	Run int `json:"run"`
	// Servers is "held" (the servers that served ran this run as they
	// were), "restarted" (other servers replaced them in place) or
	// "started" (none served: this run started its own).
	Servers string `json:"servers"`
	// Restart counts the deployment's restarts, this one included (0:
	// the run restarted nothing).
	Restart int `json:"restart,omitempty"`
	// Kept are the processes that stayed across the restart (infra whose
	// settings matched, prepare steps already run: the staged model).
	Kept []string `json:"kept,omitempty"`
	// StopSeconds is how long stopping the replaced processes took,
	// CleanSeconds proving the nodes clean, StartSeconds starting the new
	// servers to a passed health gate.
	StopSeconds  float64 `json:"stop_seconds,omitempty"`
	CleanSeconds float64 `json:"clean_seconds,omitempty"`
	StartSeconds float64 `json:"start_seconds,omitempty"`
}

// Request asks a held deployment to run a planned run.
type Request struct {
	RunID string `json:"run_id"`
	// Plan is the run's plan.json (absolute path on the shared filesystem).
	Plan   string    `json:"plan"`
	Queued time.Time `json:"queued"`
}

// Stop is down.json (stop the held deployment) and cancel.json (stop this
// queued run): when it was asked for.
type Stop struct {
	Requested time.Time `json:"requested"`
}

// RequestsDir is where held deployment root takes requests.
func RequestsDir(root string) string { return filepath.Join(root, RequestsName) }

// QueueRequest writes r into held deployment root's queue and returns the
// request file's path. The name starts with the queueing time, so name
// order is queue order.
func QueueRequest(root string, r Request) (string, error) {
	if r.RunID == "" || !filepath.IsAbs(r.Plan) {
		return "", fmt.Errorf("queueing a run: run id and an absolute plan path are required")
	}
	if r.Queued.IsZero() {
		r.Queued = time.Now().UTC()
	}
	dir := RequestsDir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("queueing run %s: %w", r.RunID, err)
	}
	path := filepath.Join(dir, r.Queued.Format("20060102T150405.000000000Z")+"-"+r.RunID+".json")
	return path, writeJSON(path, "request", r)
}

// PendingRequests lists held deployment root's queued request files, in
// queue order.
func PendingRequests(root string) ([]string, error) {
	ents, err := os.ReadDir(RequestsDir(root))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the request queue: %w", err)
	}
	var out []string
	for _, e := range ents {
		// atomicfile's temporary files start with a dot.
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") && !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(RequestsDir(root), e.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// TakeRequest reads a queued request and moves it to requests/taken/, so
// it runs once even if the driver restarts its loop.
func TakeRequest(path string) (Request, error) {
	var r Request
	if err := readJSON(path, "request", &r); err != nil {
		return r, err
	}
	taken := filepath.Join(filepath.Dir(path), TakenName)
	if err := os.MkdirAll(taken, 0o755); err != nil {
		return r, fmt.Errorf("taking request %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(path, filepath.Join(taken, filepath.Base(path))); err != nil {
		return r, fmt.Errorf("taking request %s: %w", filepath.Base(path), err)
	}
	return r, nil
}

// RequestDown asks held deployment root to stop.
func RequestDown(root string) error {
	return writeJSON(filepath.Join(root, DownName), "down request", Stop{Requested: time.Now().UTC()})
}

// DownRequested reports whether held deployment root was asked to stop.
func DownRequested(root string) bool {
	_, err := os.Stat(filepath.Join(root, DownName))
	return err == nil
}

// RequestCancel tells the held deployment running (or about to run) run
// root that its runner gave up: the run is stopped and not started.
func RequestCancel(root string) error {
	return writeJSON(filepath.Join(root, CancelName), "cancel request", Stop{Requested: time.Now().UTC()})
}

// CancelRequested reports whether run root's runner gave up on it.
func CancelRequested(root string) bool {
	_, err := os.Stat(filepath.Join(root, CancelName))
	return err == nil
}
