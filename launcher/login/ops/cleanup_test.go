package ops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// cleanupCluster is a fake slurmrestd holding a runner's leftovers (its own
// job and srtctl's inferencex- one), an ended job of the same runner,
// another runner's job, and a job whose name only starts with the runner's.
func cleanupCluster(t *testing.T, opts ...slurmtest.FakeOption) (*slurmtest.Fake, *slurm.Client, map[string]slurm.JobID) {
	t.Helper()
	fake := slurmtest.NewFake(t, append([]slurmtest.FakeOption{slurmtest.InProcess(),
		slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}})}, opts...)...)
	c, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok", User: "slurmtest", Transport: fake.Transport(), Defaults: slurm.JobDefaults{Partition: "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]slurm.JobID{}
	for _, name := range []string{"b200-nv_3", "inferencex-b200-nv_3", "b200-nv_3 ended", "b200-nv_4", "b200-nv_30"} {
		jn := name
		if name == "b200-nv_3 ended" {
			jn = "b200-nv_3"
		}
		res, err := c.Submit(t.Context(), slurm.JobSpec{Name: jn, Script: "#!/bin/sh\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids[name] = res.JobID
	}
	if err := c.CancelJob(t.Context(), ids["b200-nv_3 ended"]); err != nil {
		t.Fatal(err)
	}
	return fake, c, ids
}

func liveJobs(t *testing.T, c *slurm.Client) []slurm.JobID {
	t.Helper()
	jobs, err := c.ListJobs(t.Context(), slurm.JobFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var out []slurm.JobID
	for _, j := range jobs {
		if !j.State.Terminal() {
			out = append(out, j.ID)
		}
	}
	slices.Sort(out)
	return out
}

func TestCleanupCancelsTheRunnersJobsOnly(t *testing.T) {
	_, c, ids := cleanupCluster(t)
	var out strings.Builder
	res, err := Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3", Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("Cleanup: %v\n%s", err, out.String())
	}
	if !res.Cancelled || len(res.Jobs) != 2 || res.User != "slurmtest" {
		t.Errorf("result %+v", res)
	}
	want := []slurm.JobID{ids["b200-nv_4"], ids["b200-nv_30"]}
	slices.Sort(want)
	if got := liveJobs(t, c); !slices.Equal(got, want) {
		t.Errorf("live after cleanup %v, want only the other runners' %v\n%s", got, want, out.String())
	}
	for _, name := range []string{"b200-nv_3", "inferencex-b200-nv_3"} {
		if !strings.Contains(out.String(), "cancelling job "+ids[name].String()+" "+name) {
			t.Errorf("output does not say it cancels %s:\n%s", name, out.String())
		}
	}
	// A second attempt finds nothing left.
	out.Reset()
	res, err = Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3"})
	if err != nil || len(res.Jobs) != 0 || res.Cancelled || !strings.Contains(out.String(), "no jobs of slurmtest named b200-nv_3 or inferencex-b200-nv_3") {
		t.Errorf("second cleanup: %+v %v\n%s", res, err, out.String())
	}
}

func TestCleanupDryRunCancelsNothing(t *testing.T) {
	_, c, ids := cleanupCluster(t)
	before := liveJobs(t, c)
	var out strings.Builder
	res, err := Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3", DryRun: true})
	if err != nil || res.Cancelled || len(res.Jobs) != 2 {
		t.Fatalf("dry run: %+v %v", res, err)
	}
	if got := liveJobs(t, c); !slices.Equal(got, before) {
		t.Errorf("dry run changed the queue: %v, was %v", got, before)
	}
	if !strings.Contains(out.String(), "would cancel job "+ids["inferencex-b200-nv_3"].String()) {
		t.Errorf("dry run output:\n%s", out.String())
	}
}

func TestCleanupExitCodes(t *testing.T) {
	_, c, _ := cleanupCluster(t)
	_, err := Cleanup(t.Context(), c, &strings.Builder{}, CleanupOptions{Runner: " "})
	if exitcode.Of(err) != exitcode.Config {
		t.Errorf("empty runner: %v (exit %d), want exit 2", err, exitcode.Of(err))
	}
	// slurmrestd answering errors is exit 11, and nothing is claimed.
	synctest.Test(t, func(t *testing.T) {
		fake, c, _ := cleanupCluster(t)
		fake.AddFaults(slurmtest.Fault{Method: "GET", Path: "/jobs", Action: slurmtest.Respond, Status: 500, Body: "slurmctld down"})
		res, err := Cleanup(t.Context(), c, &strings.Builder{}, CleanupOptions{Runner: "b200-nv_3"})
		if exitcode.Of(err) != exitcode.Slurm || res.Cancelled {
			t.Errorf("slurmrestd failing: %+v %v (exit %d), want exit 11", res, err, exitcode.Of(err))
		}
	})
}

// A job that ignores the cancel keeps cleanup waiting, polling, until the
// timeout says which jobs are left (exit 11), or the context ends it
// (interrupted).
func TestCleanupWaitsForTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake, c, ids := cleanupCluster(t)
		ok, err := os.ReadFile(filepath.Join("..", "..", "..", "slurm", "slurmtest", "samples", "cancel-running.response.json"))
		if err != nil {
			t.Fatal(err)
		}
		// slurmrestd says yes, the job stays: what a node stuck in
		// COMPLETING looks like from here.
		fake.AddFaults(slurmtest.Fault{Method: "DELETE", Path: "/job/", Action: slurmtest.Respond, Status: 200, Body: string(ok)})
		var out strings.Builder
		start := time.Now()
		_, err = Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3", Poll: 5 * time.Second, Timeout: time.Minute})
		if exitcode.Of(err) != exitcode.Slurm || !strings.Contains(err.Error(), ids["b200-nv_3"].String()) {
			t.Fatalf("timeout: %v (exit %d)\n%s", err, exitcode.Of(err), out.String())
		}
		if d := time.Since(start); d != time.Minute {
			t.Errorf("gave up after %s, want the 1m timeout", d)
		}
		if n := strings.Count(out.String(), "waiting for jobs"); n < 10 {
			t.Errorf("polled %d times in a minute at 5s", n)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 12*time.Second)
		defer cancel()
		_, err = Cleanup(ctx, c, &strings.Builder{}, CleanupOptions{Runner: "b200-nv_3", Poll: 5 * time.Second})
		if exitcode.Of(err) != exitcode.Interrupted {
			t.Errorf("context ended: %v (exit %d), want 130", err, exitcode.Of(err))
		}
	})
}

// A run under runs_dir that may still run and whose job carries the
// runner's name is cancelled even when Slurm lists it under another user
// (a root runner's jobs run as paths.owner); a run that ended, or whose
// job id now names another job, is left alone.
func TestCleanupFindsTheRunnersRunsInRunsDir(t *testing.T) {
	_, c, ids := cleanupCluster(t)
	dir := t.TempDir()
	mk := func(id, jobName string, job slurm.JobID, ended bool) {
		run := filepath.Join(dir, id)
		if err := os.MkdirAll(run, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rundir.PlanPath(run), []byte(`{"run_id":"`+id+`","slurm":{"job_name":"`+jobName+`"}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		lay := rundir.New(run)
		if err := rundir.WriteJournal(lay.Journal, rundir.Journal{RunID: id, SubmitKey: "k-" + id, JobName: jobName, JobID: job.String(), Sending: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if ended {
			if err := rundir.WriteOutcome(lay.Outcome, rundir.Outcome{Result: "failed", JobID: job.String()}); err != nil {
				t.Fatal(err)
			}
		}
	}
	mk("r1", "b200-nv_3", ids["b200-nv_3"], false)
	mk("r2", "b200-nv_3", ids["b200-nv_30"], false) // the id is another runner's job now
	mk("r3", "inferencex-b200-nv_3", ids["inferencex-b200-nv_3"], true)
	var out strings.Builder
	// As another user: the listing alone finds nothing of the runner's.
	res, err := Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3", User: "ci", RunsDir: dir, Poll: time.Millisecond})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if len(res.Jobs) != 1 || res.Jobs[0].ID != ids["b200-nv_3"] {
		t.Errorf("found %+v, want only job %d through run r1\n%s", res.Jobs, ids["b200-nv_3"], out.String())
	}
	want := []slurm.JobID{ids["inferencex-b200-nv_3"], ids["b200-nv_4"], ids["b200-nv_30"]}
	slices.Sort(want)
	if got := liveJobs(t, c); !slices.Equal(got, want) {
		t.Errorf("live %v, want %v", got, want)
	}
}

// A job that ended but is still COMPLETING holds its nodes: cleanup waits
// for it as infx waits on squeue (which lists it), without cancelling it,
// and returns at the first poll after its nodes are released.
func TestCleanupWaitsForCompletingJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithLifecycle(
			slurmtest.Step{State: []string{"CANCELLED", "COMPLETING"}}))
		c, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok", User: "slurmtest", Transport: fake.Transport(), Defaults: slurm.JobDefaults{Partition: "debug"}})
		if err != nil {
			t.Fatal(err)
		}
		sub, err := c.Submit(t.Context(), slurm.JobSpec{Name: "b200-nv_3", Script: "#!/bin/sh\n"})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			time.Sleep(22 * time.Second)
			fake.SetSteps(int64(sub.JobID), slurmtest.Step{State: []string{"CANCELLED"}})
		}()
		var out strings.Builder
		start := time.Now()
		res, err := Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3", Poll: 5 * time.Second, Timeout: 5 * time.Minute})
		if err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if d := time.Since(start); d != 25*time.Second {
			t.Errorf("returned after %s, want the first poll after the release (25s)", d)
		}
		if len(res.Jobs) != 1 || res.Jobs[0].ID != sub.JobID || !strings.Contains(out.String(), "waiting for job "+sub.JobID.String()) ||
			strings.Contains(out.String(), "cancelling") || !strings.Contains(out.String(), "to leave the queue") {
			t.Errorf("%+v\n%s", res, out.String())
		}
	})
}

// TestCleanupRefusesWithoutAUser: with no user configured and $USER unset,
// cleanup cancels nothing by name (audit #33 row 6: it cancelled every
// user's jobs of that name) and says how to name the user.
func TestCleanupRefusesWithoutAUser(t *testing.T) {
	for _, dry := range []bool{false, true} {
		t.Run(map[bool]string{false: "cancel", true: "dry run"}[dry], func(t *testing.T) {
			t.Setenv("USER", "")
			fake := slurmtest.NewFake(t, slurmtest.InProcess(), slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}}))
			c, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok", Transport: fake.Transport(), Defaults: slurm.JobDefaults{Partition: "debug"}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Submit(t.Context(), slurm.JobSpec{Name: "b200-nv_3", Script: "#!/bin/sh\n"}); err != nil {
				t.Fatal(err)
			}
			before := liveJobs(t, c)
			res, err := Cleanup(t.Context(), c, &strings.Builder{}, CleanupOptions{Runner: "b200-nv_3", DryRun: dry, Poll: time.Millisecond})
			if exitcode.Of(err) != exitcode.Config || !strings.Contains(fmt.Sprint(err), "no user") {
				t.Fatalf("Cleanup = %v (exit %d), want exit 2 naming the missing user", err, exitcode.Of(err))
			}
			if res.Cancelled || len(res.Jobs) != 0 {
				t.Errorf("result %+v: want nothing found or cancelled", res)
			}
			if after := liveJobs(t, c); !slices.Equal(before, after) {
				t.Errorf("live jobs %v, want %v", after, before)
			}
		})
	}
}

// TestCleanupOnABusyCluster: with 8,000 other jobs queued (82 MiB of
// listing, past the 64 MiB read cap: cleanup exited 11 and the leftover
// job stayed, audit #33 row 5) cleanup cancels the runner's job: with
// accounting slurmdbd filters by user, name and state on its side (and
// cleanup reads kilobytes); without, slurmctld's listing is read one
// record at a time.
func TestCleanupOnABusyCluster(t *testing.T) {
	for _, accounting := range []bool{true, false} {
		t.Run(map[bool]string{true: "accounting", false: "slurmctld only"}[accounting], func(t *testing.T) {
			var opts []slurmtest.FakeOption
			if accounting {
				opts = append(opts, slurmtest.WithAccounting())
			}
			fake, c, ids := cleanupCluster(t, opts...)
			fake.AddJobs(8000, time.Now().Add(-time.Hour))
			var out strings.Builder
			res, err := Cleanup(t.Context(), c, &out, CleanupOptions{Runner: "b200-nv_3", Poll: time.Millisecond})
			if err != nil {
				t.Fatalf("Cleanup: %v\n%s", err, out.String())
			}
			var got []slurm.JobID
			for _, j := range res.Jobs {
				got = append(got, j.ID)
			}
			slices.Sort(got)
			want := []slurm.JobID{ids["b200-nv_3"], ids["inferencex-b200-nv_3"]}
			if !slices.Equal(got, want) || !res.Cancelled {
				t.Errorf("cleaned %v (cancelled %v), want %v", got, res.Cancelled, want)
			}
			for _, id := range want {
				if j, err := c.GetJob(t.Context(), id); err != nil || !j.Terminal() {
					t.Errorf("job %d: %v, %v; want it cancelled", id, j.State, err)
				}
			}
		})
	}
}
