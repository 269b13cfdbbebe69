package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
)

func TestNewNamesEveryFileUnderRoot(t *testing.T) {
	root := "/shared/runs/r1"
	l := New(root)
	want := Layout{
		Logs: root + "/logs", Results: root + "/results", Status: root + "/status.json", Outcome: root + "/outcome.json",
		DriverLog: root + "/logs/driver.log", BatchOut: root + "/logs/batch.out", Steps: root + "/steps",
		Progress: root + "/results/bench_progress.json", Journal: root + "/submit.json",
	}
	if l != want {
		t.Fatalf("New(%q) =\n%+v\nwant\n%+v", root, l, want)
	}
	if got := l.StepSpec("prefill_w0"); got != root+"/steps/prefill_w0.json" {
		t.Errorf("StepSpec = %q", got)
	}
	if PlanPath(root) != root+"/plan.json" || BinaryPath(root) != root+"/bin/slurmbench" || JobScriptPath(root) != root+"/job.sh" {
		t.Errorf("plan, binary, job script: %q %q %q", PlanPath(root), BinaryPath(root), JobScriptPath(root))
	}
}

// TestCreateIsExclusive: of many runs creating one run id at once, exactly
// one gets the directory.
func TestCreateIsExclusive(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runs", "same-id")
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Create(root)
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), root):
			t.Errorf("loser's error %v: want fs.ErrExist naming %s", err, root)
		}
	}
	if won != 1 {
		t.Fatalf("%d of %d Create calls succeeded, want exactly 1", won, n)
	}
	for _, d := range append(New(root).Dirs(), filepath.Dir(BinaryPath(root))) {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			t.Errorf("%s not created: %v", d, err)
		}
	}
}

func TestFilesRoundTrip(t *testing.T) {
	l := New(t.TempDir())
	for _, d := range l.Dirs() {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	code := 3
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := Outcome{Result: Failed, Phase: PhaseHealth, Class: diagnose.HealthDeadline, ExitCode: &code, JobID: "42", Started: now, Ended: now}
	if err := WriteOutcome(l.Outcome, o); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadOutcome(l.Outcome); err != nil || !reflect.DeepEqual(got, o) {
		t.Errorf("outcome: %+v, %v", got, err)
	}
	s := Status{Phase: PhaseBenchmark, JobID: "42", Hosts: []string{"n1"}, Health: &HealthStatus{Attempt: 2}}
	if err := WriteStatus(l.Status, s); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadStatus(l.Status); err != nil || !reflect.DeepEqual(got, s) {
		t.Errorf("status: %+v, %v", got, err)
	}
	p := BenchProgress{Point: 1, Of: 2, Concurrency: 8, State: StateRunning}
	if err := WriteBenchProgress(l.Progress, p); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadBenchProgress(l.Progress); err != nil || !reflect.DeepEqual(got, p) {
		t.Errorf("progress: %+v, %v", got, err)
	}
	j := Journal{RunID: "r1", JobName: "n", SubmitKey: "slurmbench-submit=ab", Sending: now}
	if _, err := ReadJournal(l.Journal); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing journal: %v, want fs.ErrNotExist", err)
	}
	if err := WriteJournal(l.Journal, j); err != nil {
		t.Fatal(err)
	}
	j.JobID, j.Submitted = "42", now
	if err := WriteJournal(l.Journal, j); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadJournal(l.Journal); err != nil || got != j {
		t.Errorf("journal: %+v, %v", got, err)
	}
	if err := WriteJournal(l.Journal, Journal{RunID: "r1"}); err == nil {
		t.Error("a journal without a submit key was written")
	}
}

func TestReadRefusesHugeAndBadFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "status.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(readlimit.Default + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := ReadStatus(big); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge status: %v", err)
	}
	bad := filepath.Join(dir, "outcome.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	if _, err := ReadOutcome(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad outcome: %v, want an error naming %s", err, bad)
	}
}
