package slurm

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Bounds of the submit-key lookup.
const (
	// maxStateBody bounds the jobs/state listing the lookup reads: about
	// 50 bytes a job, so 16 MiB holds some 300,000 jobs.
	maxStateBody = 16 << 20
	// KeyLookupPage is how many jobs, newest first, the lookup reads in
	// full between progress notes. It is a page, not a cap: the walk goes
	// on until it has passed the jobs submitted since the attempt (less
	// KeyLookupSkew), however many there are, and a job it found is kept
	// whatever it meets after.
	KeyLookupPage = 2000
	// KeyLookupSkew is how far slurmctld's clock (a job's submit_time)
	// may be behind this host's.
	KeyLookupSkew = 10 * time.Minute
	// keyLookupOlderRun is how many jobs in a row submitted before the
	// floor end the walk: an array task started late has a new id but its
	// array's old submit_time, so one old job proves nothing.
	keyLookupOlderRun = 32
)

// TooLargeError is a response past the size slurmbench reads.
type TooLargeError struct{ Limit int64 }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("response larger than the %d MiB slurmbench reads", e.Limit>>20)
}

// jobIDs lists the ids of every job slurmctld holds through jobs/state: id
// and state only, a few MB however many jobs the cluster holds, where GET
// jobs sends kilobytes per job (hundreds of MB at 50,000 jobs).
func (c *Client) jobIDs(ctx context.Context) ([]JobID, error) {
	var w struct {
		Jobs []struct {
			JobID JobID `json:"job_id"`
		} `json:"jobs"`
	}
	if err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "jobs/state/", limit: maxStateBody}, &w); err != nil {
		return nil, fmt.Errorf("listing job states: %w", err)
	}
	ids := make([]JobID, 0, len(w.Jobs))
	for _, j := range w.Jobs {
		ids = append(ids, j.JobID)
	}
	return ids, nil
}

// jobsByKey finds the jobs named name whose comment carries key, among the
// jobs submitted at or after since. slurmrestd filters jobs by nothing
// useful here (update_time is the whole table's "changed since", not a
// per-job filter), so the lookup lists ids and states (jobs/state), then
// reads jobs in full newest id first — ids grow with submission — page by
// page until keyLookupOlderRun in a row were submitted before since less
// KeyLookupSkew. Its cost follows the jobs submitted since, not the jobs
// the cluster holds. A job found is kept: a failure after it (a read, the
// caller's context) ends the walk with what was found, not an error. A
// slurmrestd without jobs/state gets the full listing, bounded by maxBody.
func (c *Client) jobsByKey(ctx context.Context, name, key string, since time.Time) ([]Job, error) {
	f := JobFilter{Name: name, CommentContains: key}
	ids, err := c.jobIDs(ctx)
	if IsUnsupported(err) {
		return c.ListJobs(ctx, f)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ids, func(a, b JobID) int { return int(b - a) })
	ids = slices.Compact(ids)
	floor := since.Add(-KeyLookupSkew)
	var out []Job
	seen := map[JobID]bool{}
	olderRun := 0
	for n, id := range ids {
		if n > 0 && n%KeyLookupPage == 0 {
			c.log.Info("looking up a job by its submit key: still walking the jobs submitted since", "key", key, "read", n, "since", floor.Format(time.RFC3339), "found", len(out))
		}
		if seen[id] {
			continue
		}
		var w wireJobs
		err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "job/" + id.String()}, &w)
		if IsNotFound(err) {
			continue // ended and forgotten since the listing
		}
		if err == nil {
			err = c.checkRecords(id, w.Jobs)
		}
		if err != nil {
			err = fmt.Errorf("looking up jobs by comment %q: getting job %d: %w", key, id, err)
			if len(out) > 0 {
				c.log.Warn("looking up a job by its submit key: keeping the jobs found before a failure", "key", key, "found", len(out), "error", err)
				return out, nil
			}
			return nil, err
		}
		older := false
		for _, wj := range w.Jobs {
			j := wj.job()
			seen[j.ID] = true
			if f.match(j) {
				out = append(out, j)
			}
			if j.ID == id && !j.SubmitTime.IsZero() && j.SubmitTime.Before(floor) {
				older = true
			}
		}
		if !older {
			olderRun = 0
		} else if olderRun++; olderRun >= keyLookupOlderRun {
			break
		}
	}
	return out, nil
}
