package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/rundir"
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
func GC(ctx context.Context, o GCOptions) ([]Decision, error) {
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	all, err := List(o.RunsDir)
	if err != nil {
		return nil, err
	}
	var out []Decision
	var errs []error
	for _, r := range all {
		d := decide(ctx, r, o)
		if d.Remove && o.Delete {
			if err := remove(ctx, r.Dir); err != nil {
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

// remove deletes dir while holding its run lock, so a slurmbench process
// that holds it (following or attaching to the run) keeps its directory.
func remove(ctx context.Context, dir string) error {
	lock, err := flock.Acquire(ctx, rundir.LockPath(dir), flock.Options{Timeout: 0})
	if err != nil && !errors.Is(err, flock.ErrUnsupported) {
		if errors.Is(err, flock.ErrTimeout) {
			return fmt.Errorf("%s: a slurmbench process holds its lock; kept", dir)
		}
		return fmt.Errorf("%s: %w", dir, err)
	}
	if lock != nil {
		defer func() { _ = lock.Release() }() // the directory is gone either way
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing %s: %w", dir, err)
	}
	return nil
}

// ParseAge reads --older-than through the one duration parser: "7d",
// "36h", "90m", Slurm's "1-12:00:00".
func ParseAge(s string) (time.Duration, error) { return duration.Age.Parse(s) }
