package runner

import (
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/slurm"
)

// QueueReport is how often a job still pending is reported: a queue wait
// of minutes or hours shows it is alive (and why it waits) in a CI log,
// not only when the state changes.
const QueueReport = 30 * time.Second

// queueWait remembers since when the followed job is pending, and why.
type queueWait struct {
	mu       sync.Mutex
	since    time.Time
	reason   string
	reported time.Time
}

// seen records a state change of the job.
func (q *queueWait) seen(j slurm.Job, reason string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.State.Base != slurm.StatePending {
		q.since = time.Time{}
		return
	}
	if q.since.IsZero() {
		q.since, q.reported = time.Now(), time.Now()
	}
	q.reason = reason
}

// report says, at most once per QueueReport, how long the job has waited.
func (q *queueWait) report(r *runState) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if q.since.IsZero() || now.Sub(q.reported) < QueueReport {
		return
	}
	q.reported = now
	why := ""
	if q.reason != "" {
		why = " (" + q.reason + ")"
	}
	r.progress("job %d still pending%s, %s in the queue", r.res.JobID, why, now.Sub(q.since).Round(time.Second))
}
