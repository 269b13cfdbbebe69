package slurm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// wireDBJob is slurmdbd's job record (GET /slurmdb/<v>/job/{id}).
type wireDBJob struct {
	JobID     JobID         `json:"job_id"`
	Name      string        `json:"name"`
	User      string        `json:"user"`
	Account   string        `json:"account"`
	Partition string        `json:"partition"`
	Comment   wire.FlexText `json:"comment"` // {"administrator","job","system"}
	Nodes     string        `json:"nodes"`
	Cluster   string        `json:"cluster"`
	// allocation_nodes is a bare number in v0.0.40-42.
	AllocationNodes wire.NoVal `json:"allocation_nodes"`
	State           struct {
		Current wire.StringList `json:"current"`
		Reason  string          `json:"reason"`
	} `json:"state"`
	ExitCode wireExit `json:"exit_code"`
	Time     struct {
		Submission wire.NoVal `json:"submission"`
		Start      wire.NoVal `json:"start"`
		End        wire.NoVal `json:"end"`
		Limit      wire.NoVal `json:"limit"` // minutes
	} `json:"time"`
	WorkingDirectory string `json:"working_directory"`
	StdOut           string `json:"stdout"`
	StdErr           string `json:"stderr"`
	Het              struct {
		JobID     wire.NoVal `json:"job_id"`
		JobOffset wire.NoVal `json:"job_offset"`
	} `json:"het"`
}

func (w wireDBJob) job() Job {
	return Job{
		ID: w.JobID, Name: w.Name, User: w.User, Account: w.Account, Partition: w.Partition,
		Comment: string(w.Comment), Nodes: w.Nodes, NodeCount: int(w.AllocationNodes.Value(0)),
		State: ParseState(w.State.Current...), Reason: w.State.Reason, Exit: w.ExitCode.ExitStatus,
		SubmitTime: w.Time.Submission.UnixTime(), StartTime: w.Time.Start.UnixTime(), EndTime: w.Time.End.UnixTime(),
		TimeLimit: time.Duration(w.Time.Limit.Value(0)) * time.Minute,
		WorkDir:   w.WorkingDirectory, StdOut: w.StdOut, StdErr: w.StdErr,
		HetJobID: JobID(w.Het.JobID.Value(0)), HetJobOffset: int(w.Het.JobOffset.Value(0)),
		Source: SourceAccounting,
	}
}

// AccountingJob returns the job's record from slurmdbd. Without slurmdbd
// (slurmrestd serves no /slurmdb paths) the error matches ErrNoAccounting;
// the answer is remembered so later calls cost nothing.
func (c *Client) AccountingJob(ctx context.Context, id JobID) (Job, error) {
	c.mu.Lock()
	none := c.accounting < 0
	c.mu.Unlock()
	if none {
		return Job{}, fmt.Errorf("looking up job %d in accounting: %w", id, ErrNoAccounting)
	}
	var w struct {
		Jobs []wireDBJob `json:"jobs"`
	}
	err := c.do(ctx, request{method: http.MethodGet, root: "slurmdb", path: "job/" + id.String()}, &w)
	if IsUnsupported(err) {
		c.mu.Lock()
		c.accounting = -1
		c.mu.Unlock()
		c.log.Debug("slurmrestd serves no accounting endpoints")
		return Job{}, fmt.Errorf("looking up job %d in accounting: %w", id, ErrNoAccounting)
	}
	if err != nil {
		return Job{}, fmt.Errorf("looking up job %d in accounting: %w", id, err)
	}
	c.mu.Lock()
	c.accounting = 1
	c.mu.Unlock()
	// Accounting keeps one record per run of a requeued job; the last
	// one is the outcome.
	var found []Job
	for _, wj := range w.Jobs {
		j := wj.job()
		if err := c.checkRecord(id, j.ID, j.HetJobID, wj.Cluster); err != nil {
			return Job{}, fmt.Errorf("looking up job %d in accounting: %w", id, err)
		}
		if j.ID == id || j.HetJobID == id {
			found = append(found, j)
		}
	}
	if len(found) == 0 {
		return Job{}, fmt.Errorf("looking up job %d in accounting: %w", id,
			&APIError{Method: http.MethodGet, Status: http.StatusNotFound, Errors: []Problem{{Number: errnoInvalidJobID, Error: "Invalid job id specified", Description: "no accounting record"}}})
	}
	j := found[len(found)-1]
	for _, f := range found {
		if f.ID == id {
			j = f
		}
	}
	return j, nil
}

// LookupJob returns the job from slurmctld, or from accounting once
// slurmctld has forgotten it. When neither knows the job, the error is an
// *UnknownFinalStateError (errors.Is ErrUnknownFinalState): the job's end
// is unknown, which is different from any state.
func (c *Client) LookupJob(ctx context.Context, id JobID) (Job, error) {
	j, err := c.GetJob(ctx, id)
	if err == nil || !IsNotFound(err) {
		return j, err
	}
	aj, aerr := c.AccountingJob(ctx, id)
	switch {
	case aerr == nil:
		return aj, nil
	case errors.Is(aerr, ErrNoAccounting):
		return Job{}, &UnknownFinalStateError{ID: id, NoAccounting: true, Reason: "slurmctld does not know the job (a wrong id, or it ended more than MinJobAge ago) and there is no accounting (slurmdbd) to ask"}
	case IsNotFound(aerr):
		return Job{}, &UnknownFinalStateError{ID: id, Reason: "neither slurmctld nor accounting knows the job"}
	default:
		return Job{}, aerr
	}
}
