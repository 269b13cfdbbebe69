package slurm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/slurm/jsonlist"
)

// Bounds of the submit-key lookup.
const (
	// maxStateBody bounds the jobs/state listing the lookup reads: about
	// 50 bytes a job, so 16 MiB holds some 300,000 jobs.
	maxStateBody = 16 << 20
	// KeyLookupPage is how many jobs the lookup reads between progress
	// notes: a page, not a cap (the walk passes every job submitted since).
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
// useful here, so the lookup lists ids and states (jobs/state), then reads
// jobs in full newest id first (ids grow with submission), page by page,
// until keyLookupOlderRun in a row predate since less KeyLookupSkew: its
// cost follows the jobs submitted since. A failure after a match ends the
// walk with what was found. Without jobs/state, or past its bound, the
// listing is streamed.
func (c *Client) jobsByKey(ctx context.Context, name, key string, since time.Time) ([]Job, error) {
	f := JobFilter{Name: name, CommentContains: key}
	ids, err := c.jobIDs(ctx)
	if tl := new(TooLargeError); IsUnsupported(err) || errors.As(err, &tl) {
		return c.ListJobs(ctx, f) // streamed: no cap on the jobs it passes
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

// Bounds of FindJobs: one record of a streamed listing (about 9 KB
// each); how far back accounting is asked for pending or running jobs (one
// that ended within it may still be completing); its shortest window.
const (
	maxJobRecord    = 1 << 20
	findJobsWindow  = time.Hour
	minFindJobsPage = time.Minute
)

// JobQuery is User's jobs named one of Names (both required) for FindJobs.
type JobQuery struct {
	Names []string
	User  string
}

// liveStates are the states (sacct --state's names) of a job that may run.
const liveStates = "PENDING,RUNNING,SUSPENDED,REQUEUED,RESIZING"

// FindJobs returns the jobs squeue would list for q: not ended, or still
// completing. With accounting, slurmdbd selects them on its side (users,
// job_name, state, the last findJobsWindow, a window past the read bound
// read in halves), then slurmctld says if each still runs. Without,
// slurmctld filters nothing (GET jobs takes only update_time and flags):
// its listing is streamed, one record at a time, never held whole.
func (c *Client) FindJobs(ctx context.Context, q JobQuery) ([]Job, error) {
	if q.User == "" || len(q.Names) == 0 {
		return nil, fmt.Errorf("finding jobs: a user and at least one job name are required (a name alone may be another user's job)")
	}
	c.mu.Lock()
	none := c.accounting < 0
	c.mu.Unlock()
	if !none {
		now := time.Now()
		ids, err := c.accountingJobIDs(ctx, q, now.Add(-findJobsWindow), now)
		if err == nil {
			return c.confirmJobs(ctx, q, ids)
		}
		if !errors.Is(err, ErrNoAccounting) && ctx.Err() == nil { // a slurmdbd that took the query otherwise
			c.log.Warn("accounting could not select the jobs; reading slurmctld's listing instead", "error", err)
		}
	}
	return c.listJobs(ctx, q.match) // streamed
}

func (q JobQuery) match(j Job) bool {
	return j.User == q.User && slices.Contains(q.Names, j.Name) && (!j.Terminal() || j.State.Has(FlagCompleting))
}

// accountingJobIDs asks slurmdbd for the ids of q's jobs that were
// pending or running between from and to; an answer past the read bound
// is asked again in two halves of the window.
func (c *Client) accountingJobIDs(ctx context.Context, q JobQuery, from, to time.Time) ([]JobID, error) {
	query := url.Values{}
	query.Set("users", q.User)
	query.Set("job_name", strings.Join(q.Names, ","))
	query.Set("state", liveStates)
	query.Set("start_time", strconv.FormatInt(from.Unix(), 10))
	query.Set("end_time", strconv.FormatInt(to.Unix(), 10))
	var w struct {
		Jobs []wireDBJob `json:"jobs"`
	}
	err := c.do(ctx, request{method: http.MethodGet, root: "slurmdb", path: "jobs/", query: query}, &w)
	var tooLarge *TooLargeError
	switch {
	case IsUnsupported(err):
		c.mu.Lock()
		c.accounting = -1
		c.mu.Unlock()
		return nil, ErrNoAccounting
	case errors.As(err, &tooLarge) && to.Sub(from) >= 2*minFindJobsPage:
		mid := from.Add(to.Sub(from) / 2)
		older, err := c.accountingJobIDs(ctx, q, from, mid)
		if err != nil {
			return nil, err
		}
		newer, err := c.accountingJobIDs(ctx, q, mid, to)
		return append(older, newer...), err
	case err != nil:
		return nil, fmt.Errorf("finding jobs in accounting: %w", err)
	}
	var ids []JobID
	for _, wj := range w.Jobs {
		j := wj.job()
		if err := c.checkRecord(0, j.ID, 0, wj.Cluster); err != nil {
			return nil, fmt.Errorf("finding jobs in accounting: %w", err)
		}
		// slurmdbd filtered; a record it should not have sent is skipped.
		if j.User == q.User && slices.Contains(q.Names, j.Name) {
			ids = append(ids, j.ID)
		}
	}
	return ids, nil
}

// confirmJobs reads each candidate from slurmctld (checked to be that job)
// and keeps those q matches now; one slurmctld has forgotten has ended.
func (c *Client) confirmJobs(ctx context.Context, q JobQuery, ids []JobID) ([]Job, error) {
	slices.Sort(ids)
	var out []Job
	for _, id := range slices.Compact(ids) {
		j, err := c.GetJob(ctx, id)
		if IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("finding jobs: %w", err)
		}
		if q.match(j) {
			out = append(out, j)
		}
	}
	return out, nil
}

// decodeJobStream walks a jobs listing one value at a time (jsonlist),
// handing each job to visit; no value may take more than maxJobRecord
// bytes, and errors[] sent with the listing is an *APIError.
func decodeJobStream(r io.Reader, visit func(wireJob) error) error {
	var ps, real []Problem
	err := jsonlist.Read(r, "jobs", maxJobRecord, func(dec *json.Decoder) error {
		var w wireJob
		if err := dec.Decode(&w); err != nil {
			return err
		}
		return visit(w)
	}, &ps)
	for _, p := range ps {
		if p.Number != 0 || p.Error != "" || p.Description != "" {
			real = append(real, p)
		}
	}
	if err == nil && len(real) > 0 {
		err = &APIError{Method: http.MethodGet, Status: http.StatusOK, Errors: real}
	}
	if err != nil {
		return fmt.Errorf("reading the job listing: %w", err)
	}
	return nil
}
