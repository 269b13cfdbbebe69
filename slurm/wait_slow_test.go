package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

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

// TestWaitGoneNeedsBothOverAWindow: slurmctld's "not found" ends a wait
// only when accounting agrees on every poll for GoneWindow. Without
// accounting the wait goes on, saying why, however long it lasts; a job
// that answers again after a run of 404s is followed to its end.
func TestWaitGoneNeedsBothOverAWindow(t *testing.T) {
	lifecycle := slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}, Polls: 2}, slurmtest.Step{State: []string{"COMPLETED"}})
	t.Run("no accounting: keeps looking", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.InProcess(), lifecycle)
			c := newClient(t, slowConfig(fake))
			res, err := c.Submit(context.Background(), JobSpec{Name: "g", Script: "#!/bin/sh\n"})
			if err != nil {
				t.Fatal(err)
			}
			var said error
			opts := WaitOptions{
				OnChange: func(j Job) {
					if j.State.Base == StateRunning {
						fake.Forget(int64(j.ID))
					}
				},
				OnError: func(err error) { said = err },
			}
			ctx, cancel := context.WithTimeout(context.Background(), 6*time.Hour)
			defer cancel()
			j, err := c.Wait(ctx, res.JobID, opts)
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrUnknownFinalState) {
				t.Fatalf("Wait = %v; want it to look until its context ended", err)
			}
			if said == nil || !strings.Contains(said.Error(), "cannot be confirmed") || !strings.Contains(said.Error(), "last seen RUNNING") {
				t.Errorf("OnError said %v", said)
			}
			if j.State.Base != StateRunning {
				t.Errorf("job = %s", j.State)
			}
		})
	})
	t.Run("404s then found again", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.InProcess(), lifecycle, slurmtest.WithAccounting())
			c := newClient(t, slowConfig(fake))
			res, err := c.Submit(context.Background(), JobSpec{Name: "g", Script: "#!/bin/sh\n"})
			if err != nil {
				t.Fatal(err)
			}
			notFound := `{"errors":[{"error_number":2017,"error":"Invalid job id specified"}]}`
			fake.AddFaults(slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 30, Action: slurmtest.Respond, Status: 404, Body: notFound})
			j, err := c.Wait(context.Background(), res.JobID, WaitOptions{})
			if err != nil || j.State.Base != StateCompleted {
				t.Fatalf("Wait = %s, %v; want COMPLETED after the 404s", j.State, err)
			}
		})
	})
	t.Run("both agree for the window", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithAccounting())
			c := newClient(t, slowConfig(fake))
			start := time.Now()
			_, err := c.Wait(context.Background(), 4242, WaitOptions{GoneWindow: 3 * time.Minute})
			var u *UnknownFinalStateError
			if !errors.As(err, &u) || u.NoAccounting || u.For < 3*time.Minute {
				t.Fatalf("Wait = %v; want unknown final state after 3m", err)
			}
			if took := time.Since(start); took < 3*time.Minute || took > 4*time.Minute {
				t.Errorf("gave up after %s, want 3m and a poll", took)
			}
		})
	})
}
