package slurm

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// JobSpec describes a batch job. Empty fields are left to Slurm, except
// Partition, Account and TimeLimit, which fall back to Config.Defaults.
type JobSpec struct {
	Name   string // required: the lookup after an ambiguous failure uses it
	Script string // required: the batch script, starting with #!
	// Nodes is the node count ("3") or range ("2-3"); "" leaves it to Slurm.
	Nodes        string
	TasksPerNode int
	Partition    string
	Account      string
	// TimeLimit is rounded up to whole minutes, Slurm's unit.
	TimeLimit time.Duration
	// GPUsPerNode becomes tres_per_node "gres/gpu:N" (sbatch --gpus-per-node).
	GPUsPerNode int
	// TRESPerNode is sent as is when set, e.g. "gres/gpu:h100:8"; it
	// overrides GPUsPerNode.
	TRESPerNode string
	// Exclusive asks for whole nodes (sbatch --exclusive).
	Exclusive bool
	// Environment is the job's environment as KEY=VALUE. slurmrestd refuses
	// a job without one, so a minimal PATH is sent when it is empty.
	Environment []string
	WorkDir     string // current_working_directory; must exist on the nodes
	StdOut      string // e.g. /shared/run/slurm-%j.out
	StdErr      string
	Comment     string
	// Extra fields are merged into the job description as is, for options
	// this type does not name (e.g. "constraints", "qos").
	Extra map[string]any
	// SubmitKey is the marker appended to the comment ("" makes one; see
	// NewSubmitKey).
	SubmitKey string
	// BeforeSend, if set, is called before each attempt leaves, with the
	// attempt's start: a caller journals it there (the job of an attempt
	// that dies with the caller can appear until FindSubmitted's bound
	// from that time). An error stops the submit before that attempt.
	BeforeSend func(attempt int, start time.Time) error
}

// DefaultJobEnvironment is sent when JobSpec.Environment is empty.
var DefaultJobEnvironment = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}

// SubmitResult is what Submit made.
type SubmitResult struct {
	JobID JobID `json:"job_id"`
	// SubmitKey is the unique marker put into the job's comment; ListJobs
	// with JobFilter{CommentContains: key} finds the job.
	SubmitKey string `json:"submit_key"`
	// Attempts is how many times the job was sent.
	Attempts int `json:"attempts"`
	// Recovered is set when the id came from a lookup after an ambiguous
	// failure rather than from a submit response.
	Recovered bool `json:"recovered,omitempty"`
	// Warnings are slurmrestd's warnings[] (e.g. unknown fields ignored).
	Warnings []string `json:"warnings,omitempty"`
}

// submitKeyPrefix starts the marker appended to each job's comment.
const submitKeyPrefix = "slurmbench-submit="

// NewSubmitKey is a fresh submit key. A caller that must find its job
// again after a crash (a journal) makes the key itself and passes it in
// JobSpec.SubmitKey.
func NewSubmitKey() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return submitKeyPrefix + hex.EncodeToString(b[:])
}

// jobDesc builds the job description. The submit key is appended to the
// comment so that the job can be recognised after an ambiguous failure.
func (c *Client) jobDesc(spec JobSpec, key string) (map[string]any, error) {
	if strings.TrimSpace(spec.Name) == "" {
		return nil, errors.New("job name is empty")
	}
	if !strings.HasPrefix(spec.Script, "#!") {
		return nil, errors.New("job script must start with #! (an interpreter line)")
	}
	d := map[string]any{}
	if spec.Extra != nil {
		maps.Copy(d, spec.Extra)
	}
	d["name"] = spec.Name
	d["script"] = spec.Script
	env := spec.Environment
	if len(env) == 0 {
		env = DefaultJobEnvironment
	}
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("environment entry %q is not KEY=VALUE", kv)
		}
	}
	d["environment"] = env
	d["comment"] = strings.TrimSpace(spec.Comment + " " + key)
	partition := cmp(spec.Partition, c.cfg.Defaults.Partition)
	account := cmp(spec.Account, c.cfg.Defaults.Account)
	limit := spec.TimeLimit
	if limit == 0 {
		limit = c.cfg.Defaults.TimeLimit
	}
	setIf(d, "partition", partition)
	setIf(d, "account", account)
	setIf(d, "nodes", spec.Nodes)
	setIf(d, "current_working_directory", spec.WorkDir)
	setIf(d, "standard_output", spec.StdOut)
	setIf(d, "standard_error", spec.StdErr)
	if limit > 0 {
		minutes := int64(limit / time.Minute) // rounded up below, without overflowing
		if limit%time.Minute != 0 {
			minutes++
		}
		d["time_limit"] = map[string]any{"set": true, "infinite": false, "number": minutes}
	}
	if spec.TasksPerNode > 0 {
		d["tasks_per_node"] = spec.TasksPerNode
	}
	switch {
	case spec.TRESPerNode != "":
		d["tres_per_node"] = spec.TRESPerNode
	case spec.GPUsPerNode > 0:
		// "gpu:4" is rejected; the gres/ prefix is required.
		d["tres_per_node"] = "gres/gpu:" + strconv.Itoa(spec.GPUsPerNode)
	}
	if spec.Exclusive {
		// shared=none is what sbatch --exclusive sets; the old "exclusive"
		// field is gone in v0.0.42.
		d["shared"] = []string{"none"}
	}
	return d, nil
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func setIf(d map[string]any, k, v string) {
	if v != "" {
		d[k] = v
	}
}

type wireSubmit struct {
	JobID  JobID `json:"job_id"`
	Result *struct {
		JobID     JobID  `json:"job_id"`
		ErrorCode int    `json:"error_code"`
		Error     string `json:"error"`
	} `json:"result"`
	Warnings []Problem `json:"warnings"`
}

// Submit submits a batch job and returns its id. The request is never
// retried blindly: when the outcome is ambiguous (timeout, reset, a 5xx
// without a Slurm verdict, one of slurmctld's communication errors) the job
// is looked up by name and its unique submit key for as long as it could
// still appear (see Config.SubmitLookupWindow) before it is sent again, so
// one call never makes two jobs. A Slurm rejection (bad partition, too many
// nodes) is returned as is.
//
// Every return without a job id after an ambiguous attempt — the lookup
// failing (ErrSubmitOutcomeUnknown), attempts running out, ctx ending —
// first looks for the job until it can no longer appear and cancels what it
// finds; the result still carries the submit key, so a caller that
// journaled it can look again later. ctx ending stops further attempts but
// not that cleanup.
func (c *Client) Submit(ctx context.Context, spec JobSpec) (res SubmitResult, err error) {
	key := spec.SubmitKey
	if key == "" {
		key = NewSubmitKey()
	} else if !strings.HasPrefix(key, submitKeyPrefix) {
		return SubmitResult{}, fmt.Errorf("submitting job %q: submit key %q does not start with %q", spec.Name, key, submitKeyPrefix)
	}
	desc, err := c.jobDesc(spec, key)
	if err != nil {
		return SubmitResult{}, fmt.Errorf("submitting job %q: %w", spec.Name, err)
	}
	res = SubmitResult{SubmitKey: key}
	// Choose the API version first: a failure there sent no job.
	if _, err := c.negotiate(ctx); err != nil {
		return res, fmt.Errorf("submitting job %q: %w", spec.Name, err)
	}
	// appearBy is when the last ambiguous attempt's job, if it was made, is
	// sure to be visible; zero while no attempt was ambiguous.
	var appearBy time.Time
	var firstStart time.Time // the first attempt's: jobs of this Submit are no older
	defer func() {
		if err != nil && !appearBy.IsZero() {
			err = c.cancelSubmitted(context.WithoutCancel(ctx), spec.Name, key, firstStart, appearBy, err)
		}
	}()
	var lastErr error
	for res.Attempts < c.cfg.SubmitAttempts {
		if res.Attempts > 0 {
			if err := sleepCtx(ctx, jitterBackoff(c.cfg.Retry.WaitMin, c.cfg.Retry.WaitMax, res.Attempts-1, nil)); err != nil {
				return res, fmt.Errorf("submitting job %q: %w (last error: %w)", spec.Name, err, lastErr)
			}
		}
		start := time.Now()
		if firstStart.IsZero() {
			firstStart = start
		}
		if spec.BeforeSend != nil {
			if err := spec.BeforeSend(res.Attempts+1, start); err != nil {
				return res, fmt.Errorf("submitting job %q: %w", spec.Name, err)
			}
		}
		res.Attempts++
		var w wireSubmit
		err := c.do(ctx, request{method: http.MethodPost, root: "slurm", path: "job/submit", body: map[string]any{"job": desc}, once: true}, &w)
		if err == nil {
			res.JobID = w.JobID
			if res.JobID == 0 && w.Result != nil {
				res.JobID = w.Result.JobID
			}
			if res.JobID == 0 {
				return res, fmt.Errorf("submitting job %q: slurmrestd answered without a job id", spec.Name)
			}
			for _, p := range w.Warnings {
				res.Warnings = append(res.Warnings, p.String())
			}
			if !appearBy.IsZero() {
				c.DropDuplicates(ctx, spec.Name, key, res.JobID, firstStart)
			}
			c.log.Info("submitted job", "name", spec.Name, "job_id", res.JobID, "attempts", res.Attempts)
			return res, nil
		}
		lastErr = err
		switch submitOutcome(err) {
		case outcomeRejected:
			return res, fmt.Errorf("submitting job %q: %w", spec.Name, err)
		case outcomeNotSent:
			if ctx.Err() != nil {
				return res, fmt.Errorf("submitting job %q: %w", spec.Name, err)
			}
			c.log.Info("submit did not reach slurmrestd; sending again", "name", spec.Name, "attempt", res.Attempts, "error", err)
			continue
		}
		appearBy = start.Add(c.cfg.RequestTimeout + c.cfg.SubmitLookupWindow)
		if ctx.Err() != nil {
			return res, fmt.Errorf("submitting job %q: %w", spec.Name, err)
		}
		c.log.Warn("submit outcome ambiguous; looking the job up before sending again", "name", spec.Name, "attempt", res.Attempts, "error", err, "until", appearBy)
		job, found, lerr := c.findSubmitted(ctx, spec.Name, key, firstStart, appearBy)
		if !found && ctx.Err() != nil {
			return res, fmt.Errorf("submitting job %q: %w while looking up the job of an ambiguous submit (%w)", spec.Name, ctx.Err(), err)
		}
		if found {
			res.JobID, res.Recovered = job.ID, true
			appearBy = time.Time{}
			c.log.Info("found the job the ambiguous submit made", "name", spec.Name, "job_id", job.ID)
			return res, nil
		}
		if lerr != nil {
			return res, fmt.Errorf("submitting job %q: %w: the submit failed (%w) and the lookup by comment %q failed too (%w); check squeue before submitting again",
				spec.Name, ErrSubmitOutcomeUnknown, err, key, lerr)
		}
	}
	return res, fmt.Errorf("submitting job %q: giving up after %d attempts: %w", spec.Name, res.Attempts, lastErr)
}

type hardStopKey struct{}

// WithHardStop marks ctx for Submit: once ctx ends, Submit still looks for
// (and cancels) a job an interrupted attempt may have made, for as long as
// it could appear — unless hard is closed (the user insists: a second ^C).
func WithHardStop(ctx context.Context, hard <-chan struct{}) context.Context {
	if hard == nil {
		return ctx
	}
	return context.WithValue(ctx, hardStopKey{}, hard)
}

// cancelSubmitted ends a Submit that returns without a job id after an
// ambiguous attempt: until appearBy it looks for jobs carrying key and
// cancels each one, so no job the caller does not know of is left behind.
// It adds what it did to err.
func (c *Client) cancelSubmitted(ctx context.Context, name, key string, since, appearBy time.Time, err error) error {
	if hard, ok := ctx.Value(hardStopKey{}).(<-chan struct{}); ok {
		var stop context.CancelFunc
		ctx, stop = context.WithCancel(ctx)
		defer stop()
		go func() {
			select {
			case <-hard:
				stop()
			case <-ctx.Done():
			}
		}()
	}
	var cancelled []string
	var lastErr error
	looked := false
	done := map[JobID]bool{}
	for wait := 250 * time.Millisecond; ; wait = min(wait*2, 4*time.Second) {
		jobs, lerr := c.jobsByKey(ctx, name, key, since)
		if lerr == nil {
			looked = true
			for _, j := range jobs {
				if done[j.ID] || j.Terminal() {
					continue
				}
				c.log.Warn("cancelling the job of a failed submit", "name", name, "job_id", j.ID)
				if cerr := c.CancelJob(ctx, j.ID); cerr != nil {
					lastErr = cerr
					continue
				}
				done[j.ID] = true
				cancelled = append(cancelled, j.ID.String())
			}
		} else {
			lastErr = lerr
		}
		if !time.Now().Add(wait).Before(appearBy) {
			break
		}
		if sleepCtx(ctx, wait) != nil {
			break
		}
	}
	switch {
	case len(cancelled) > 0:
		return fmt.Errorf("%w; cancelled job %s, made by the failed submit (comment %q)", err, strings.Join(cancelled, ", "), key)
	case ctx.Err() != nil && time.Now().Before(appearBy):
		return fmt.Errorf("%w; stopped looking for a job of the failed submit before it could have appeared (comment %q): it may exist", err, key)
	case !looked:
		return fmt.Errorf("%w; the job may exist: looking it up by comment %q failed (%w)", err, key, lastErr)
	case lastErr != nil:
		return fmt.Errorf("%w; cancelling the job of comment %q failed (%w)", err, key, lastErr)
	}
	return err
}

type outcome int

const (
	outcomeAmbiguous outcome = iota // slurmctld may or may not have the job
	outcomeRejected                 // a verdict (or no token): the job does not exist
	outcomeNotSent                  // the request never left: safe to resend
)

func submitOutcome(err error) outcome {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if apiErr.definitive() {
			return outcomeRejected
		}
		return outcomeAmbiguous
	}
	var tokErr *tokenError
	var redirect *RedirectError
	switch {
	case errors.As(err, &tokErr):
		return outcomeRejected // nothing was sent, and without a token nothing can be
	case errors.As(err, &redirect):
		return outcomeRejected // slurmrestd was never reached; the job was not sent on
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return outcomeNotSent
	}
	return outcomeAmbiguous
}

// findSubmitted looks for the job an ambiguous submit may have made until
// appearBy (slurmrestd and slurmctld may still be working on the submit
// while the lookup runs). It reports an error only if no lookup succeeded
// at all.
func (c *Client) findSubmitted(ctx context.Context, name, key string, since, appearBy time.Time) (Job, bool, error) {
	wait := 250 * time.Millisecond
	var lastErr error
	succeeded := false
	for {
		jobs, err := c.jobsByKey(ctx, name, key, since)
		if err == nil {
			succeeded = true
			if len(jobs) > 0 {
				return oldest(jobs), true, nil
			}
		} else {
			lastErr = err
		}
		if !time.Now().Add(wait).Before(appearBy) {
			break
		}
		if err := sleepCtx(ctx, wait); err != nil {
			return Job{}, false, err
		}
		wait = min(wait*2, 4*time.Second)
	}
	if !succeeded {
		return Job{}, false, lastErr
	}
	return Job{}, false, nil
}

// FindSubmitted looks for the job a submit attempt that started at sent
// may have made (its key from SubmitResult or a journal), for as long as it
// could still appear: until sent + RequestTimeout + SubmitLookupWindow, at
// least once. found is false when it did not appear; err is set only when
// no lookup succeeded.
func (c *Client) FindSubmitted(ctx context.Context, name, key string, sent time.Time) (job Job, found bool, err error) {
	return c.findSubmitted(ctx, name, key, sent.Add(-c.submitSpan()), sent.Add(c.cfg.RequestTimeout+c.cfg.SubmitLookupWindow))
}

// submitSpan bounds how long before one attempt the first attempt of the
// same Submit started.
func (c *Client) submitSpan() time.Duration {
	return time.Duration(c.cfg.SubmitAttempts) * (c.cfg.RequestTimeout + c.cfg.SubmitLookupWindow + c.cfg.Retry.WaitMax)
}

// DropDuplicates is the last guard after a resend: if an earlier,
// ambiguous attempt did make a job after all, that job is cancelled so one
// submit key leaves exactly one job running. Submit calls it after a
// resend; a caller following the job calls it again later, when a job of
// an earlier attempt can no longer appear. It looks through the jobs
// submitted since (a caller sweeping repeatedly passes its last sweep's
// start); zero means since the kept job's submit less the span of a
// Submit's attempts.
func (c *Client) DropDuplicates(ctx context.Context, name, key string, keep JobID, since time.Time) {
	if since.IsZero() {
		j, err := c.GetJob(ctx, keep)
		if err != nil || j.SubmitTime.IsZero() {
			c.log.Warn("could not check for a duplicate job: the kept job's submit time is unknown", "name", name, "job_id", keep, "error", err)
			return
		}
		since = j.SubmitTime.Add(-c.submitSpan())
	}
	jobs, err := c.jobsByKey(ctx, name, key, since)
	if err != nil {
		c.log.Warn("could not check for a duplicate job after resubmitting", "name", name, "error", err)
		return
	}
	for _, j := range jobs {
		if j.ID != keep && j.HetJobID != keep {
			c.log.Warn("cancelling duplicate job from an ambiguous submit", "name", name, "job_id", j.ID, "kept", keep)
			if err := c.CancelJob(ctx, j.ID); err != nil {
				c.log.Warn("cancelling duplicate job failed", "job_id", j.ID, "error", err)
			}
		}
	}
}

func oldest(jobs []Job) Job {
	return slices.MinFunc(jobs, func(a, b Job) int { return int(a.ID - b.ID) })
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	_, err := sleepOrWake(ctx, d, nil) // a nil channel never wakes
	return err
}
