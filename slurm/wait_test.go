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

func fastWait(onChange func(Job)) WaitOptions {
	return WaitOptions{PollMin: time.Millisecond, PollMax: 2 * time.Millisecond, OnChange: onChange}
}

func TestWaitReportsEachStateOnce(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(
		slurmtest.Step{State: []string{"PENDING"}, Polls: 3, Reason: "Resources"},
		slurmtest.Step{State: []string{"RUNNING"}, Polls: 4},
		slurmtest.Step{State: []string{"COMPLETED", "COMPLETING"}, Polls: 1},
		slurmtest.Step{State: []string{"COMPLETED"}},
	))
	c := newClient(t, testConfig(fake.URL, "tok"))
	res, err := c.Submit(ctxT(t), JobSpec{Name: "w", Script: "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	j, err := c.Wait(ctxT(t), res.JobID, fastWait(func(j Job) { seen = append(seen, j.State.String()) }))
	if err != nil {
		t.Fatal(err)
	}
	// The waiter stops at the first terminal state, flags and all.
	if want := []string{"PENDING", "RUNNING", "COMPLETED+COMPLETING"}; strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("states = %v, want %v", seen, want)
	}
	if !j.Success() || j.ID != res.JobID {
		t.Errorf("final job = %+v", j)
	}
}

func TestWaitFailedJob(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(
		slurmtest.Step{State: []string{"RUNNING"}, Polls: 1},
		slurmtest.Step{State: []string{"FAILED"}, Exit: 3, Reason: "NonZeroExitCode"},
	))
	c := newClient(t, testConfig(fake.URL, "tok"))
	res, _ := c.Submit(ctxT(t), JobSpec{Name: "f", Script: "#!/bin/sh\n"})
	j, err := c.Wait(ctxT(t), res.JobID, fastWait(nil))
	if err != nil {
		t.Fatal(err)
	}
	if j.State.Base != StateFailed || j.Exit.Code != 3 || j.Success() || j.Outcome() != "FAILED 3:0 (NonZeroExitCode)" {
		t.Errorf("job = %s", j.Outcome())
	}
}

// TestWaitNeverReportsAStateItDidNotRead polls through a proxy that fails
// most requests in different ways; every state reported must be one that
// a delivered response carried, and failures must reach OnError instead.
func TestWaitNeverReportsAStateItDidNotRead(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(
		slurmtest.Step{State: []string{"PENDING"}, Polls: 2},
		slurmtest.Step{State: []string{"RUNNING"}, Polls: 6},
		slurmtest.Step{State: []string{"COMPLETED"}},
	))
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	cfg := testConfig(proxy.URL, "tok")
	cfg.Retry.Max = -1 // let every failure reach the waiter
	cfg.RequestTimeout = 100 * time.Millisecond
	c := newClient(t, cfg)
	res, err := c.Submit(ctxT(t), JobSpec{Name: "p", Script: "#!/bin/sh\n"})
	if err != nil {
		t.Fatal(err)
	}
	proxy.Add(
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Respond, Status: 500, Body: `{"jobs":[{"job_id":1,"job_state":["FAILED"]}],"errors":[{"error_number":1001,"error":"Unable to contact slurm controller (connect failure)"}]}`},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Drop},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.StallResponse, Delay: time.Second},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Respond, Status: 200, Body: `{"jobs":[{"job_id":1,"job_state":["TIMEOUT"]`},
		slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Times: 2, Action: slurmtest.Reset},
	)
	var reported []string
	var failures int
	opts := fastWait(func(j Job) { reported = append(reported, j.State.String()) })
	opts.OnError = func(error) { failures++ }
	j, err := c.Wait(ctxT(t), res.JobID, opts)
	if err != nil {
		t.Fatal(err)
	}
	delivered := map[string]bool{}
	for _, r := range proxy.Requests() {
		if r.Delivered && strings.Contains(r.Path, "/job/") && r.Method == "GET" {
			for _, s := range []string{"PENDING", "RUNNING", "COMPLETED", "FAILED", "TIMEOUT"} {
				if strings.Contains(string(r.Body), `"`+s+`"`) {
					delivered[s] = true
				}
			}
		}
	}
	for _, s := range reported {
		if !delivered[s] {
			t.Errorf("reported %s, which no delivered response carried (reported %v)", s, reported)
		}
	}
	if strings.Join(reported, ",") != "PENDING,RUNNING,COMPLETED" || j.State.Base != StateCompleted {
		t.Errorf("reported %v, final %s", reported, j.State)
	}
	faulted := 0
	for _, r := range proxy.Requests() {
		if r.Action != 0 {
			faulted++
		}
	}
	// net/http itself resends an idempotent GET once when a reused
	// connection is dropped before answering, so two back-to-back drops
	// may surface as one failure.
	if failures > faulted || failures < faulted-2 {
		t.Errorf("OnError calls = %d for %d faulted requests", failures, faulted)
	}
}

func TestWaitGivesUpAfterErrorTime(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	cfg := testConfig(proxy.URL, "tok")
	cfg.Retry.Max = -1
	c := newClient(t, cfg)
	res, _ := c.Submit(ctxT(t), JobSpec{Name: "e", Script: "#!/bin/sh\n"})
	proxy.Add(slurmtest.Fault{Method: "GET", Path: "/job/", Skip: 1, Action: slurmtest.Respond, Status: 503})
	opts := fastWait(nil)
	opts.ErrorTime = 30 * time.Millisecond
	j, err := c.Wait(ctxT(t), res.JobID, opts)
	if err == nil || !strings.Contains(err.Error(), "polling failed for 30ms") || !strings.Contains(err.Error(), "slurmrestd 503") {
		t.Fatalf("err = %v", err)
	}
	if j.State.Base != StatePending {
		t.Errorf("returned job %s, want the last one read (PENDING)", j.State)
	}
}

func TestWaitStopsOnAuthFailure(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithTokens("tok"))
	c := newClient(t, testConfig(fake.URL, "tok"))
	res, _ := c.Submit(ctxT(t), JobSpec{Name: "a", Script: "#!/bin/sh\n"})
	fake.RevokeToken("tok")
	_, err := c.Wait(ctxT(t), res.JobID, fastWait(nil))
	if !IsAuth(err) {
		t.Fatalf("err = %v, want an auth error at once", err)
	}
}

func TestWaitContextCancel(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	c := newClient(t, testConfig(fake.URL, "tok"))
	res, _ := c.Submit(ctxT(t), JobSpec{Name: "c", Script: "#!/bin/sh\n"})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// The fake job runs forever: Wait returns only through the context
	// (a hang is the test binary's timeout, not a clock ceiling here).
	j, err := c.Wait(ctx, res.JobID, WaitOptions{PollMin: 10 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	if j.State.Base != StateRunning {
		t.Errorf("returned with %s, want the last state seen (RUNNING)", j.State)
	}
}

func TestWaitForgottenJob(t *testing.T) {
	lifecycle := slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}, Polls: 2}, slurmtest.Step{State: []string{"COMPLETED"}})
	t.Run("accounting resolves it", func(t *testing.T) {
		fake := slurmtest.NewFake(t, lifecycle, slurmtest.WithAccounting())
		c := newClient(t, testConfig(fake.URL, "tok"))
		res, _ := c.Submit(ctxT(t), JobSpec{Name: "g", Script: "#!/bin/sh\n"})
		j, err := c.GetJob(ctxT(t), res.JobID)
		if err != nil || j.State.Base != StateRunning {
			t.Fatalf("%s %v", j.State, err)
		}
		_, _ = c.GetJob(ctxT(t), res.JobID) // advances the fake to COMPLETED
		fake.Forget(int64(res.JobID))
		j, err = c.Wait(ctxT(t), res.JobID, fastWait(nil))
		if err != nil || j.Source != SourceAccounting || !j.Success() {
			t.Fatalf("job = %+v, %v", j, err)
		}
	})
}

func TestAccountingAbsenceIsRemembered(t *testing.T) {
	fake := slurmtest.NewFake(t)
	proxy := slurmtest.NewFaultProxy(t, fake.URL)
	c := newClient(t, testConfig(proxy.URL, "tok"))
	for i := 0; i < 3; i++ {
		if _, err := c.AccountingJob(ctxT(t), 5); !errors.Is(err, ErrNoAccounting) {
			t.Fatalf("err = %v", err)
		}
	}
	if n := proxy.Count("GET", "/slurmdb/"); n != 1 {
		t.Errorf("slurmdb requests = %d, want 1", n)
	}
}

func TestCancelAndSignal(t *testing.T) {
	fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
	c := newClient(t, testConfig(fake.URL, "tok"))
	res, _ := c.Submit(ctxT(t), JobSpec{Name: "k", Script: "#!/bin/sh\n"})
	if err := c.SignalJob(ctxT(t), res.JobID, "usr1"); err != nil {
		t.Fatal(err)
	}
	if j, _ := c.GetJob(ctxT(t), res.JobID); j.State.Base != StateRunning {
		t.Fatalf("SIGUSR1 ended the job: %s", j.State)
	}
	if err := c.SignalJob(ctxT(t), res.JobID, "USR1; rm -rf /"); err == nil {
		t.Error("a malformed signal was accepted")
	}
	if err := c.CancelJob(ctxT(t), res.JobID); err != nil {
		t.Fatal(err)
	}
	j, err := c.Wait(ctxT(t), res.JobID, fastWait(nil))
	if err != nil || j.State.Base != StateCancelled || j.Exit.Signal != 15 {
		t.Fatalf("job = %s, %v", j.Outcome(), err)
	}
	// v0.0.42 reports an unknown job; v0.0.41 says nothing.
	if err := c.CancelJob(ctxT(t), 424242); !IsNotFound(err) || !strings.Contains(err.Error(), "cancelling job 424242: slurmrestd 200: Invalid job id specified") {
		t.Errorf("v0.0.42 cancel of unknown job: %v", err)
	}
	cfg := testConfig(fake.URL, "tok")
	cfg.APIVersion = "v0.0.41"
	if err := newClient(t, cfg).CancelJob(ctxT(t), 424242); err != nil {
		t.Errorf("v0.0.41 cancel of unknown job: %v", err)
	}
}

// TestPollCadence pins the waiter's schedule: fast at first, then one call
// per PollMax. Over the first minute of a job that keeps running the
// waiter makes this many calls, and 6 per minute after that.
func TestPollCadence(t *testing.T) {
	var gaps []time.Duration
	var elapsed time.Duration
	gap := time.Duration(0)
	calls := 1 // the first poll is immediate
	for elapsed < time.Minute {
		gap = nextPoll(gap, DefaultPollMin, DefaultPollMax)
		gaps = append(gaps, gap)
		elapsed += gap
		if elapsed <= time.Minute {
			calls++
		}
	}
	if gaps[0] != 500*time.Millisecond || gaps[1] != 750*time.Millisecond || gaps[len(gaps)-1] != 10*time.Second {
		t.Errorf("gaps = %v", gaps)
	}
	if calls != 12 {
		t.Errorf("calls in the first minute = %d, want 12", calls)
	}
	steady := 0
	for g, t0 := DefaultPollMax, time.Duration(0); t0+g <= time.Minute; t0 += g {
		steady++
	}
	if steady != 6 {
		t.Errorf("steady calls per minute = %d, want 6", steady)
	}
}

// TestWaitWake: a job that ran long enough for the gaps to reach PollMax
// ends; with a wake the waiter sees it at once, without one at its next
// poll, up to PollMax later. Under synctest the clock is exact.
func TestWaitWake(t *testing.T) {
	for _, wake := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
			c := newClient(t, slowConfig(fake))
			res, err := c.Submit(context.Background(), JobSpec{Name: "w", Script: "#!/bin/sh\n"})
			if err != nil {
				t.Fatal(err)
			}
			wakeCh := make(chan struct{}, 1)
			type waited struct {
				j   Job
				err error
				at  time.Time
			}
			done := make(chan waited, 1)
			go func() {
				j, err := c.Wait(context.Background(), res.JobID, WaitOptions{Wake: wakeCh})
				done <- waited{j, err, time.Now()}
			}()
			time.Sleep(time.Minute) // the gaps are at PollMax by now
			synctest.Wait()
			fake.SetSteps(int64(res.JobID), slurmtest.Step{State: []string{"COMPLETED"}})
			ended := time.Now()
			if wake {
				wakeCh <- struct{}{}
			}
			w := <-done
			if w.err != nil || !w.j.Success() {
				t.Fatalf("wait: %+v, %v", w.j, w.err)
			}
			seen := w.at.Sub(ended)
			switch {
			case wake && seen > time.Second:
				t.Errorf("woken: the end seen %s after it came, want at once", seen)
			case !wake && seen <= time.Second:
				t.Errorf("not woken: the end seen %s after it came: the test does not tell waking from polling", seen)
			}
			t.Logf("wake %v: the end seen %s after it came", wake, seen)
		})
	}
}
