package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// GCOptions say which runs to remove.
type GCOptions struct {
	RunsDir string
	// OlderThan: only runs whose last activity is at least this old.
	OlderThan time.Duration
	// Ask tells whether a submitted run's job ended. Without it, a run with
	// a job and no outcome is kept: nothing else can prove it ended.
	Ask JobState
	// Delete removes the directories; false only reports what would go.
	Delete bool
	Now    time.Time // default time.Now()
}

// Decision is what GC did (or would do) with one run.
type Decision struct {
	Run     Run    `json:"run"`
	Remove  bool   `json:"remove"`
	Why     string `json:"why"`
	Removed bool   `json:"removed,omitempty"` // Delete was set and it is gone
}

// GC decides for every run under RunsDir and, with Delete, removes the ones
// it may: old enough, and certainly not running — ended by its outcome, or
// by Slurm's word, or never submitted. A run a slurmbench process holds the
// lock of is kept too. Errors removing one run do not stop the others.
//
// A run a held deployment serves or has queued, and a run queued in a held
// deployment (run --in) whose job is not confirmed ended, is kept too: the
// held job's servers write their logs and step files into it.
//
// ctx ending (SIGINT) stops GC before the next run: what was removed is
// reported, the rest kept.
func GC(ctx context.Context, o GCOptions) ([]Decision, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	all, err := ListContext(ctx, o.RunsDir)
	if err != nil {
		return nil, err
	}
	// A held deployment's runs are kept while its job may run: ask first.
	for i := range all {
		if all[i].Held != nil && all[i].Active && ctx.Err() == nil {
			_ = all[i].Refresh(ctx, o.Ask) // a failed query keeps it Active
		}
	}
	live := heldRuns(all)
	heldJobs := map[string]bool{} // held job id -> not confirmed ended
	var out []Decision
	var errs []error
	for _, r := range all {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("runs gc stopped before %s: %w", r.ID, err))
			break
		}
		d := decide(ctx, r, o)
		if d.Remove {
			if why := live[r.ID]; why != "" {
				d.Remove, d.Why = false, why
			} else if r.InJob {
				if why := heldJobLive(ctx, r.JobID, all, o.Ask, heldJobs); why != "" {
					d.Remove, d.Why = false, why
				}
			}
		}
		if d.Remove && o.Delete {
			// Under the run's lock, the run must still be what was
			// judged: a rerun or attach that started meanwhile keeps it.
			unchanged := func() error {
				now, err := Load(r.Dir)
				if err != nil {
					return fmt.Errorf("%s: %w; kept", r.Dir, err)
				}
				if now.State != r.State || now.JobID != r.JobID || !now.LastActivity.Equal(r.LastActivity) {
					return fmt.Errorf("%s changed while gc looked at it (now %s); kept", r.Dir, now.State)
				}
				return nil
			}
			if err := remove(ctx, r.Dir, unchanged); err != nil {
				d.Remove, d.Why = false, err.Error()
				errs = append(errs, err)
			} else {
				d.Removed = true
			}
		}
		out = append(out, d)
	}
	return out, errors.Join(errs...)
}

func decide(ctx context.Context, r Run, o GCOptions) Decision {
	d := Decision{Run: r}
	age := o.Now.Sub(r.LastActivity)
	if age < o.OlderThan {
		d.Why = fmt.Sprintf("last activity %s ago, younger than %s", age.Round(time.Minute), o.OlderThan)
		return d
	}
	if r.Active {
		if r.JobID == "" {
			d.Why = "submitted, but no job id was recorded: the job may exist (slurmbench attach finds it)"
			return d
		}
		if o.Ask == nil {
			d.Why = fmt.Sprintf("job %s has no outcome and Slurm was not asked (give --profile)", r.JobID)
			return d
		}
		if err := d.Run.Refresh(ctx, o.Ask); err != nil {
			d.Why = "kept: " + err.Error()
			return d
		}
		if d.Run.Active {
			d.Why = fmt.Sprintf("job %s is %s", r.JobID, d.Run.JobState)
			return d
		}
	}
	d.Remove = true
	switch {
	case r.Outcome != "":
		d.Why = fmt.Sprintf("ended (%s) %s ago", r.Outcome, age.Round(time.Minute))
	case d.Run.JobState != "":
		d.Why = fmt.Sprintf("job %s ended (%s) %s ago", r.JobID, d.Run.JobState, age.Round(time.Minute))
	default:
		d.Why = fmt.Sprintf("never submitted, %s ago", age.Round(time.Minute))
	}
	return d
}

// heldRuns names the runs a held deployment whose job may still run serves,
// runs or has queued, each with why it is kept.
func heldRuns(all []Run) map[string]string {
	live := map[string]string{}
	for _, h := range all {
		if h.Held == nil || !h.Active {
			continue
		}
		note := func(id, what string) {
			if id != "" && id != h.ID {
				live[id] = fmt.Sprintf("held deployment %s (job %s) %s it", h.ID, h.JobID, what)
			}
		}
		note(h.Held.RunID, "serves")
		note(h.Held.Running, "is running")
		for _, q := range h.Held.Queue {
			note(q, "has queued")
		}
	}
	return live
}

// heldJobLive says why a run queued in held job id is kept, or "" once that
// job is confirmed ended: by its deployment's run directory, or by Slurm.
// Answers are remembered in seen (id -> why).
func heldJobLive(ctx context.Context, id string, all []Run, ask JobState, seen map[string]bool) string {
	live, ok := seen[id]
	if !ok {
		live = true
		for _, h := range all {
			if h.JobID == id && !h.InJob {
				live = h.Active
			}
		}
		if live && ask != nil {
			if _, ended, err := ask(ctx, id); err == nil && ended {
				live = false
			}
		}
		seen[id] = live
	}
	if live {
		return fmt.Sprintf("queued in held job %s, which is not confirmed ended", id)
	}
	return ""
}

// remove deletes dir while holding its run lock, so a slurmbench process
// that holds it (following or attaching to the run) keeps its directory.
func remove(ctx context.Context, dir string, unchanged func() error) error {
	lock, err := flock.Acquire(ctx, rundir.LockPath(dir), flock.Options{Timeout: 0})
	if err != nil {
		if errors.Is(err, flock.ErrTimeout) {
			return fmt.Errorf("%s: a slurmbench process holds its lock; kept", dir)
		}
		return fmt.Errorf("%s: %w", dir, err)
	}
	defer func() { _ = lock.Release() }() // the directory is gone either way
	if err := unchanged(); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// ParseAge reads --older-than through the one duration parser: "7d",
// "36h", "90m", Slurm's "1-12:00:00".
func ParseAge(s string) (time.Duration, error) {
	d, err := duration.Age.Parse(s)
	if err != nil {
		return 0, err
	}
	return d, nil
}
