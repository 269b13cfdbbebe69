package runs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// TestGCKeepsRunsOfAHeldDeployment: runs a held deployment serves, runs or
// has queued, and runs queued in a held job that is not confirmed ended,
// stay however old and finished they look: the held job's servers still
// write their logs and step files there.
func TestGCKeepsRunsOfAHeldDeployment(t *testing.T) {
	f := newFixture(t)
	old := time.Now().Add(-30 * 24 * time.Hour)
	job := f.run(t, "held", "running", old)
	held := f.plan("held")
	if err := rundir.WriteStatus(held.Layout.Status, rundir.Status{Phase: rundir.PhaseServing, JobID: job,
		Serving: &rundir.Serving{RunID: "in-serves", Queue: []string{"in-queued"}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"in-serves", "in-queued", "in-done"} {
		f.run(t, id, "prepared", old)
		p := f.plan(id)
		if err := rundir.WriteOutcome(p.Layout.Outcome, rundir.Outcome{Result: rundir.Succeeded, JobID: job}); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{p.PlanFile, p.Layout.Outcome} {
			_ = os.Chtimes(path, old, old)
		}
	}
	_ = os.Chtimes(held.Layout.Status, old, old)
	ds, err := GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.Removed {
			t.Errorf("removed %s (%s) while held job %s may still run", d.Run.ID, d.Why, job)
		}
	}
	// Once Slurm confirms the held job ended, the queued runs may go.
	ended := func(context.Context, string) (string, bool, error) { return "COMPLETED", true, nil }
	ds, err = GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true, Ask: ended})
	if err != nil {
		t.Fatal(err)
	}
	removed := 0
	for _, d := range ds {
		if d.Removed {
			removed++
		}
	}
	if removed != len(ds) {
		t.Errorf("after the held job ended, %d of %d removed: %+v", removed, len(ds), ds)
	}
}

// TestGCKeepsAJobSlurmDoesNotKnow: "not found" from slurmctld and
// accounting (another cluster's profile over a shared runs_dir, a
// slurmrestd without accounting) does not prove a job ended.
func TestGCKeepsAJobSlurmDoesNotKnow(t *testing.T) {
	for _, accounting := range []bool{false, true} {
		f := newFixture(t)
		f.run(t, "r", "running", time.Now().Add(-30*24*time.Hour))
		var opts []slurmtest.FakeOption
		if accounting {
			opts = append(opts, slurmtest.WithAccounting())
		}
		fake := slurmtest.NewFake(t, opts...)
		client, err := slurm.New(slurm.Config{URL: fake.URL, Token: "t", Retry: slurm.RetryPolicy{Max: -1}})
		if err != nil {
			t.Fatal(err)
		}
		ds, err := GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true, Ask: SlurmJobState(client)})
		if err != nil || len(ds) != 1 {
			t.Fatal(err, ds)
		}
		if ds[0].Removed || !strings.Contains(ds[0].Why, "not confirmed ended") {
			t.Errorf("accounting=%v: %+v; want the run kept, saying its end is not confirmed", accounting, ds[0])
		}
	}
}

// TestGCStopsAtASignal: once ctx ends, gc --delete removes nothing more.
func TestGCStopsAtASignal(t *testing.T) {
	f := newFixture(t)
	old := time.Now().Add(-30 * 24 * time.Hour)
	f.run(t, "b-newer", "running", old.Add(time.Hour))
	f.run(t, "a-older", "ended", old)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Slurm's answer about the newer run arrives with the signal.
	ask := func(context.Context, string) (string, bool, error) { cancel(); return "COMPLETED", true, nil }
	ds, err := GC(ctx, GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true, Ask: ask})
	if err == nil || !strings.Contains(err.Error(), "stopped") {
		t.Errorf("GC after a signal: err %v, want it to say it stopped", err)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "a-older", "plan.json")); err != nil {
		t.Errorf("a run was removed after the signal: %v (%+v)", err, ds)
	}
}

// TestListRefusesAFIFOAndAHugePlan: a FIFO named plan.json does not block
// runs ls/gc, a plan past 16 MiB is not read, and a signal stops a listing.
func TestListRefusesAFIFOAndAHugePlan(t *testing.T) {
	f := newFixture(t)
	f.run(t, "ok", "ended", time.Now())
	for _, id := range []string{"fifo", "huge"} {
		if err := os.MkdirAll(filepath.Join(f.dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(f.dir, "fifo", "plan.json"), 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	if err := os.WriteFile(filepath.Join(f.dir, "huge", "plan.json"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(f.dir, "huge", "plan.json"), 17<<20); err != nil {
		t.Fatal(err)
	}
	all, err := List(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	problems := map[string]string{}
	for _, r := range all {
		problems[r.ID] = strings.Join(r.Problems, "; ")
	}
	if !strings.Contains(problems["fifo"], "not a regular file") || !strings.Contains(problems["huge"], "16 MiB") || problems["ok"] != "" {
		t.Errorf("problems %q; want the FIFO refused and the huge plan over 16 MiB", problems)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ListContext(ctx, f.dir); err == nil {
		t.Error("a cancelled listing went on")
	}
}

// TestGCKeepsARunWithAnUnreadableJournal: a run whose submit.json exists
// but cannot be read, and that has no status yet, may have a live job:
// gc keeps it (audit #33 row 4: it was removed as "never submitted").
func TestGCKeepsARunWithAnUnreadableJournal(t *testing.T) {
	for _, tt := range []struct {
		name  string
		write func(path string) error
	}{
		{"truncated", func(p string) error { return os.WriteFile(p, []byte(`{"run_id":"x","job_id":"12`), 0o644) }},
		{"empty", func(p string) error { return os.WriteFile(p, nil, 0o644) }},
		{"not json", func(p string) error { return os.WriteFile(p, []byte("\x00\x01garbage"), 0o644) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			old := time.Now().Add(-30 * 24 * time.Hour)
			f.run(t, "unreadable", "prepared", old)
			pl := f.plan("unreadable")
			if err := tt.write(pl.Layout.Journal); err != nil {
				t.Fatal(err)
			}
			_ = os.Chtimes(pl.Layout.Journal, old, old)
			ended := func(context.Context, string) (string, bool, error) { return "COMPLETED", true, nil }
			ds, err := GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true, Ask: ended})
			if err != nil {
				t.Fatal(err)
			}
			if len(ds) != 1 || ds[0].Remove || ds[0].Removed {
				t.Fatalf("decisions %+v: want the run kept", ds)
			}
			if _, err := os.Stat(pl.RunDir); err != nil {
				t.Errorf("run directory: %v", err)
			}
		})
	}
}

// TestGCKeepsARunWhenSlurmAnswersForAnotherJob: a proxy answering GET
// job/N with job 999's record (ended) made gc remove job N's directory
// while N ran (audit #33 row 3); the record is now a transport error, and
// the run is kept, saying so.
func TestGCKeepsARunWhenSlurmAnswersForAnotherJob(t *testing.T) {
	for _, where := range []string{"/slurm/", "/slurmdb/"} {
		t.Run(where, func(t *testing.T) {
			f := newFixture(t)
			job := f.run(t, "r", "running", time.Now().Add(-30*24*time.Hour))
			fake := slurmtest.NewFake(t, slurmtest.WithAccounting())
			other := `{"jobs":[{"job_id":999,"name":"x","job_state":["COMPLETED"]}],"errors":[],"warnings":[]}`
			if where == "/slurmdb/" {
				other = `{"jobs":[{"job_id":999,"name":"x","state":{"current":["COMPLETED"]}}],"errors":[],"warnings":[]}` // slurmctld forgot the job; accounting answers for another
				fake.AddFaults(slurmtest.Fault{Method: "GET", Path: "/slurm/v0.0.42/job/" + job, Action: slurmtest.Respond, Status: 404,
					Body: `{"errors":[{"error_number":2017,"error":"Invalid job id specified"}],"warnings":[]}`})
			}
			fake.AddFaults(slurmtest.Fault{Method: "GET", Path: where + "v0.0.42/job/" + job, Action: slurmtest.Respond, Status: 200, Body: other})
			client, err := slurm.New(slurm.Config{URL: fake.URL, Token: "t", Retry: slurm.RetryPolicy{Max: -1}})
			if err != nil {
				t.Fatal(err)
			}
			ds, err := GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true, Ask: SlurmJobState(client)})
			if err != nil || len(ds) != 1 {
				t.Fatal(err, ds)
			}
			if ds[0].Removed || ds[0].Remove || !strings.Contains(ds[0].Why, "job 999") {
				t.Errorf("%+v; want the run kept, naming the record of job 999", ds[0])
			}
		})
	}
}
