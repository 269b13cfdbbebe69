package slurm

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestWaitRidesOutTransientErrors: polls answered 408, 429, 503 or a 5xx
// with any Slurm error — each several times in a row — never end the wait
// of a running job; it reaches COMPLETED. The first 408 or 429, or a 500
// carrying an unlisted Slurm error, used to end it (and the runner then
// cancelled a healthy job).
func TestWaitRidesOutTransientErrors(t *testing.T) {
	const runningPolls = 40
	for _, tc := range []struct {
		name string
		f    slurmtest.Fault
	}{
		{"408", slurmtest.Fault{Status: 408}},
		{"429", slurmtest.Fault{Status: 429}},
		{"503", slurmtest.Fault{Status: 503}},
		{"502 zero bytes", slurmtest.Fault{Status: 502, Body: `{"errors":[{"error_number":5005,"error":"Zero Bytes were transmitted or received"}]}`}},
		{"500 other Slurm error", slurmtest.Fault{Status: 500, Body: `{"errors":[{"error_number":2002,"error":"Unable to contact slurm controller"}]}`}},
		{"500 auth error", slurmtest.Fault{Status: 500, Body: `{"errors":[{"error_number":1007,"error":"Protocol authentication error"}]}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithLifecycle(
					slurmtest.Step{State: []string{"RUNNING"}, Polls: runningPolls},
					slurmtest.Step{State: []string{"COMPLETED"}},
				))
				cfg := slowConfig(fake)
				cfg.TokenCommand = []string{"/bin/echo", "tok"} // auth errors refresh first
				cfg.Token = ""
				c := newClient(t, cfg)
				res, err := c.Submit(context.Background(), JobSpec{Name: "follow", Script: "#!/bin/sh\n"})
				if err != nil {
					t.Fatal(err)
				}
				// Every other poll fails, in runs of five, well inside the
				// five-minute error budget.
				for skip := 2; skip < runningPolls*2; skip += 10 {
					f := tc.f
					f.Method, f.Path, f.Action, f.Skip, f.Times = "GET", "/job/", slurmtest.Respond, skip, 5
					fake.AddFaults(f)
				}
				failures := 0
				j, err := c.Wait(context.Background(), res.JobID, WaitOptions{OnError: func(error) { failures++ }})
				if err != nil {
					t.Fatalf("Wait: %v after %d failed polls; a transient answer must not end the wait", err, failures)
				}
				if j.State.Base != StateCompleted {
					t.Errorf("final state %s", j.State)
				}
				if failures == 0 {
					t.Error("no poll failed: the faults did not apply")
				}
			})
		})
	}
}
