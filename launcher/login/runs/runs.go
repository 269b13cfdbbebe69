// Package runs finds the runs under a profile's runs_dir again: what each
// ran, its job, how far it got and where its results were staged, read
// through the run directory's own files (package rundir), and removes old
// ones without ever touching a run whose job may still be running.
package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
)

// Run is one run directory, as its files describe it.
type Run struct {
	ID  string `json:"run_id"`
	Dir string `json:"dir"`
	// Recipe is the plan's name (the recipe's), RecipePath its file.
	Recipe     string `json:"recipe"`
	RecipePath string `json:"recipe_path,omitempty"`
	// JobName is the Slurm job name the plan gave its job (RUNNER_NAME in
	// a workflow), for cleanup.
	JobName string `json:"job_name,omitempty"`
	Nodes   int    `json:"nodes,omitempty"`
	JobID   string `json:"job_id,omitempty"`
	// State is where the run is: "prepared" (never submitted), "submitted",
	// the driver's phase while it runs, or "ended"; JobState is Slurm's
	// word for the job when it was asked (Refresh).
	State    string `json:"state"`
	JobState string `json:"job_state,omitempty"`
	// Active is true while the job may still run: submitted, no outcome,
	// and Slurm did not say it ended. Such a run is never removed.
	Active bool `json:"active"`
	// Outcome is outcome.json's result (succeeded, failed, cancelled).
	Outcome    rundir.Result `json:"outcome,omitempty"`
	FirstError string        `json:"first_error,omitempty"`
	// StagedDir is where the results were staged, if they were.
	StagedDir   string   `json:"staged_dir,omitempty"`
	StagedFiles []string `json:"staged_files,omitempty"`
	// Started is when the run was submitted (or prepared); LastActivity the
	// newest write to its plan, journal, status, outcome or driver log.
	Started      time.Time `json:"started"`
	LastActivity time.Time `json:"last_activity"`
	// Problems are files that exist but could not be read.
	Problems []string `json:"problems,omitempty"`
	// Held is set for a held deployment (slurmbench up) while it holds its
	// job: what serves, where, and what is queued.
	Held *rundir.Serving `json:"held,omitempty"`
	// InJob: the run was queued in the held deployment of job JobID
	// (run --in) rather than submitted as a job of its own.
	InJob bool `json:"in_job,omitempty"`
	// Provenance is the results manifest's, read by ReadProvenance (runs
	// show) only: listing thousands of runs does not open their manifests.
	Provenance *results.Provenance `json:"provenance,omitempty"`
}

// ReadProvenance reads the provenance of the run directory's results
// manifest; nil without error when the run wrote none (yet).
func ReadProvenance(dir string) (*results.Provenance, error) {
	path := filepath.Join(rundir.New(dir).Results, results.ManifestName)
	b, err := readlimit.ReadFile(path, readlimit.Default)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return &m.Provenance, nil
}

// Load reads the run directory dir. It fails only when dir is not a run
// directory (no plan.json); unreadable files become Problems.
func Load(dir string) (Run, error) {
	if err := rundir.IsRunDir(dir); err != nil {
		return Run{}, err
	}
	r := Run{ID: filepath.Base(dir), Dir: dir, State: "prepared"}
	note := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			r.Problems = append(r.Problems, err.Error())
		}
	}
	pl, err := plan.ReadPlan(rundir.PlanPath(dir))
	note(err)
	// The files are where the directory is now, whatever the plan says
	// (a run directory copied elsewhere is still readable).
	layout := rundir.New(dir)
	if pl != nil {
		r.ID, r.Recipe, r.RecipePath, r.Nodes, r.JobName = pl.RunID, pl.Name, pl.Recipe.Path, pl.Nodes, pl.Slurm.JobName
	}
	r.LastActivity = newest(rundir.PlanPath(dir), layout.Journal, layout.Status, layout.Outcome, layout.DriverLog, rundir.StagedPath(dir))
	r.Started = modTime(rundir.PlanPath(dir))

	j, err := rundir.ReadJournal(layout.Journal)
	note(err)
	// A journal that is there but cannot be read still says a submit was
	// attempted: the job may exist, its id unknown, so the run stays
	// active (gc keeps it) rather than passing for never submitted.
	submitted := !errors.Is(err, fs.ErrNotExist)
	switch {
	case err == nil:
		r.State, r.JobID, r.Active = "submitted", j.JobID, true
		if j.JobName != "" {
			r.JobName = j.JobName // what the submission used
		}
		if !j.Sending.IsZero() {
			r.Started = j.Sending
		}
	case submitted:
		r.State, r.Active = "submitted", true
	}
	st, err := rundir.ReadStatus(layout.Status)
	note(err)
	if err == nil {
		r.State, r.Active, r.Held = string(st.Phase), true, st.Serving
		if r.JobID == "" {
			r.JobID = st.JobID
		}
	}
	o, err := rundir.ReadOutcome(layout.Outcome)
	note(err)
	if err == nil {
		r.State, r.Active, r.Outcome, r.FirstError, r.Held = "ended", false, o.Result, o.FirstError, nil
		if r.JobID == "" {
			r.JobID = o.JobID
		}
	}
	r.InJob = !submitted && r.JobID != ""
	s, err := rundir.ReadStaged(rundir.StagedPath(dir))
	note(err)
	if err == nil {
		r.StagedDir, r.StagedFiles = s.Dir, s.Files
	}
	return r, nil
}

// List loads every run directory directly under runsDir, newest first.
// Entries that are not run directories (the squash cache, doctor's probe
// directory, symlinks) are skipped.
func List(runsDir string) ([]Run, error) {
	return ListContext(context.Background(), runsDir)
}

// ListContext is List that stops when ctx ends (a signal), with ctx's
// error.
func ListContext(ctx context.Context, runsDir string) ([]Run, error) {
	entries, err := os.ReadDir(runsDir)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	var out []Run
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("listing runs in %s: %w", runsDir, err)
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue // a symlink is not IsDir: gc must never follow one
		}
		r, err := Load(filepath.Join(runsDir, e.Name()))
		if err != nil {
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Started.Equal(out[j].Started) {
			return out[i].Started.After(out[j].Started)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// Find loads the run id (a directory name under runsDir) or, failing
// that, the one run whose job id is id.
func Find(ctx context.Context, runsDir, id string) (Run, error) {
	if dir, err := rundir.Path(runsDir, id); err == nil {
		if r, err := Load(dir); err == nil {
			return r, nil
		}
	}
	all, err := ListContext(ctx, runsDir)
	if err != nil {
		return Run{}, err
	}
	var found, own []Run
	for _, r := range all {
		if r.JobID == id {
			found = append(found, r)
			if !r.InJob {
				own = append(own, r)
			}
		}
	}
	if len(own) == 1 {
		// A held deployment's job also names the runs queued in it: the
		// job id means the run that submitted it.
		return own[0], nil
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Run{}, fmt.Errorf("no run %q in %s (slurmbench runs ls lists them)", id, runsDir)
	}
	return Run{}, fmt.Errorf("job %s belongs to %d runs in %s; name the run id", id, len(found), runsDir)
}

// JobState asks Slurm about job id: its state's name and whether it has
// ended. ended is also true when Slurm no longer knows the job (it ended
// long enough ago to be forgotten).
type JobState func(ctx context.Context, jobID string) (state string, ended bool, err error)

// Refresh asks Slurm about the run's job when the run's own files cannot
// tell whether it ended. A failed query leaves the run Active.
func (r *Run) Refresh(ctx context.Context, ask JobState) error {
	if ask == nil || !r.Active || r.JobID == "" {
		return nil
	}
	state, ended, err := ask(ctx, r.JobID)
	if err != nil {
		return fmt.Errorf("run %s: job %s: %w", r.ID, r.JobID, err)
	}
	r.JobState = state
	if ended {
		r.Active = false
	}
	return nil
}

func modTime(path string) time.Time {
	st, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime().UTC()
}

func newest(paths ...string) time.Time {
	var t time.Time
	for _, p := range paths {
		if m := modTime(p); m.After(t) {
			t = m
		}
	}
	return t
}
