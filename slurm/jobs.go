package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// Source says where a Job record came from.
const (
	SourceController = "slurmctld"
	SourceAccounting = "accounting"
)

// Job is a job as the launcher needs it, from slurmctld (GET job) or from
// accounting (slurmdb).
type Job struct {
	ID        JobID  `json:"job_id"`
	Name      string `json:"name"`
	User      string `json:"user,omitempty"`
	Account   string `json:"account,omitempty"`
	Partition string `json:"partition,omitempty"`
	Comment   string `json:"comment,omitempty"`
	// Nodes is the allocated hostlist, e.g. "n[1-3]" ("" while pending).
	Nodes     string     `json:"nodes,omitempty"`
	NodeCount int        `json:"node_count,omitempty"`
	BatchHost string     `json:"batch_host,omitempty"`
	State     State      `json:"state"`
	Reason    string     `json:"reason,omitempty"` // state_reason: None, Resources, NonZeroExitCode, TimeLimit, ...
	Exit      ExitStatus `json:"exit"`

	SubmitTime time.Time `json:"submit_time,omitzero"`
	StartTime  time.Time `json:"start_time,omitzero"`
	EndTime    time.Time `json:"end_time,omitzero"`
	// TimeLimit is 0 when unlimited or unset.
	TimeLimit time.Duration `json:"time_limit,omitempty"`

	TRESPerNode string   `json:"tres_per_node,omitempty"` // e.g. gres/gpu:4
	GRESDetail  []string `json:"gres_detail,omitempty"`   // e.g. gpu:4(IDX:0-3), one per node while running
	WorkDir     string   `json:"work_dir,omitempty"`
	StdOut      string   `json:"stdout,omitempty"`
	StdErr      string   `json:"stderr,omitempty"`

	// HetJobID is the leader's id for a heterogeneous job component (0 otherwise).
	HetJobID     JobID `json:"het_job_id,omitempty"`
	HetJobOffset int   `json:"het_job_offset,omitempty"`
	// Components holds every component of a heterogeneous job (leader
	// first); nil for ordinary jobs.
	Components []Job `json:"components,omitempty"`

	Source string `json:"source"` // SourceController or SourceAccounting
}

// Terminal reports whether the job has ended.
func (j Job) Terminal() bool { return j.State.Terminal() }

// Success reports whether the job COMPLETED with exit code 0:0.
func (j Job) Success() bool {
	return j.State.Base == StateCompleted && j.Exit.Code == 0 && j.Exit.Signal == 0
}

// Outcome is one line for humans: "COMPLETED 0:0", "FAILED 3:0 (NonZeroExitCode)".
func (j Job) Outcome() string {
	s := j.State.String()
	if j.Terminal() {
		s += " " + j.Exit.String()
	}
	if j.Reason != "" && j.Reason != "None" {
		s += " (" + j.Reason + ")"
	}
	return s
}

// wireJob is slurmctld's job_info entry; only the fields used are listed.
type wireJob struct {
	JobID                   JobID           `json:"job_id"`
	Name                    string          `json:"name"`
	UserName                string          `json:"user_name"`
	Account                 string          `json:"account"`
	Partition               string          `json:"partition"`
	Comment                 wire.FlexText   `json:"comment"`
	Nodes                   string          `json:"nodes"`
	NodeCount               wire.NoVal      `json:"node_count"`
	BatchHost               string          `json:"batch_host"`
	JobState                wire.StringList `json:"job_state"`
	State                   wire.StringList `json:"state"` // jobs/state/ calls it this
	StateReason             string          `json:"state_reason"`
	ExitCode                wireExit        `json:"exit_code"`
	SubmitTime              wire.NoVal      `json:"submit_time"`
	StartTime               wire.NoVal      `json:"start_time"`
	EndTime                 wire.NoVal      `json:"end_time"`
	TimeLimit               wire.NoVal      `json:"time_limit"` // minutes
	TRESPerNode             string          `json:"tres_per_node"`
	GRESDetail              wire.StringList `json:"gres_detail"`
	CurrentWorkingDirectory string          `json:"current_working_directory"`
	StandardOutput          string          `json:"standard_output"`
	StandardError           string          `json:"standard_error"`
	HetJobID                wire.NoVal      `json:"het_job_id"`
	HetJobOffset            wire.NoVal      `json:"het_job_offset"`
	Cluster                 string          `json:"cluster"`
}

func (w wireJob) job() Job {
	j := Job{
		ID: w.JobID, Name: w.Name, User: w.UserName, Account: w.Account, Partition: w.Partition,
		Comment: string(w.Comment), Nodes: w.Nodes, NodeCount: int(w.NodeCount.Value(0)), BatchHost: w.BatchHost,
		State: ParseState(cmpList(w.JobState, w.State)...), Reason: w.StateReason, Exit: w.ExitCode.ExitStatus,
		SubmitTime: w.SubmitTime.UnixTime(), StartTime: w.StartTime.UnixTime(), EndTime: w.EndTime.UnixTime(),
		TimeLimit:   time.Duration(w.TimeLimit.Value(0)) * time.Minute,
		TRESPerNode: w.TRESPerNode, GRESDetail: w.GRESDetail,
		WorkDir: w.CurrentWorkingDirectory, StdOut: w.StandardOutput, StdErr: w.StandardError,
		HetJobID: JobID(w.HetJobID.Value(0)), HetJobOffset: int(w.HetJobOffset.Value(0)),
		Source: SourceController,
	}
	return j
}

func cmpList(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

type wireJobs struct {
	Jobs []wireJob `json:"jobs"`
}

// GetJob returns the job as slurmctld knows it. A job slurmctld has
// forgotten (MinJobAge passed) or never had is an error with IsNotFound;
// LookupJob falls back to accounting.
func (c *Client) GetJob(ctx context.Context, id JobID) (Job, error) {
	var w wireJobs
	err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "job/" + id.String()}, &w)
	if err != nil {
		return Job{}, fmt.Errorf("getting job %d: %w", id, err)
	}
	if err := c.checkRecords(id, w.Jobs); err != nil {
		return Job{}, fmt.Errorf("getting job %d: %w", id, err)
	}
	return pickJob(id, w.Jobs)
}

// IdentityError is a record of another job (or cluster) than asked for: a
// proxy or cache answering for another request, another cluster's server.
// A transport error, never a state: nothing may act on the record.
type IdentityError struct {
	Asked      JobID  // the job asked for (0 for a listing)
	Got        JobID  // the record's job_id
	Cluster    string // the cluster slurmrestd said it serves
	GotCluster string // the record's cluster
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("slurmrestd answered a request for job %d with a record of job %d (of cluster %q, serving %q): not trusted", e.Asked, e.Got, e.GotCluster, e.Cluster)
}

// checkRecord checks a record's cluster (when known) and, with asked set,
// that it is that job or one of its heterogeneous components.
func (c *Client) checkRecord(asked, got, hetLeader JobID, cluster string) error {
	serves := c.Server().Cluster
	if serves != "" && cluster != "" && cluster != serves || asked != 0 && got != asked && hetLeader != asked {
		return &IdentityError{Asked: asked, Got: got, Cluster: serves, GotCluster: cluster}
	}
	return nil
}

// checkRecords checks GET job/{id}'s records: the job must be among them.
func (c *Client) checkRecords(id JobID, ws []wireJob) error {
	found := len(ws) == 0 // an empty list is "not found", decided by pickJob
	for _, w := range ws {
		if err := c.checkRecord(id, w.JobID, JobID(w.HetJobID.Value(0)), w.Cluster); err != nil {
			return err
		}
		found = found || w.JobID == id
	}
	if !found {
		return &IdentityError{Asked: id, Got: ws[0].JobID, Cluster: c.Server().Cluster, GotCluster: ws[0].Cluster}
	}
	return nil
}

// pickJob chooses the requested job from a job list; for a heterogeneous
// job that is the leader, with every component attached.
func pickJob(id JobID, ws []wireJob) (Job, error) {
	if len(ws) == 0 {
		// slurmrestd answers an unknown id with 404 and errors[]; an empty
		// 200 is unexpected and treated the same way.
		return Job{}, fmt.Errorf("getting job %d: %w", id, &APIError{Status: http.StatusNotFound, Errors: []Problem{{Number: errnoInvalidJobID, Error: "Invalid job id specified", Description: "empty job list"}}})
	}
	jobs := make([]Job, len(ws))
	leader := -1
	for i, w := range ws {
		jobs[i] = w.job()
		if jobs[i].ID == id && leader < 0 {
			leader = i
		}
	}
	if leader < 0 {
		leader = 0
	}
	j := jobs[leader]
	if len(jobs) > 1 {
		j.Components = jobs
	}
	return j, nil
}

// JobFilter selects jobs in ListJobs; empty fields match everything.
// slurmrestd cannot filter by these itself, so the client does.
type JobFilter struct {
	Name string
	User string
	// CommentContains matches jobs whose comment contains it.
	CommentContains string
}

func (f JobFilter) match(j Job) bool {
	return (f.Name == "" || j.Name == f.Name) &&
		(f.User == "" || j.User == f.User) &&
		(f.CommentContains == "" || strings.Contains(j.Comment, f.CommentContains))
}

// ListJobs returns the jobs slurmctld knows (pending, running, and ended
// within MinJobAge) that match f. Heterogeneous job components are listed
// one by one. The listing is streamed (decodeJobStream): only matches are kept.
func (c *Client) ListJobs(ctx context.Context, f JobFilter) ([]Job, error) {
	return c.listJobs(ctx, f.match)
}

// listJobs streams slurmctld's listing and keeps the jobs keep accepts.
func (c *Client) listJobs(ctx context.Context, keep func(Job) bool) ([]Job, error) {
	var out []Job
	err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "jobs/", stream: func(r io.Reader) error {
		out = out[:0] // a retried request starts over
		return decodeJobStream(r, func(wj wireJob) error {
			if err := c.checkRecord(0, wj.JobID, 0, wj.Cluster); err != nil {
				return err
			}
			if j := wj.job(); keep(j) {
				out = append(out, j)
			}
			return nil
		})
	}}, nil)
	if err != nil {
		return nil, fmt.Errorf("listing jobs: %w", err)
	}
	return out, nil
}

// errnoAlreadyDone is ESLURM_ALREADY_DONE: the job has already ended.
const errnoAlreadyDone = 2021

var signalPattern = regexp.MustCompile(`^(SIG)?[A-Z0-9+]{1,12}$`)

// CancelJob cancels a job (SIGKILL after slurmctld's grace, like scancel).
// Cancelling a job that has already ended is not an error.
func (c *Client) CancelJob(ctx context.Context, id JobID) error {
	if err := c.deleteJob(ctx, id, ""); err != nil {
		return fmt.Errorf("cancelling job %d: %w", id, err)
	}
	return nil
}

// SignalJob sends signal (a name such as "TERM", "SIGUSR1", or a number) to
// every step of the job, like scancel --signal.
func (c *Client) SignalJob(ctx context.Context, id JobID, signal string) error {
	sig := strings.ToUpper(strings.TrimSpace(signal))
	if !signalPattern.MatchString(sig) {
		return fmt.Errorf("signalling job %d: %q is not a signal name or number", id, signal)
	}
	if err := c.deleteJob(ctx, id, sig); err != nil {
		return fmt.Errorf("signalling job %d with %s: %w", id, sig, err)
	}
	return nil
}

func (c *Client) deleteJob(ctx context.Context, id JobID, signal string) error {
	q := url.Values{}
	if signal != "" {
		q.Set("signal", signal)
	}
	err := c.do(ctx, request{method: http.MethodDelete, root: "slurm", path: "job/" + id.String(), query: q}, nil)
	var e *APIError
	if errors.As(err, &e) && e.Status < 300 && e.hasErrno(errnoAlreadyDone) {
		return nil
	}
	return err
}
