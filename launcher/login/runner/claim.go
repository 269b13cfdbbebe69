package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// claim is a run directory this runner holds: made by it, or one an
// earlier runner for the same run id left (killed, a re-run).
type claim struct {
	lock *flock.Lock
	// journal is the earlier runner's submit journal (zero: none).
	journal rundir.Journal
	fresh   bool // the directory was made now
}

func (c *claim) release() {
	if c != nil {
		_ = c.lock.Release()
	}
}

// lockWait bounds the wait for another runner's lock: a live runner holds
// it for the whole run, so waiting longer only delays the error.
const lockWait = 2 * time.Second

// claimRunDir makes the plan's run directory exclusively, or takes over an
// existing one: only with this plan in it, and only while no other
// slurmbench holds it. With existing, the plan was read from the directory
// (attach) and the directory is not made.
func claimRunDir(ctx context.Context, pl *plan.Plan, existing bool) (*claim, error) {
	root := pl.RunDir
	c := &claim{}
	err := fs.ErrExist
	if !existing {
		err = rundir.Create(root)
	}
	switch {
	case existing:
	case err == nil:
		c.fresh = true
	case errors.Is(err, fs.ErrExist):
		if err := samePlan(pl); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	c.lock, err = flock.Acquire(ctx, rundir.LockPath(root), flock.Options{Timeout: lockWait})
	switch {
	case errors.Is(err, flock.ErrTimeout):
		return nil, fmt.Errorf("--run-id %q: run directory %s is in use by another slurmbench run or attach", pl.RunID, root)
	case errors.Is(err, flock.ErrUnsupported):
		c.lock = nil // a filesystem without flock: the exclusive mkdir still keeps fresh runs apart
	case err != nil:
		return nil, err
	}
	if c.fresh {
		return c, nil
	}
	c.journal, err = rundir.ReadJournal(pl.Layout.Journal)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		c.release()
		return nil, err
	}
	return c, nil
}

// CheckRunDir is run's check before anything else happens: the plan's run
// directory is new, or holds this very plan (a rerun that continues it).
func CheckRunDir(pl *plan.Plan) error {
	if _, err := os.Lstat(pl.RunDir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return samePlan(pl)
}

// samePlan accepts an existing run directory only if it holds the plan
// being run: a rerun of the same run id continues that run, and anything
// else must not mix with it.
func samePlan(pl *plan.Plan) error {
	root := pl.RunDir
	old, err := os.ReadFile(pl.PlanFile)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("--run-id %q: run directory %s already exists and holds no plan (not a slurmbench run; a rerun must not mix with it)", pl.RunID, root)
	}
	if err != nil {
		return fmt.Errorf("--run-id %q: %w", pl.RunID, err)
	}
	now, err := pl.JSON()
	if err != nil {
		return err
	}
	if bytes.Equal(bytes.TrimSpace(old), bytes.TrimSpace(now)) {
		return nil
	}
	return fmt.Errorf("--run-id %q: run directory %s holds a different plan (%s differ); a rerun must plan the same point, or use a new run id",
		pl.RunID, root, diffKeys(old, now))
}

// diffKeys names the top-level plan fields that differ.
func diffKeys(a, b []byte) string {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return "the files"
	}
	var keys []string
	for k, v := range ma {
		if !bytes.Equal(bytes.TrimSpace(v), bytes.TrimSpace(mb[k])) {
			keys = append(keys, k)
		}
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return fmt.Sprint(keys)
}

// adopt finds the job an earlier runner's journal names. found is false
// when that runner never got a job made (nothing to adopt: submit anew).
func (r *runState) adopt(ctx context.Context, j rundir.Journal) (id slurm.JobID, found bool, err error) {
	if j.JobID != "" {
		id, err := slurm.ParseJobID(j.JobID)
		if err != nil {
			return 0, false, fmt.Errorf("submit journal %s: %w", r.plan.Layout.Journal, err)
		}
		return id, true, nil
	}
	if j.SubmitKey == "" {
		return 0, false, nil
	}
	r.progress("the earlier runner of run %s sent a submit at %s and left no job id: looking for the job by its key", j.RunID, j.Sending.Format(time.TimeOnly))
	job, found, err := r.o.Client.FindSubmitted(ctx, j.JobName, j.SubmitKey, j.Sending)
	if err != nil {
		return 0, false, fmt.Errorf("looking up the job of the earlier submit (comment %q): %w; check squeue before running again", j.SubmitKey, err)
	}
	if !found {
		r.progress("the earlier submit made no job")
		return 0, false, nil
	}
	j.JobID, j.Submitted, j.Recovered = job.ID.String(), time.Now().UTC(), true
	if err := rundir.WriteJournal(r.plan.Layout.Journal, j); err != nil {
		r.progress("warning: %v", err)
	}
	return job.ID, true, nil
}
