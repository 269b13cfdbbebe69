package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/pareto"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// The runner against the fake slurmrestd, in process under
// testing/synctest, with a fake driver standing in for the job: it writes
// status, results and outcome into the run directory as the real one does
// and then ends the job in the fake. Submit → follow → collect → stage and
// each failure layer's exit code run in milliseconds, with the production
// poll and lookup timing.

var testConcs = []int{2, 4}

// testPlan is a one-node aggregated plan (runtime none) under runs.
func testPlan(t *testing.T, runs, runID string) *plan.Plan {
	t.Helper()
	root := filepath.Join(runs, runID)
	l := rundir.New(root)
	pl := &plan.Plan{
		Version: plan.PlanVersion, Name: "runner-test", RunID: runID, RunDir: root,
		PlanFile: rundir.PlanPath(root), Binary: rundir.BinaryPath(root),
		Mode: "aggregated", Nodes: 1, GPUsPerNode: 4, GPUs: plan.GPUCount{Agg: 4, Total: 4}, Runtime: profile.RuntimeNone,
		Slurm:     plan.Slurm{JobName: "runner-test", Partition: "debug", TimeLimitMinutes: 30, Nodes: 1, GPUsPerNode: 4, Comment: "slurmbench-run=" + runID},
		Benchmark: plan.Benchmark{Type: "sa-bench", ISL: 32, OSL: 8, ResultDir: filepath.Join(l.Results, "sa-bench_isl_32_osl_8")},
		Layout:    l,
	}
	for _, c := range testConcs {
		pl.Points = append(pl.Points, plan.BenchPoint{Concurrency: c, NumPrompts: 10 * c, ResultFile: rawName(t, c)})
	}
	return pl
}

// rawName is the result file name of concurrency c on the test plan's 4 GPUs.
func rawName(t *testing.T, c int) string {
	name, err := results.RawName(results.PointID{Concurrency: c, GPUs: 4})
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// job is what the fake driver does with the job once it runs.
type job struct {
	points  []int           // results written (valid)
	outcome *rundir.Outcome // nil: none written (the job died under the driver)
	state   string          // the job's end state (default COMPLETED)
	exit    int
	// hold keeps the job running until closed (nil: end at once).
	hold chan struct{}
}

// saBench is a complete SA-Bench result of concurrency c.
func saBench(c int) map[string]any {
	n := 10 * c
	m := map[string]any{
		"date": "20250101-000000", "backend": "dynamo", "model_id": "mock/model", "tokenizer_id": "/model", "best_of": 1,
		"num_prompts": n, "request_rate": "inf", "burstiness": 1.0, "max_concurrency": c, "duration": 10.0, "completed": n,
		"total_input_tokens": n * 32, "total_output_tokens": n * 8, "request_throughput": float64(n) / 10,
		"output_throughput": 80.0, "total_token_throughput": 400.0, "input_lens": []int{32}, "output_lens": []int{8},
	}
	for _, metric := range []string{"ttft", "tpot", "itl", "e2el"} {
		for _, stat := range []string{"mean", "median", "std", "p90", "p99", "p99.9"} {
			m[stat+"_"+metric+"_ms"] = 10.0
		}
	}
	return m
}

// fakeDriver plays the job: once the fake slurmrestd has it, it writes
// the run directory's files as the driver does, then ends the job.
func fakeDriver(t *testing.T, fake *slurmtest.Fake, pl *plan.Plan, j job) {
	for start := time.Now(); len(fake.Jobs()) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Since(start) > time.Hour {
			t.Error("fake driver: no job was submitted")
			return
		}
	}
	jobs := fake.Jobs()
	id := jobs[len(jobs)-1].ID // the newest: the one a resend made
	l := pl.Layout
	write := func(path string, v any) { writeRunFile(t, path, v) }
	for _, ph := range []rundir.Phase{rundir.PhaseStarting, rundir.PhaseHealth, rundir.PhaseBenchmark} {
		write(l.Status, rundir.Status{Phase: ph, JobID: "x", Hosts: []string{"n1"}})
		time.Sleep(3 * time.Second)
	}
	if j.hold != nil {
		<-j.hold
	}
	for _, c := range j.points {
		write(filepath.Join(pl.Benchmark.ResultDir, rawName(t, c)), saBench(c))
	}
	if j.outcome != nil {
		write(l.Outcome, *j.outcome)
	}
	state := j.state
	if state == "" {
		state = "COMPLETED"
	}
	fake.SetSteps(id, slurmtest.Step{State: []string{state}, Exit: j.exit})
}

// writeRunFile writes v as JSON at path, as the driver writes the run
// directory's files.
func writeRunFile(t *testing.T, path string, v any) {
	b, _ := json.Marshal(v)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Error(err)
	}
}

type env struct {
	runs, stage string
	fake        *slurmtest.Fake
	client      *slurm.Client
	progress    *strings.Builder
}

func newEnv(t *testing.T, opts ...slurmtest.FakeOption) *env {
	t.Helper()
	fake := slurmtest.NewFake(t, append([]slurmtest.FakeOption{slurmtest.InProcess(),
		slurmtest.WithLifecycle(slurmtest.Step{State: []string{"RUNNING"}})}, opts...)...)
	c, err := slurm.New(slurm.Config{URL: fake.URL, Token: "tok", Transport: fake.Transport(), Defaults: slurm.JobDefaults{Partition: "debug"}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return &env{runs: filepath.Join(dir, "runs"), stage: filepath.Join(dir, "stage"), fake: fake, client: c, progress: &strings.Builder{}}
}

func (e *env) options(t *testing.T, pl *plan.Plan) Options {
	bin := filepath.Join(t.TempDir(), "slurmbench")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return Options{Plan: pl, Binary: bin, Client: e.client, Progress: e.progress,
		Stage: CollectOptions{StageDir: e.stage}}
}

// staged are the result files in the stage directory.
func (e *env) staged(t *testing.T) []string {
	ents, _ := os.ReadDir(e.stage)
	var out []string
	for _, ent := range ents {
		if strings.HasSuffix(ent.Name(), ".json") && strings.Contains(ent.Name(), "conc") {
			out = append(out, ent.Name())
		}
	}
	return out
}

// live are the fake's jobs not yet ended.
func (e *env) live() []int64 {
	var out []int64
	for _, j := range e.fake.Jobs() {
		got, err := e.client.GetJob(context.Background(), slurm.JobID(j.ID))
		if err != nil || !got.Terminal() {
			out = append(out, j.ID)
		}
	}
	return out
}

func failed(class diagnose.Class) *rundir.Outcome {
	return &rundir.Outcome{Result: rundir.Failed, Class: class, Message: "failed: " + string(class)}
}

// TestRunLayers: every way a run ends, with its exit code, the job gone
// and results staged only when they are valid.
func TestRunLayers(t *testing.T) {
	succeeded := &rundir.Outcome{Result: rundir.Succeeded}
	tests := []struct {
		name   string
		job    job
		faults []slurmtest.Fault
		setup  func(t *testing.T, e *env, o *Options)
		code   exitcode.Code
		staged int
		says   string // in the progress lines
	}{
		{name: "success", job: job{points: testConcs, outcome: succeeded}, code: exitcode.OK, staged: 2},
		{name: "transient errors while following", job: job{points: testConcs, outcome: succeeded}, code: exitcode.OK, staged: 2, says: "polling job 100 failed, retrying",
			faults: []slurmtest.Fault{
				{Method: "GET", Path: "/job/", Skip: 1, Times: 3, Action: slurmtest.Respond, Status: 429},
				{Method: "GET", Path: "/job/", Skip: 2, Times: 3, Action: slurmtest.Respond, Status: 408},
				{Method: "GET", Path: "/job/", Skip: 3, Times: 3, Action: slurmtest.Respond, Status: 502,
					Body: `{"errors":[{"error_number":5005,"error":"Zero Bytes were transmitted or received"}]}`},
			}},
		// slurmctld answering "not found" for a running job (errno 2017, no
		// accounting to ask) is no proof it ended: the follow goes on, and
		// the job is not cancelled.
		{name: "not found while following", job: job{points: testConcs, outcome: succeeded}, code: exitcode.OK, staged: 2, says: "without accounting its end cannot be confirmed",
			faults: []slurmtest.Fault{
				{Method: "GET", Path: "/slurm/v0.0.42/job/", Skip: 1, Times: 4, Action: slurmtest.Respond, Status: 404,
					Body: `{"errors":[{"error_number":2017,"error":"Invalid job id specified"}]}`},
			}},
		{name: "submit refused", setup: func(_ *testing.T, _ *env, o *Options) { o.Plan.Slurm.Partition = "nope" }, code: exitcode.Submit},
		{name: "image", setup: func(_ *testing.T, _ *env, o *Options) {
			o.Import = func(context.Context, *plan.Plan) error { return errors.New("pull failed") }
		}, code: exitcode.Image},
		{name: "no driver outcome", job: job{state: "FAILED", exit: 1}, code: exitcode.Queue},
		{name: "health", job: job{outcome: failed(diagnose.HealthDeadline), state: "FAILED", exit: 6}, code: exitcode.Health},
		{name: "engine", job: job{points: []int{2}, outcome: failed(diagnose.CUDAOOM), state: "FAILED", exit: 7}, code: exitcode.Engine, staged: 1},
		{name: "benchmark point missing", job: job{points: []int{2}, outcome: succeeded}, code: exitcode.Benchmark, staged: 1},
		{name: "eval", job: job{points: testConcs, outcome: failed(diagnose.EvalFailed), state: "FAILED", exit: 9}, code: exitcode.Eval, staged: 2},
		{name: "staging", job: job{points: testConcs, outcome: succeeded}, code: exitcode.Collect, setup: func(t *testing.T, e *env, _ *Options) {
			if err := os.MkdirAll(filepath.Dir(e.stage), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(e.stage, nil, 0o644); err != nil { // the stage dir is a file
				t.Fatal(err)
			}
		}},
		{name: "run directory of something else", code: exitcode.Config, setup: func(t *testing.T, _ *env, o *Options) {
			if err := os.MkdirAll(o.Plan.RunDir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				e.fake.AddFaults(tc.faults...)
				pl := testPlan(t, e.runs, "r1")
				o := e.options(t, pl)
				if tc.setup != nil {
					tc.setup(t, e, &o)
				}
				var wg sync.WaitGroup
				if tc.code != exitcode.Submit && tc.code != exitcode.Image && tc.code != exitcode.Config {
					wg.Go(func() { fakeDriver(t, e.fake, pl, tc.job) })
				}
				res, err := Run(testCtx(t), o)
				wg.Wait()
				if got := exitcode.Of(err); got != tc.code {
					t.Fatalf("exit %d (%v), want %d\n%s", got, err, tc.code, e.progress)
				}
				if live := e.live(); len(live) != 0 {
					t.Errorf("jobs %v still running after Run returned", live)
				}
				if got := e.staged(t); len(got) != tc.staged {
					t.Errorf("staged %v, want %d results", got, tc.staged)
				}
				if tc.staged > 0 { // the Pareto picture and its data are staged beside the results
					for _, name := range []string{pareto.SVGName, pareto.CSVName} {
						if _, err := os.Stat(filepath.Join(e.stage, name)); err != nil {
							t.Errorf("%s not staged: %v", name, err)
						}
					}
					if res.Collected == nil || !strings.Contains(res.Collected.ParetoChart, "xychart-beta") {
						t.Errorf("no Pareto chart for the step summary")
					}
				}
				if tc.code == exitcode.Submit || tc.code == exitcode.Config || tc.code == exitcode.Image {
					return
				}
				j, jerr := rundir.ReadJournal(pl.Layout.Journal)
				if jerr != nil || j.JobID != res.JobID.String() || j.SubmitKey == "" {
					t.Errorf("journal %+v (%v), want job %d and its key", j, jerr, res.JobID)
				}
				sum := Summary(pl, res, err)
				if sum.ExitCode != int(tc.code) || sum.JobID != res.JobID.String() {
					t.Errorf("summary exit %d job %q", sum.ExitCode, sum.JobID)
				}
			})
		})
	}
}

// TestRunInterruptedCancelsTheJob: a signal while the job runs cancels it
// and exits 130 with the runner's outcome.
func TestRunInterruptedCancelsTheJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "sig")
		hold := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() { fakeDriver(t, e.fake, pl, job{hold: hold, state: "CANCELLED"}) })
		ctx, cancel := context.WithCancel(testCtx(t))
		o := e.options(t, pl)
		o.OnPhase = func(p rundir.Phase, _ rundir.Status) {
			if p == rundir.PhaseBenchmark {
				cancel()
			}
		}
		_, err := Run(ctx, o)
		close(hold)
		wg.Wait()
		if exitcode.Of(err) != exitcode.Interrupted {
			t.Fatalf("err %v, want 130", err)
		}
		if live := e.live(); len(live) != 0 {
			t.Errorf("jobs %v left running", live)
		}
		if out, _ := rundir.ReadOutcome(pl.Layout.Outcome); out.Class != diagnose.Interrupted {
			t.Errorf("outcome %+v", out)
		}
	})
}

// TestRunAgainAdoptsTheJob: a runner killed (kill -9) once the job was
// submitted leaves the journal; `run` again with the same run id adopts
// the job — never a second submit — follows, and stages the results once.
func TestRunAgainAdoptsTheJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "again")
		hold := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}, hold: hold})
		})

		// The first runner dies the moment the job id is known: nothing of
		// it runs after that (its flock goes with it, as with a process).
		first := e.options(t, pl)
		first.OnSubmitted = func(slurm.JobID) { runtime.Goexit() }
		done := make(chan struct{})
		go func() { defer close(done); _, _ = Run(testCtx(t), first) }()
		<-done
		if n := len(e.fake.Jobs()); n != 1 {
			t.Fatalf("%d jobs after the first runner", n)
		}

		again := e.options(t, testPlan(t, e.runs, "again"))
		var told slurm.JobID
		again.OnSubmitted = func(id slurm.JobID) { told = id }
		go func() { time.Sleep(time.Minute); close(hold) }()
		res, err := Run(testCtx(t), again)
		wg.Wait()
		if err != nil {
			t.Fatalf("second run: %v\n%s", err, e.progress)
		}
		jobs := e.fake.Jobs()
		if len(jobs) != 1 || !res.Adopted || res.JobID != slurm.JobID(jobs[0].ID) || told != res.JobID {
			t.Fatalf("jobs %d, result %+v, told %d: want the one job adopted", len(jobs), res, told)
		}
		if got := e.staged(t); len(got) != 2 {
			t.Errorf("staged %v, want each point once", got)
		}
	})
}

// TestRunAgainFindsTheJobOfALostAnswer: the first runner died after the
// submit left but before its answer (the journal has the key, no job id):
// the job is found by its key and adopted; if no job appears, the run
// submits once.
func TestRunAgainFindsTheJobOfALostAnswer(t *testing.T) {
	for _, made := range []bool{true, false} {
		name := map[bool]string{true: "job made", false: "nothing made"}[made]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				pl := testPlan(t, e.runs, "lost")
				if err := rundir.Create(pl.RunDir); err != nil {
					t.Fatal(err)
				}
				b, _ := pl.JSON()
				if err := os.WriteFile(pl.PlanFile, b, 0o644); err != nil {
					t.Fatal(err)
				}
				key := slurm.NewSubmitKey()
				if err := rundir.WriteJournal(pl.Layout.Journal, rundir.Journal{RunID: "lost", JobName: pl.Slurm.JobName, SubmitKey: key, Sending: time.Now()}); err != nil {
					t.Fatal(err)
				}
				if made {
					if _, err := e.client.Submit(context.Background(), slurm.JobSpec{Name: pl.Slurm.JobName, Script: "#!/bin/sh\n", SubmitKey: key}); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				wg.Go(func() {
					fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}})
				})
				res, err := Run(testCtx(t), e.options(t, pl))
				wg.Wait()
				if err != nil {
					t.Fatalf("run: %v\n%s", err, e.progress)
				}
				if n := len(e.fake.Jobs()); n != 1 || res.Adopted != made {
					t.Errorf("%d jobs, adopted %v: want 1 job, adopted %v", n, res.Adopted, made)
				}
			})
		})
	}
}

// TestRunDirectoryIsExclusive: a second run of a run id another runner
// follows is refused without touching the job.
func TestRunDirectoryIsExclusive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "busy")
		hold := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}, hold: hold})
		})
		first := make(chan error, 1)
		go func() { _, err := Run(testCtx(t), e.options(t, pl)); first <- err }()
		for len(e.fake.Jobs()) == 0 {
			time.Sleep(time.Second)
		}
		time.Sleep(time.Second)
		_, err := Run(testCtx(t), e.options(t, testPlan(t, e.runs, "busy")))
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), "in use") {
			t.Errorf("second run: %v, want a config error: in use", err)
		}
		close(hold)
		if err := <-first; err != nil {
			t.Errorf("first run: %v", err)
		}
		wg.Wait()
		if n := len(e.fake.Jobs()); n != 1 {
			t.Errorf("%d jobs", n)
		}
	})
}

// TestAttachByRunID: attach with only the run directory follows the
// journaled job to its end, collects and stages as run does.
func TestAttachByRunID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "att")
		var wg sync.WaitGroup
		wg.Go(func() {
			fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}})
		})
		first := e.options(t, pl)
		first.OnSubmitted = func(slurm.JobID) { runtime.Goexit() }
		done := make(chan struct{})
		go func() { defer close(done); _, _ = Run(testCtx(t), first) }()
		<-done
		read, err := ReadPlan(pl.RunDir)
		if err != nil {
			t.Fatal(err)
		}
		o := e.options(t, read)
		res, err := Attach(testCtx(t), o, 0)
		wg.Wait()
		if err != nil || res.JobID != slurm.JobID(e.fake.Jobs()[0].ID) {
			t.Fatalf("attach: %v, job %d\n%s", err, res.JobID, e.progress)
		}
		if got := e.staged(t); len(got) != 2 {
			t.Errorf("staged %v", got)
		}
	})
}

// testCtx bounds a run in the bubble's time: a runner that never ends
// fails the test (interrupted) instead of hanging it.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Hour)
	t.Cleanup(cancel)
	return ctx
}

// TestRunStagesLogsIntoACleanDir: LOGS/ of another run in the stage dir is
// refused like a result file, before anything is staged (the logs used to
// be mixed in first and the results refused after); this run's own LOGS/
// from an earlier attempt is updated; --overwrite replaces another's.
func TestRunStagesLogsIntoACleanDir(t *testing.T) {
	for _, tc := range []struct {
		name      string
		owner     string
		overwrite bool
		code      exitcode.Code
		staged    int
	}{
		{"another run's logs", "other-run", false, exitcode.Collect, 0},
		{"another run's logs, overwrite", "other-run", true, exitcode.OK, 2},
		{"this run's logs from an earlier attempt", "logs", false, exitcode.OK, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				pl := testPlan(t, e.runs, "logs")
				old := filepath.Join(e.stage, LogsDirName)
				if err := os.MkdirAll(old, 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range map[string]string{logsOwner: tc.owner + "\n", "old.log": "old"} {
					if err := os.WriteFile(filepath.Join(old, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				var wg sync.WaitGroup
				wg.Go(func() {
					fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}})
					_ = os.WriteFile(pl.Layout.DriverLog, []byte("driver\n"), 0o644)
				})
				o := e.options(t, pl)
				o.Stage.Overwrite = tc.overwrite
				_, err := Run(testCtx(t), o)
				wg.Wait()
				if got := exitcode.Of(err); got != tc.code {
					t.Fatalf("exit %d (%v), want %d", got, err, tc.code)
				}
				if got := e.staged(t); len(got) != tc.staged {
					t.Errorf("staged %v, want %d results", got, tc.staged)
				}
				_, oldErr := os.Stat(filepath.Join(old, "old.log"))
				owner, _ := os.ReadFile(filepath.Join(old, logsOwner))
				switch {
				case tc.code != exitcode.OK:
					if oldErr != nil || strings.TrimSpace(string(owner)) != tc.owner {
						t.Errorf("the other run's LOGS/ was touched (old.log: %v, owner %q)", oldErr, owner)
					}
				case tc.overwrite:
					if oldErr == nil || strings.TrimSpace(string(owner)) != "logs" {
						t.Errorf("LOGS/ not replaced (old.log: %v, owner %q)", oldErr, owner)
					}
				}
			})
		})
	}
}

// TestRunCancelsALateDuplicate: the first submit's answer is lost and its
// job stays out of the listing past the lookup bound, so the job is sent
// again; when the first job shows up after all, the runner cancels it
// while the second runs — two jobs never run to the end.
func TestRunCancelsALateDuplicate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "dup")
		e.fake.AddFaults(
			slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward},
			slurmtest.Fault{Method: "GET", Path: "/jobs", Action: slurmtest.Respond, Status: 200, Body: `{"jobs":[],"errors":[],"warnings":[]}`},
		)
		go func() { time.Sleep(2 * time.Minute); e.fake.ClearFaults() }()
		hold := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for len(e.fake.Jobs()) < 2 {
				time.Sleep(time.Second)
			}
			fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}, hold: hold})
		})
		var first int64
		go func() {
			for len(e.fake.Jobs()) < 2 {
				time.Sleep(time.Second)
			}
			first = e.fake.Jobs()[0].ID
			time.Sleep(DuplicateSweep + time.Minute)
			if got, err := e.client.GetJob(context.Background(), slurm.JobID(first)); err != nil || got.State.Base != slurm.StateCancelled {
				t.Errorf("the duplicate job %d is %s (%v) while the run goes on, want CANCELLED", first, got.State, err)
			}
			close(hold)
		}()
		res, err := Run(testCtx(t), e.options(t, pl))
		wg.Wait()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, e.progress)
		}
		if jobs := e.fake.Jobs(); len(jobs) != 2 || res.JobID != slurm.JobID(jobs[1].ID) {
			t.Errorf("jobs %d, followed %d", len(jobs), res.JobID)
		}
		if live := e.live(); len(live) != 0 {
			t.Errorf("live jobs %v", live)
		}
	})
}

// TestRunAfterAnUnknownSubmitOutcome: the submit's answer is lost and
// slurmrestd cannot list jobs, so whether the job exists is unknown: exit
// 4 naming how to find it, the journal keeping the key. Run again once
// slurmrestd answers: the job is found by its key and adopted.
func TestRunAfterAnUnknownSubmitOutcome(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "unknown")
		e.fake.AddFaults(
			slurmtest.Fault{Method: "POST", Path: "/job/submit", Times: 1, Action: slurmtest.DropAfterForward},
			slurmtest.Fault{Method: "GET", Path: "/jobs", Action: slurmtest.Respond, Status: 503},
		)
		_, err := Run(testCtx(t), e.options(t, pl))
		if exitcode.Of(err) != exitcode.Submit || !errors.Is(err, slurm.ErrSubmitOutcomeUnknown) || !strings.Contains(err.Error(), "attach --run-id unknown") {
			t.Fatalf("err %v, want exit 4: outcome unknown, naming attach --run-id", err)
		}
		if j, err := rundir.ReadJournal(pl.Layout.Journal); err != nil || j.SubmitKey == "" || j.JobID != "" {
			t.Fatalf("journal %+v (%v), want the key and no job id", j, err)
		}
		e.fake.ClearFaults()
		var wg sync.WaitGroup
		wg.Go(func() {
			fakeDriver(t, e.fake, pl, job{points: testConcs, outcome: &rundir.Outcome{Result: rundir.Succeeded}})
		})
		res, err := Run(testCtx(t), e.options(t, testPlan(t, e.runs, "unknown")))
		wg.Wait()
		if err != nil || !res.Adopted || len(e.fake.Jobs()) != 1 {
			t.Fatalf("run again: %v, adopted %v, %d jobs; want the one job adopted\n%s", err, res.Adopted, len(e.fake.Jobs()), e.progress)
		}
	})
}

// TestRunSeesTheEndSoonAfterTheDriver: a job that ran long enough for the
// waiter's gaps to reach 10 s ends; the driver's last phase wakes the
// waiter, so Run returns within two seconds of the end instead of at the
// next 10 s poll.
func TestRunSeesTheEndSoonAfterTheDriver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		pl := testPlan(t, e.runs, "r1")
		o := e.options(t, pl)
		var ended time.Time
		var wg sync.WaitGroup
		wg.Go(func() {
			for len(e.fake.Jobs()) == 0 {
				time.Sleep(100 * time.Millisecond)
			}
			id := e.fake.Jobs()[0].ID
			l := pl.Layout
			write := func(path string, v any) { writeRunFile(t, path, v) }
			write(l.Status, rundir.Status{Phase: rundir.PhaseBenchmark, JobID: "x", Hosts: []string{"n1"}})
			time.Sleep(95 * time.Second) // the waiter polls every 10 s by now
			for _, c := range testConcs {
				write(filepath.Join(pl.Benchmark.ResultDir, rawName(t, c)), saBench(c))
			}
			write(l.Outcome, rundir.Outcome{Result: rundir.Succeeded})
			write(l.Status, rundir.Status{Phase: rundir.PhaseDone, JobID: "x", Hosts: []string{"n1"}})
			e.fake.SetSteps(id, slurmtest.Step{State: []string{"COMPLETED"}})
			ended = time.Now()
		})
		_, err := Run(testCtx(t), o)
		returned := time.Now()
		wg.Wait()
		if err != nil {
			t.Fatalf("run: %v\n%s", err, e.progress)
		}
		if seen := returned.Sub(ended); seen > 2*time.Second {
			t.Errorf("Run returned %s after the job ended, want within 2 s", seen)
		}
	})
}
