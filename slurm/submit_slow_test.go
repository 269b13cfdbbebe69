package slurm

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// Tests of a slurmctld that is slow to show a job run the fake in process
// under testing/synctest: minutes of slurmrestd time pass in microseconds,
// and the defaults (30 s request timeout, 30 s lookup window) are the ones
// tested.

// slowConfig is the production timing against an in-process fake.
func slowConfig(fake *slurmtest.Fake) Config {
	return Config{URL: fake.URL, Token: "tok", Transport: fake.Transport(), Defaults: JobDefaults{Partition: "debug"}}
}

// liveJobs are the fake's jobs that are not cancelled or ended.
func liveJobs(t *testing.T, c *Client, fake *slurmtest.Fake) []JobID {
	t.Helper()
	var live []JobID
	for _, j := range fake.Jobs() {
		got, err := c.GetJob(context.Background(), JobID(j.ID))
		if err == nil && got.Terminal() {
			continue
		}
		live = append(live, JobID(j.ID))
	}
	return live
}

// TestSubmitCommunicationErrorIsLookedUp: slurmrestd's answers that mean
// "slurmctld dropped the RPC midway" go through the lookup, which finds
// the job slurmctld did take. They were taken for a refusal (exit 4 with a
// job running).
func TestSubmitCommunicationErrorIsLookedUp(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		errno  int
		msg    string
	}{
		{"502 zero bytes", 502, 5005, "Zero Bytes were transmitted or received"},
		{"500 zero bytes", 500, 5005, "Zero Bytes were transmitted or received"},
		{"500 incomplete packet", 500, 5003, "Incomplete packet"},
		{"500 send failure", 500, 1002, "Communication send failure"},
		{"503 controller busy", 503, 11, "Resource temporarily unavailable"},
		{"408 from a proxy", 408, 0, ""},
		{"429 throttled after forwarding", 429, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithVisibleAfter(2*time.Second))
				c := newClient(t, slowConfig(fake))
				body := `{"errors":[]}`
				if tc.errno != 0 {
					body = `{"errors":[{"error_number":` + strconv.Itoa(tc.errno) + `,"error":"` + tc.msg + `","description":"Batch job submission failed"}]}`
				}
				fake.AddFaults(slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.RespondAfterForward, Status: tc.status, Body: body})
				res, err := c.Submit(context.Background(), JobSpec{Name: "comm", Script: "#!/bin/sh\n"})
				if err != nil {
					t.Fatalf("Submit: %v (the job was made: it must be looked up)", err)
				}
				if jobs := fake.Jobs(); len(jobs) != 1 || JobID(jobs[0].ID) != res.JobID || !res.Recovered || res.Attempts != 1 {
					t.Errorf("jobs %+v, result %+v: want the one job, recovered after 1 attempt", jobs, res)
				}
			})
		})
	}
}

// TestSubmitFindsAJobThatAppearsLate: slurmctld shows the job 15 s after
// the answer was lost. The lookup lasts as long as the job can appear, so
// it is found and never sent again (the 10 s window resent it: two jobs).
func TestSubmitFindsAJobThatAppearsLate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithVisibleAfter(15*time.Second))
		c := newClient(t, slowConfig(fake))
		fake.AddFaults(slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward})
		start := time.Now()
		res, err := c.Submit(context.Background(), JobSpec{Name: "late", Script: "#!/bin/sh\n"})
		if err != nil {
			t.Fatal(err)
		}
		if jobs := fake.Jobs(); len(jobs) != 1 || !res.Recovered || res.Attempts != 1 {
			t.Fatalf("%d jobs, result %+v: want one job, found by the lookup", len(jobs), res)
		}
		if took := time.Since(start); took < 15*time.Second || took > 20*time.Second {
			t.Errorf("found after %s, want soon after it appeared (15 s)", took)
		}
		if live := liveJobs(t, c, fake); len(live) != 1 || live[0] != res.JobID {
			t.Errorf("live jobs %v, want only %d", live, res.JobID)
		}
	})
}

// TestSubmitInterruptedCancelsTheJobItMayHaveMade: a signal while the
// lookup runs ends the submit, but not before the job the lost answer made
// has been looked for until it can no longer appear, and cancelled.
func TestSubmitInterruptedCancelsTheJobItMayHaveMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithVisibleAfter(15*time.Second))
		c := newClient(t, slowConfig(fake))
		fake.AddFaults(slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		res, err := c.Submit(ctx, JobSpec{Name: "sig", Script: "#!/bin/sh\n"})
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Submit: %v, want the context's error", err)
		}
		if res.JobID != 0 || res.SubmitKey == "" {
			t.Errorf("result %+v: want no job id and the submit key", res)
		}
		jobs := fake.Jobs()
		if len(jobs) != 1 || !strings.Contains(err.Error(), "cancelled job "+strconv.Itoa(int(jobs[0].ID))) {
			t.Fatalf("jobs %+v, err %v: want the one job named as cancelled", jobs, err)
		}
		if live := liveJobs(t, c, fake); len(live) != 0 {
			t.Errorf("live jobs %v after a failed submit, want none", live)
		}
	})
}

// TestSubmitOutcomeUnknownKeepsTheKey: when no lookup can run, the error
// says the job may exist and names the key, and the result keeps it for a
// later lookup (a journal).
func TestSubmitOutcomeUnknownKeepsTheKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slurmtest.NewFake(t, slurmtest.InProcess())
		c := newClient(t, slowConfig(fake))
		fake.AddFaults(
			slurmtest.Fault{Method: "POST", Path: "/job/submit", Action: slurmtest.DropAfterForward},
			slurmtest.Fault{Method: "GET", Path: "/jobs", Action: slurmtest.Respond, Status: 503},
		)
		key := NewSubmitKey()
		res, err := c.Submit(context.Background(), JobSpec{Name: "unknown", Script: "#!/bin/sh\n", SubmitKey: key})
		if !errors.Is(err, ErrSubmitOutcomeUnknown) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), "may exist") {
			t.Fatalf("err = %v", err)
		}
		if res.SubmitKey != key || len(fake.Jobs()) != 1 {
			t.Errorf("result %+v, %d jobs", res, len(fake.Jobs()))
		}
	})
}

// TestSubmitHardStopEndsTheLookup: a second interrupt (hard closed) ends
// the lookup that follows an interrupted submit at once, saying the job
// may exist.
func TestSubmitHardStopEndsTheLookup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithVisibleAfter(50*time.Second))
		c := newClient(t, slowConfig(fake))
		fake.AddFaults(slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hard := make(chan struct{})
		go func() { time.Sleep(10 * time.Second); close(hard) }()
		start := time.Now()
		_, err := c.Submit(WithHardStop(ctx, hard), JobSpec{Name: "hard", Script: "#!/bin/sh\n"})
		if err == nil || !strings.Contains(err.Error(), "may exist") {
			t.Fatalf("err = %v", err)
		}
		if took := time.Since(start); took > 11*time.Second {
			t.Errorf("returned after %s, want right after the hard stop (10 s)", took)
		}
	})
}
