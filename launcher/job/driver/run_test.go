package driver

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// fakeSrunEnv makes this test binary play srun (TestMain): it honours
// --output like srun and runs the step through the exec shim, as
// `srun ... slurmbench exec <spec>` does on a node, so driver.Run's phases
// run without a cluster.
const fakeSrunEnv = "SLURMBENCH_FAKE_SRUN"

func fakeSrun(args []string) {
	var spec, output string
	for i := 0; i < len(args)-1; i++ {
		switch args[i] {
		case "--output":
			output = args[i+1]
		case "exec":
			spec = args[i+1]
		}
	}
	s, err := ReadSpec(spec)
	if err == nil && len(s.Argv) > 0 && s.Argv[0] == fakeJobExpired {
		// srun finds its job cancelled before the step starts: srun's own
		// lines on srun's stderr, no task runs.
		os.Stderr.WriteString("srun: error: Slurm job 42 has expired\nsrun: Check SLURM_JOB_ID environment variable. Expired or invalid job 42\n")
		os.Exit(1)
	}
	if output != "" {
		f, ferr := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if ferr == nil {
			_ = syscall.Dup3(int(f.Fd()), 1, 0)
			_ = syscall.Dup3(int(f.Fd()), 2, 0)
		}
	}
	if err == nil && len(s.Argv) > 2 && s.Argv[0] == fakeLogAndExit {
		// A task that prints its lines to the step's log and exits.
		for _, l := range s.Argv[2:] {
			os.Stdout.WriteString(l + "\n")
		}
		code, _ := strconv.Atoi(s.Argv[1])
		os.Exit(code)
	}
	if err == nil {
		err = Exec(s)
	}
	os.Stderr.WriteString("fake srun: " + err.Error() + "\n")
	os.Exit(127)
}

// fakeJobExpired as a step's program makes the fake srun answer as srun
// does when the job is being cancelled under it.
const fakeJobExpired = "fake-srun:job-expired"

// fakeLogAndExit as a step's program, with an exit code and lines, runs a
// task that prints the lines to the step's log and exits with the code.
const fakeLogAndExit = "fake-srun:log-and-exit"

// frontend is a Dynamo frontend's /health that reports the workers the
// test says are registered.
type frontend struct {
	prefill, decode atomic.Int32
	port            int
}

func startFrontend(t *testing.T) *frontend {
	t.Helper()
	f := &frontend{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		type inst struct {
			Component string `json:"component"`
			Endpoint  string `json:"endpoint"`
		}
		list := []inst{}
		for range f.prefill.Load() {
			list = append(list, inst{"prefill", "generate"})
		}
		for range f.decode.Load() {
			list = append(list, inst{"decode", "generate"})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "healthy", "instances": list})
	}))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f.port, _ = strconv.Atoi(port)
	return f
}

// runPlan is a one-node plan of host programs: 1P1D workers and a frontend
// that sleep, a benchmark step running bench, the health gate on front.
func runPlan(t *testing.T, front *frontend, decode, bench []string) *plan.Plan {
	t.Helper()
	run := t.TempDir()
	if err := rundir.Create(filepath.Join(run, "r")); err != nil {
		t.Fatal(err)
	}
	run = filepath.Join(run, "r")
	proc := func(name string, role plan.Role, argv []string, critical bool) plan.Process {
		return plan.Process{Name: name, Role: role, Nodes: []int{0}, Argv: argv, Env: map[string]string{},
			Log: filepath.Join(run, "logs", name+".log"), Critical: critical, Srun: plan.SrunOptions{NTasks: 1}}
	}
	sleep := []string{"/bin/sleep", "60"}
	pl := &plan.Plan{
		Version: plan.PlanVersion, Name: "fake-srun", RunID: "r", RunDir: run,
		PlanFile: rundir.PlanPath(run), Binary: rundir.BinaryPath(run),
		Mode: "disaggregated", Nodes: 1, GPUsPerNode: 2, GPUs: plan.GPUCount{Prefill: 1, Decode: 1, Total: 2},
		Runtime: profile.RuntimeNone,
		Processes: []plan.Process{
			proc("prefill_w0", plan.RolePrefill, sleep, true),
			proc("decode_w0", plan.RoleDecode, decode, true),
			proc("frontend_0", plan.RoleFrontend, sleep, true),
			proc("benchmark", plan.RoleBenchmark, bench, true),
		},
		Benchmark: plan.Benchmark{Type: "sa-bench", Client: profile.BenchNative, ISL: 8, OSL: 8, RequestRate: "inf",
			ResultDir: filepath.Join(run, "results", "sa-bench_isl_8_osl_8")},
		Points: []plan.BenchPoint{{Concurrency: 1, NumPrompts: 1, ResultFile: "results_concurrency_1_gpus_2_ctx_1_gen_1.json"}},
		Health: plan.Health{Kind: "dynamo", Node: 0, Port: front.port, Prefill: 1, Decode: 1, MaxAttempts: 2, IntervalSeconds: 1},
		Layout: rundir.New(run),
	}
	data, err := json.Marshal(pl)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pl.PlanFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return pl
}

func runDriver(t *testing.T, ctx context.Context, pl *plan.Plan) Result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(fakeSrunEnv, "1")
	res, err := Run(ctx, Options{PlanFile: pl.PlanFile, JobID: "42", NodeList: "node1", Srun: self,
		Lookup: func(string) ([]string, error) { return []string{"127.0.0.1"}, nil }, StopGrace: time.Second,
		Log: testWriter{t}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

// TestRunPhasesWithFakeSrun drives each way a run ends through driver.Run:
// the exit code and outcome class it reports, and the outcome.json it
// leaves.
func TestRunPhasesWithFakeSrun(t *testing.T) {
	sleep := []string{"/bin/sleep", "60"}
	tests := []struct {
		name          string
		registered    int32 // decode workers the frontend reports
		decode, bench []string
		cancelAfter   time.Duration
		code          exitcode.Code
		result        rundir.Result
		class         diagnose.Class
		phase         rundir.Phase
		process       string
		firstError    string // checked when set
	}{
		{"succeeds", 1, sleep, []string{"/bin/true"}, 0, exitcode.OK, rundir.Succeeded, "", rundir.PhaseDone, "", ""},
		{"benchmark fails", 1, sleep, []string{"/bin/false"}, 0, exitcode.Benchmark, rundir.Failed, diagnose.BenchmarkInvalid, rundir.PhaseBenchmark, "benchmark", ""},
		{"worker dies before healthy", 0, []string{"/bin/false"}, []string{"/bin/true"}, 0, exitcode.Engine, rundir.Failed, diagnose.ExitedBeforeHealthy, rundir.PhaseHealth, "decode_w0", ""},
		{"health deadline", 0, sleep, []string{"/bin/true"}, 0, exitcode.Health, rundir.Failed, diagnose.HealthDeadline, rundir.PhaseHealth, "", ""},
		{"cancelled", 0, sleep, []string{"/bin/true"}, 500 * time.Millisecond, exitcode.Interrupted, rundir.Cancelled, diagnose.Cancelled, rundir.PhaseHealth, "", ""},
		// The job is being cancelled, but the driver's own SIGTERM has not
		// come (it never does here): srun's word that the job is gone is
		// the cancellation.
		{"srun finds the job expired", 0, []string{fakeJobExpired}, []string{"/bin/true"}, 0,
			exitcode.Interrupted, rundir.Cancelled, diagnose.Cancelled, rundir.PhaseHealth, "decode_w0", "srun: error: Slurm job 42 has expired"},
		// slurmstepd's cancel line in the step's log wins over the errors
		// its peers' deaths caused.
		{"step cancelled, peers' errors in its log", 0,
			[]string{fakeLogAndExit, "143", "RuntimeError: NCCL error: remote process exited", "slurmstepd-node1: error: *** STEP 42.1 ON node1 CANCELLED AT 2026-12-03T13:40:18 ***"},
			[]string{"/bin/true"}, 0, exitcode.Interrupted, rundir.Cancelled, diagnose.Cancelled, rundir.PhaseHealth, "decode_w0",
			"slurmstepd-node1: error: *** STEP 42.1 ON node1 CANCELLED AT 2026-12-03T13:40:18 ***"},
		// Slurm's node-failure line is not a cancellation: the run failed.
		{"node failure", 0,
			[]string{fakeLogAndExit, "1", "slurmstepd-node1: error: *** STEP 42.1 ON node1 CANCELLED AT 2026-12-03T13:40:18 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***"},
			[]string{"/bin/true"}, 0, exitcode.Engine, rundir.Failed, diagnose.ExitedBeforeHealthy, rundir.PhaseHealth, "decode_w0", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(tt.registered)
			pl := runPlan(t, front, tt.decode, tt.bench)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if tt.cancelAfter > 0 {
				time.AfterFunc(tt.cancelAfter, cancel)
			}
			res := runDriver(t, ctx, pl)
			o := res.Outcome
			if res.ExitCode != tt.code || o.Result != tt.result || o.Class != tt.class || o.Phase != tt.phase || o.Process != tt.process {
				t.Errorf("exit %d, outcome %s/%s in phase %s (process %q); want exit %d, %s/%s in %s (process %q)\n%s",
					res.ExitCode, o.Result, o.Class, o.Phase, o.Process, tt.code, tt.result, tt.class, tt.phase, tt.process, o.Message)
			}
			if tt.firstError != "" && o.FirstError != tt.firstError {
				t.Errorf("first error %q, want %q", o.FirstError, tt.firstError)
			}
			written, err := rundir.ReadOutcome(pl.Layout.Outcome)
			if err != nil || written.Result != o.Result || written.Class != o.Class {
				t.Errorf("outcome.json: %+v, %v; want what Run returned", written, err)
			}
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range st.Processes {
				if ps.State == "running" || ps.State == "pending" && tt.code == exitcode.OK {
					t.Errorf("process %s left %s", ps.Name, ps.State)
				}
			}
			if _, err := os.Stat(pl.Layout.StepSpec("frontend_0")); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Error(err)
			}
		})
	}
}
