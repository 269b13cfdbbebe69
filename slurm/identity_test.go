package slurm

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestRecordOfAnotherJobIsATransportError: every record slurmrestd sends
// is checked against the job (and cluster) asked for before anything acts
// on it. A proxy answering GET job/N with job 999's record — which gc took
// for job N's end and removed its run directory, and run took for the
// job's outcome (audit #33 row 3) — is an *IdentityError: not found is
// never concluded, and the exit code is Slurm's transport one.
func TestRecordOfAnotherJobIsATransportError(t *testing.T) {
	record := func(id int64, cluster string) string {
		return fmt.Sprintf(`{"jobs":[{"job_id":%d,"name":"other","cluster":%q,"job_state":["COMPLETED"],"exit_code":{"status":["SUCCESS"],"return_code":{"set":true,"number":0}}}],"errors":[],"warnings":[]}`, id, cluster)
	}
	dbRecord := func(id int64, cluster string) string {
		return fmt.Sprintf(`{"jobs":[{"job_id":%d,"name":"other","cluster":%q,"state":{"current":["COMPLETED"]}}],"errors":[],"warnings":[]}`, id, cluster)
	}
	for _, tt := range []struct {
		name string
		path func(id JobID) string
		body func(id JobID) string
		call func(c *Client, id JobID) error
	}{
		{"GetJob, another id", slurmPath, func(id JobID) string { return record(int64(id)+899, "lab") },
			func(c *Client, id JobID) error { _, err := c.GetJob(context.Background(), id); return err }},
		{"GetJob, another cluster", slurmPath, func(id JobID) string { return record(int64(id), "elsewhere") },
			func(c *Client, id JobID) error { _, err := c.GetJob(context.Background(), id); return err }},
		{"LookupJob", slurmPath, func(id JobID) string { return record(int64(id)+899, "lab") },
			func(c *Client, id JobID) error { _, err := c.LookupJob(context.Background(), id); return err }},
		{"AccountingJob, another id", dbPath, func(id JobID) string { return dbRecord(int64(id)+899, "") },
			func(c *Client, id JobID) error { _, err := c.AccountingJob(context.Background(), id); return err }},
		{"AccountingJob, another cluster", dbPath, func(id JobID) string { return dbRecord(int64(id), "elsewhere") },
			func(c *Client, id JobID) error { _, err := c.AccountingJob(context.Background(), id); return err }},
		{"key lookup", slurmPath, func(id JobID) string { return record(int64(id)+899, "lab") },
			func(c *Client, id JobID) error {
				_, err := c.jobsByKey(context.Background(), "mine", "k", time.Time{})
				return err
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithAccounting(),
				slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
			c := newClient(t, slowConfig(fake))
			if _, err := c.Ping(context.Background()); err != nil {
				t.Fatal(err)
			}
			res, err := c.Submit(context.Background(), JobSpec{Name: "mine", Script: "#!/bin/sh\n"})
			if err != nil {
				t.Fatal(err)
			}
			fake.AddFaults(slurmtest.Fault{Method: "GET", Path: tt.path(res.JobID), Action: slurmtest.Respond, Status: 200, Body: tt.body(res.JobID)})
			err = tt.call(c, res.JobID)
			var ie *IdentityError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v: want an *IdentityError", err)
			}
			if IsNotFound(err) || errors.Is(err, ErrUnknownFinalState) {
				t.Errorf("%v: a mismatch must not read as not found", err)
			}
			if got := ExitCode(err, exitcode.Submit); got != exitcode.Slurm {
				t.Errorf("exit code %d, want %d (transport)", got, exitcode.Slurm)
			}
		})
	}
}

func slurmPath(id JobID) string { return "/slurm/" + "v0.0.42/job/" + id.String() }
func dbPath(id JobID) string    { return "/slurmdb/" + "v0.0.42/job/" + id.String() }

// TestWaitTreatsAnotherJobsRecordAsAFailedPoll: a record of another job
// (ended) answering a poll of a running job is a failed poll, retried,
// never the job's end (audit #33 row 3: run stopped following, exit 5,
// without cancelling the job).
func TestWaitTreatsAnotherJobsRecordAsAFailedPoll(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(
		slurmtest.Step{State: []string{"RUNNING"}, Polls: 4},
		slurmtest.Step{State: []string{"COMPLETED"}},
	))
	c := newClient(t, testConfig(fake.URL, "tok"))
	res, err := c.Submit(ctxT(t), JobSpec{Name: "w", Script: "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	fake.AddFaults(slurmtest.Fault{Method: "GET", Path: slurmPath(res.JobID), Skip: 1, Times: 3, Action: slurmtest.Respond, Status: 200,
		Body: fmt.Sprintf(`{"jobs":[{"job_id":%d,"name":"other","job_state":["FAILED"],"exit_code":{"status":["ERROR"],"return_code":{"set":true,"number":1}}}],"errors":[],"warnings":[]}`, res.JobID+899)})
	var failed []error
	opts := fastWait(nil)
	opts.OnError = func(err error) { failed = append(failed, err) }
	j, err := c.Wait(ctxT(t), res.JobID, opts)
	if err != nil || j.ID != res.JobID || !j.Success() {
		t.Fatalf("Wait = %+v, %v; want job %d COMPLETED", j, err, res.JobID)
	}
	var ie *IdentityError
	if len(failed) != 3 || !errors.As(failed[0], &ie) {
		t.Errorf("failed polls %v, want the 3 records of another job, as *IdentityError", failed)
	}
}
