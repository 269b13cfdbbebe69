package runs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// fixture is a runs directory under a test profile, and the plan of the
// mock 2P1D topology for any run id.
type fixture struct {
	dir  string
	plan func(id string) *plan.Plan
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	dir := t.TempDir()
	prof := filepath.Join(dir, "profile.toml")
	text := `[slurm]
rest_url = "http://127.0.0.1:6820"
partition = "debug"
gpus_per_node = 4
[paths]
runs_dir = "runs"
squash_dir = "squash"
[models]
mock = "models/mock"
[containers]
mock-image = "slurmbench/mock-engine:latest"
[container]
runtime = "enroot"
`
	if err := os.WriteFile(prof, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(prof)
	if err != nil {
		t.Fatal(err)
	}
	r, err := recipe.Load(filepath.Join("..", "..", "planner", "testdata", "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(ref, squashDir string) (plan.Image, error) {
		return plan.Image{Ref: ref, Squash: filepath.Join(squashDir, "mock.sqsh")}, nil
	}
	return fixture{dir: p.Paths.RunsDir, plan: func(id string) *plan.Plan {
		t.Helper()
		pl, err := planner.Build(planner.Inputs{Profile: p, Recipe: r, RunID: id, Binary: "/usr/bin/true", ResolveImage: resolve})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}}
}

// run writes run id in the given state and sets its files' times to at.
func (f fixture) run(t *testing.T, id, state string, at time.Time) string {
	t.Helper()
	pl := f.plan(id)
	if err := rundir.Create(pl.RunDir); err != nil {
		t.Fatal(err)
	}
	b, err := pl.JSON()
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(pl.PlanFile, b, 0o644))
	jobID := fmt.Sprint(4000 + len(id))
	switch state {
	case "submitting":
		must(rundir.WriteJournal(pl.Layout.Journal, rundir.Journal{RunID: id, SubmitKey: "k", Sending: at}))
	case "running":
		must(rundir.WriteJournal(pl.Layout.Journal, rundir.Journal{RunID: id, SubmitKey: "k", Sending: at, JobID: jobID}))
		must(rundir.WriteStatus(pl.Layout.Status, rundir.Status{Phase: rundir.PhaseBenchmark, JobID: jobID, Updated: at}))
	case "ended":
		must(rundir.WriteJournal(pl.Layout.Journal, rundir.Journal{RunID: id, SubmitKey: "k", Sending: at, JobID: jobID}))
		must(rundir.WriteStatus(pl.Layout.Status, rundir.Status{Phase: rundir.PhaseDone, JobID: jobID, Updated: at}))
		must(rundir.WriteOutcome(pl.Layout.Outcome, rundir.Outcome{Result: rundir.Succeeded, Phase: rundir.PhaseDone, JobID: jobID}))
		must(rundir.WriteStaged(rundir.StagedPath(pl.RunDir), rundir.Staged{Dir: "/stage/out", Files: []string{"/stage/out/r.json"}, Time: at}))
	case "failed":
		must(rundir.WriteJournal(pl.Layout.Journal, rundir.Journal{RunID: id, SubmitKey: "k", Sending: at, JobID: jobID}))
		must(rundir.WriteOutcome(pl.Layout.Outcome, rundir.Outcome{Result: rundir.Failed, Phase: rundir.PhaseHealth, FirstError: "CUDA out of memory", JobID: jobID}))
	}
	for _, p := range []string{pl.PlanFile, pl.Layout.Journal, pl.Layout.Status, pl.Layout.Outcome, rundir.StagedPath(pl.RunDir)} {
		_ = os.Chtimes(p, at, at)
	}
	return jobID
}

func TestListAndFind(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	f.run(t, "a-prepared", "prepared", now.Add(-4*time.Hour))
	f.run(t, "b-submitting", "submitting", now.Add(-3*time.Hour))
	runningJob := f.run(t, "c-running", "running", now.Add(-2*time.Hour))
	endedJob := f.run(t, "d-ended-ok", "ended", now.Add(-1*time.Hour))
	// Not runs: the squash cache, doctor's probe directory, a symlink to a run.
	for _, d := range []string{"squash", ".doctor"} {
		if err := os.MkdirAll(filepath.Join(f.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(f.dir, "d-ended-ok"), filepath.Join(f.dir, "link")); err != nil {
		t.Fatal(err)
	}

	all, err := List(f.dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range all {
		got = append(got, fmt.Sprintf("%s %s job=%s %s active=%v outcome=%s staged=%s", r.ID, r.Recipe, r.JobID, r.State, r.Active, r.Outcome, r.StagedDir))
		if len(r.Problems) > 0 {
			t.Errorf("%s: problems %v", r.ID, r.Problems)
		}
	}
	want := []string{
		"d-ended-ok mock-2p1d job=" + endedJob + " ended active=false outcome=succeeded staged=/stage/out",
		"c-running mock-2p1d job=" + runningJob + " benchmark active=true outcome= staged=",
		"b-submitting mock-2p1d job= submitted active=true outcome= staged=",
		"a-prepared mock-2p1d job= prepared active=false outcome= staged=",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("List:\n%s\nwant (newest first):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if r, err := Find(context.Background(), f.dir, "c-running"); err != nil || r.JobID != runningJob {
		t.Errorf("Find by run id: %+v %v", r, err)
	}
	if r, err := Find(context.Background(), f.dir, endedJob); err != nil || r.ID != "d-ended-ok" {
		t.Errorf("Find by job id: %+v %v", r, err)
	}
	for _, bad := range []string{"nosuch", "../x", "", ".."} {
		if _, err := Find(context.Background(), f.dir, bad); err == nil {
			t.Errorf("Find(%q) found a run", bad)
		}
	}
}

func TestGC(t *testing.T) {
	now := time.Now()
	old, young := now.Add(-10*24*time.Hour), now.Add(-time.Hour)
	slurmSays := func(state string, ended bool, err error) JobState {
		return func(context.Context, string) (string, bool, error) { return state, ended, err }
	}
	tests := []struct {
		name   string
		state  string
		at     time.Time
		ask    JobState
		remove bool
		why    string
	}{
		{name: "ended long ago", state: "ended", at: old, remove: true, why: "ended (succeeded)"},
		{name: "failed long ago", state: "failed", at: old, remove: true, why: "ended (failed)"},
		{name: "ended recently", state: "ended", at: young, why: "younger than 168h0m0s"},
		{name: "never submitted", state: "prepared", at: old, remove: true, why: "never submitted"},
		{name: "running and Slurm not asked", state: "running", at: old, why: "Slurm was not asked"},
		{name: "running and Slurm says running", state: "running", at: old, ask: slurmSays("RUNNING", false, nil), why: "is RUNNING"},
		{name: "running and Slurm unreachable", state: "running", at: old, ask: slurmSays("", false, errors.New("connection refused")), why: "connection refused"},
		{name: "no outcome and Slurm says ended", state: "running", at: old, ask: slurmSays("CANCELLED", true, nil), remove: true, why: "ended (CANCELLED)"},
		{name: "submitted without job id", state: "submitting", at: old, ask: slurmSays("COMPLETED", true, nil), why: "no job id was recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.run(t, "r", tt.state, tt.at)
			dir := filepath.Join(f.dir, "r")
			for _, del := range []bool{false, true} {
				ds, err := GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: 7 * 24 * time.Hour, Ask: tt.ask, Delete: del, Now: now})
				if err != nil || len(ds) != 1 {
					t.Fatalf("GC(delete=%v): %v %+v", del, err, ds)
				}
				d := ds[0]
				if d.Remove != tt.remove || !strings.Contains(d.Why, tt.why) {
					t.Errorf("delete=%v: remove=%v why=%q, want remove=%v why containing %q", del, d.Remove, d.Why, tt.remove, tt.why)
				}
				_, statErr := os.Stat(dir)
				if gone := statErr != nil; gone != (del && tt.remove) || d.Removed != gone {
					t.Fatalf("delete=%v: directory gone=%v, Removed=%v", del, gone, d.Removed)
				}
			}
		})
	}
}

// TestGCKeepsALockedRun: a run whose lock a slurmbench process holds is
// kept even when everything else says it may go.
func TestGCKeepsALockedRun(t *testing.T) {
	for _, locks := range []string{"flock", "lease"} {
		t.Run(locks, func(t *testing.T) {
			t.Setenv("SLURMBENCH_LOCKS", locks)
			gcKeepsALockedRun(t)
		})
	}
}

func gcKeepsALockedRun(t *testing.T) {
	f := newFixture(t)
	f.run(t, "r", "ended", time.Now().Add(-30*24*time.Hour))
	lock, err := flock.Acquire(context.Background(), rundir.LockPath(filepath.Join(f.dir, "r")), flock.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	ds, err := GC(context.Background(), GCOptions{RunsDir: f.dir, OlderThan: time.Hour, Delete: true})
	if err == nil || len(ds) != 1 || ds[0].Removed || !strings.Contains(ds[0].Why, "holds its lock") {
		t.Fatalf("GC removed a locked run or did not say why: %v %+v", err, ds)
	}
	if _, err := os.Stat(filepath.Join(f.dir, "r", "plan.json")); err != nil {
		t.Fatal(err)
	}
}

func TestParseAge(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
		err  bool
	}{
		{"7d", 7 * 24 * time.Hour, false},
		{"1.5d", 36 * time.Hour, false},
		{"36h", 36 * time.Hour, false},
		{"90m", 90 * time.Minute, false},
		{"0", 0, false},
		{"7 days", 0, true},
		{"-1d", 0, true},
		{"d", 0, true},
		// Past time.Duration's ~292 years the age wrapped negative and gc
		// removed every ended run.
		{"999999d", 0, true},
		{"36501d", 0, true},
		{"876001h", 0, true},
		{"3650d", 3650 * 24 * time.Hour, false},
		{"3651d", 0, true},
	} {
		got, err := ParseAge(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseAge(%q) = %v, %v", tt.in, got, err)
		}
	}
}

// TestFindHeldDeployment: a held deployment's job id names the deployment
// (the run that submitted the job), not the runs queued in it; those are
// marked as run in another run's job, and the deployment shows what serves.
func TestFindHeldDeployment(t *testing.T) {
	f := newFixture(t)
	now := time.Now()
	job := f.run(t, "held", "running", now)
	held := f.plan("held")
	if err := rundir.WriteStatus(held.Layout.Status, rundir.Status{Phase: rundir.PhaseServing, JobID: job,
		Serving: &rundir.Serving{Endpoint: "http://10.0.0.1:8000", RunID: "held", Queue: []string{"q1"}}}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"in-1", "in-2"} {
		f.run(t, id, "prepared", now)
		p := f.plan(id)
		if err := rundir.WriteOutcome(p.Layout.Outcome, rundir.Outcome{Result: rundir.Succeeded, JobID: job}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Find(context.Background(), f.dir, job)
	if err != nil || r.ID != "held" || r.InJob || r.Held == nil || r.Held.Endpoint != "http://10.0.0.1:8000" {
		t.Fatalf("Find(%s) = %+v, %v; want the held deployment with its endpoint", job, r, err)
	}
	in, err := Find(context.Background(), f.dir, "in-1")
	if err != nil || !in.InJob || in.JobID != job {
		t.Errorf("a queued run: %+v, %v; want it marked as run in job %s", in, err, job)
	}
}
