package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/slurm"
)

func client(t *testing.T, f *fakeSlurm, cfg Config) *slurm.Client {
	t.Helper()
	cfg.Runner = f
	c, err := slurm.New(slurm.Config{
		Commands: New(cfg), RequestTimeout: 30 * time.Second,
		Retry:    slurm.RetryPolicy{Max: 3, WaitMin: 100 * time.Millisecond, WaitMax: time.Second},
		Defaults: slurm.JobDefaults{Partition: "debug"}, SubmitLookupWindow: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReadsRecordedOutput: the client's own types decode what Slurm
// 24.11's commands print (recorded on the test cluster), through the
// transport: ping, a job, an unknown job (not found), the listing with a
// filter, nodes with their GPUs, partitions, and accounting missing.
func TestReadsRecordedOutput(t *testing.T) {
	ctx := context.Background()
	f := newFake(t)
	c := client(t, f, Config{})
	ping, err := c.Ping(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := ping.Server; s.Transport != "cli" || s.APIVersion != "v0.0.42" || s.SlurmRelease != "24.11.5" || s.URL != "" || len(ping.Controllers) != 1 || ping.Controllers[0].Hostname != "slurmctl" {
		t.Errorf("ping = %+v", ping)
	}
	j, err := c.GetJob(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "expjob2" || j.State.Base != slurm.StateRunning || j.Comment != "hello-key" || j.User != "root" || j.Nodes != "node1" || j.SubmitTime.Unix() != 1796527539 || j.StdOut != "/tmp/slurm-3.out" {
		t.Errorf("job 3 = %+v", j)
	}
	if _, err := c.GetJob(ctx, 99999); !slurm.IsNotFound(err) {
		t.Errorf("unknown job: %v, want not found", err)
	}
	if _, err := c.AccountingJob(ctx, 3); !errors.Is(err, slurm.ErrNoAccounting) {
		t.Errorf("accounting: %v, want ErrNoAccounting", err)
	}
	var u *slurm.UnknownFinalStateError
	if _, err := c.LookupJob(ctx, 99999); !errors.As(err, &u) || !u.NoAccounting {
		t.Errorf("lookup of an unknown job: %v", err)
	}
	nodes, err := c.ListNodes(ctx)
	if err != nil || len(nodes) != 9 || nodes[0].GPUs() != 4 || nodes[0].Partitions[0] != "debug" {
		t.Errorf("nodes: %d, %v", len(nodes), err)
	}
	parts, err := c.ListPartitions(ctx)
	if err != nil || len(parts) != 1 || parts[0].Name != "debug" || parts[0].TotalNodes != 9 {
		t.Errorf("partitions: %+v, %v", parts, err)
	}
	if _, err := c.Submit(ctx, slurm.JobSpec{Name: "a", Script: "#!/bin/sh\ntrue\n"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, slurm.JobSpec{Name: "b", Script: "#!/bin/sh\ntrue\n"}); err != nil {
		t.Fatal(err)
	}
	jobs, err := c.ListJobs(ctx, slurm.JobFilter{Name: "b"})
	if err != nil || len(jobs) != 1 || jobs[0].Name != "b" {
		t.Errorf("ListJobs(name b) = %+v, %v", jobs, err)
	}
	if err := c.CancelJob(ctx, jobs[0].ID); err != nil {
		t.Fatal(err)
	}
	if got := f.callsOf("scancel"); len(got) != 1 || got[0] != "scancel 101" {
		t.Errorf("scancel calls %q", got)
	}
	if err := c.SignalJob(ctx, 100, "USR1"); err != nil || f.callsOf("scancel")[1] != "scancel --signal=USR1 100" {
		t.Errorf("signal: %v, calls %q", err, f.callsOf("scancel"))
	}
	// The version is read once (the probes of newer versions cost
	// nothing), then the negotiation's ping and Ping's.
	if pings := f.callsOf("scontrol"); strings.Count(strings.Join(pings, "\n"), "ping --json") != 3 {
		t.Errorf("scontrol calls %q: want the version read once and two pings", pings)
	}
}

// TestRetriesOnlyTransient: a read that prints one of Slurm's
// communication errors is retried with the client's backoff until it
// answers or the retries run out; any other failure is not retried; the
// error carries the command's standard error and the exit code is the
// REST transport's.
func TestRetriesOnlyTransient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stderr    string
		failures  int // failing calls before it answers
		wantCalls int
		wantErr   string
		wantCode  exitcode.Code
	}{
		{"socket timeout, then an answer", "squeue: error: slurm_receive_msg: Socket timed out on send/recv operation", 2, 3, "", exitcode.OK},
		{"controller unreachable past the retries", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)", 10, 4, "Unable to contact slurm controller (connect failure)", exitcode.Slurm},
		{"zero bytes, then an answer", "Zero Bytes were transmitted or received", 1, 2, "", exitcode.OK},
		{"permission denied: a verdict", "scontrol: error: Access/permission denied", 10, 1, "Access/permission denied", exitcode.Slurm},
		{"unknown option: a verdict", "scontrol: unrecognized option '--json'", 10, 1, "unrecognized option", exitcode.Slurm},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(t)
				c := client(t, f, Config{})
				if _, err := c.Ping(context.Background()); err != nil { // reads the version before the faults
					t.Fatal(err)
				}
				f.fault["scontrol"] = func(_ context.Context, _ int, c Command) (*Result, error) {
					if c.Argv[1] != "show" || len(f.callsOf("scontrol show")) > tc.failures {
						return nil, nil
					}
					return &Result{ExitCode: 1, Stderr: []byte(tc.stderr + "\n")}, nil
				}
				start := time.Now()
				_, err := c.GetJob(context.Background(), 3)
				calls := len(f.callsOf("scontrol show"))
				if calls != tc.wantCalls {
					t.Errorf("%d calls, want %d", calls, tc.wantCalls)
				}
				if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				if err != nil && !strings.Contains(err.Error(), "scontrol show job 3 --json") {
					t.Errorf("error %v does not name the command", err)
				}
				if got := slurm.ExitCode(err, exitcode.Slurm); got != tc.wantCode {
					t.Errorf("exit code %v, want %v", got, tc.wantCode)
				}
				// Backoff between retries: at least half of 100 ms, 200 ms, ...
				if minWait := time.Duration(0); calls > 1 {
					for i := range calls - 1 {
						minWait += (100 * time.Millisecond << i) / 2
					}
					if waited := time.Since(start); waited < minWait {
						t.Errorf("%d calls in %s: no backoff (want at least %s)", calls, waited, minWait)
					}
				}
			})
		})
	}
}

// TestTimeoutBoundsEachCommand: a command that does not return is killed
// at Config.Timeout, and the read is retried like a slurmrestd timeout.
func TestTimeoutBoundsEachCommand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFake(t)
		c := client(t, f, Config{Timeout: 5 * time.Second})
		if _, err := c.Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		f.fault["squeue"] = func(ctx context.Context, _ int, _ Command) (*Result, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		start := time.Now()
		_, err := c.ListJobs(context.Background(), slurm.JobFilter{})
		if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "squeue --json --states=all") {
			t.Fatalf("error %v, want the deadline naming the command", err)
		}
		if n := len(f.callsOf("squeue")); n != 4 {
			t.Errorf("%d calls, want 4 (retried 3 times)", n)
		}
		if d := time.Since(start); d < 20*time.Second || d > 30*time.Second {
			t.Errorf("took %s, want 4 timeouts of 5 s plus the backoff", d)
		}
	})
}

// TestSubmit: the job goes to sbatch as a script with #SBATCH lines and
// its environment as sbatch's; a rejection is a verdict naming Slurm's
// reason, sent once, with the submit's exit code; an sbatch that fails
// or hangs after Slurm queued the job is resolved by looking the submit
// key up: one job, never a second sbatch.
func TestSubmit(t *testing.T) {
	spec := slurm.JobSpec{Name: "bench", Script: "#!/bin/bash\nexec driver\n", Nodes: "2", TasksPerNode: 1,
		Environment: []string{"PATH=/bin", "HF_TOKEN=x"}, WorkDir: "/shared/run", StdOut: "/shared/run/out", Comment: "run tag", GPUsPerNode: 4}
	for _, tc := range []struct {
		name       string
		partition  string
		fault      func(ctx context.Context, f *fakeSlurm, c Command) (*Result, error)
		wantErr    string
		wantCode   exitcode.Code
		recovered  bool
		wantSbatch int
		wantJobs   int
	}{
		{name: "accepted", wantSbatch: 1, wantJobs: 1},
		{name: "rejected", partition: "nosuch", wantErr: "Invalid partition name specified", wantCode: 4, wantSbatch: 1, wantJobs: 0},
		{name: "queued, then a socket timeout", wantSbatch: 1, wantJobs: 1, recovered: true,
			fault: func(ctx context.Context, f *fakeSlurm, c Command) (*Result, error) {
				f.fault["sbatch"] = nil
				if _, err := f.serve(c); err != nil {
					return nil, err
				}
				return &Result{ExitCode: 1, Stderr: []byte("sbatch: error: Batch job submission failed: Socket timed out on send/recv operation\n")}, nil
			}},
		{name: "queued, then sbatch hangs past the timeout", wantSbatch: 1, wantJobs: 1, recovered: true,
			fault: func(ctx context.Context, f *fakeSlurm, c Command) (*Result, error) {
				f.fault["sbatch"] = nil
				if _, err := f.serve(c); err != nil {
					return nil, err
				}
				<-ctx.Done()
				return nil, ctx.Err()
			}},
		{name: "not queued, unreachable: looked up, then sent again", wantSbatch: 2, wantJobs: 1,
			fault: func(ctx context.Context, f *fakeSlurm, c Command) (*Result, error) {
				f.fault["sbatch"] = nil
				return &Result{ExitCode: 1, Stderr: []byte("sbatch: error: Batch job submission failed: Unable to contact slurm controller (connect failure)\n")}, nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(t)
				if tc.fault != nil {
					f.fault["sbatch"] = func(ctx context.Context, _ int, c Command) (*Result, error) { return tc.fault(ctx, f, c) }
				}
				c := client(t, f, Config{Timeout: 10 * time.Second})
				s := spec
				s.Partition = tc.partition
				res, err := c.Submit(context.Background(), s)
				if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				if err != nil && !strings.Contains(err.Error(), "sbatch --parsable") {
					t.Errorf("error %v does not name the command", err)
				}
				if got := slurm.ExitCode(err, 4); got != tc.wantCode {
					t.Errorf("exit code %v, want %v", got, tc.wantCode)
				}
				if n := len(f.callsOf("sbatch")); n != tc.wantSbatch {
					t.Errorf("sbatch ran %d times, want %d", n, tc.wantSbatch)
				}
				if n := f.jobCount(); n != tc.wantJobs {
					t.Errorf("%d jobs queued, want %d", n, tc.wantJobs)
				}
				if res.Recovered != tc.recovered {
					t.Errorf("recovered = %v, want %v", res.Recovered, tc.recovered)
				}
				if tc.wantJobs == 0 {
					return
				}
				j := f.jobs[0]
				if res.JobID != 100 || j.Name != "bench" || !strings.HasSuffix(j.Comment, res.SubmitKey) || !strings.HasPrefix(j.Comment, "run tag ") {
					t.Errorf("job %+v, result %+v", j, res)
				}
				if strings.Join(j.Env, " ") != "PATH=/bin HF_TOKEN=x" {
					t.Errorf("sbatch's environment %q, want the job's", j.Env)
				}
				for _, line := range []string{"#!/bin/bash\n#SBATCH ", "#SBATCH --nodes=2\n", "#SBATCH --gres=gpu:4\n", "#SBATCH --partition=debug\n", "#SBATCH --chdir=/shared/run\n", "\nexec driver\n"} {
					if !strings.Contains(j.Stdin, line) {
						t.Errorf("script lacks %q:\n%s", line, j.Stdin)
					}
				}
			})
		})
	}
}

// TestBatchScript: values with white space are quoted on their #SBATCH
// line, values with quotes or backslashes go on sbatch's command line,
// the interpreter line stays first, and a description without an
// environment or an interpreter line is refused.
func TestBatchScript(t *testing.T) {
	script, argv, env, err := BatchScript(map[string]any{
		"script": "#!/bin/sh\necho hi\n", "name": "n", "comment": "a b", "account": `we"ird`,
		"environment": []any{"PATH=/bin"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "#!/bin/sh\n#SBATCH --comment=\"a b\"\n#SBATCH --job-name=n\necho hi\n"
	if script != want || strings.Join(argv, " ") != `--account=we"ird` || env[0] != "PATH=/bin" {
		t.Errorf("script %q argv %q env %q", script, argv, env)
	}
	for _, job := range []map[string]any{
		{"script": "echo hi\n", "environment": []any{"PATH=/bin"}},
		{"script": "#!/bin/sh\n"},
		{"script": "#!/bin/sh\n", "environment": []any{"NOEQUALS"}},
		{"script": "#!/bin/sh\n", "environment": []any{"PATH=/bin"}, "burst_buffer": "x"},
	} {
		if _, _, _, err := BatchScript(job); err == nil {
			t.Errorf("BatchScript(%v) accepted", job)
		}
	}
}

// TestExecRunnerBounds: the real runner caps what it reads of the
// standard output (TooLarge, answered as an error naming the bound), keeps
// the standard error, and reports a missing command as not run.
func TestExecRunnerBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("scontrol", `cat `+filepath.Join(mustAbs(t, "testdata/slurm-24.11"), "scontrol-ping.json")+"\n")
	write("squeue", "head -c 3000 /dev/zero | tr '\\0' x; echo 'squeue: warning: big' >&2\n")
	c, err := slurm.New(slurm.Config{Commands: New(Config{Dir: dir, MaxOutput: 1000})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListJobs(ctx, slurm.JobFilter{}); err == nil || !strings.Contains(err.Error(), "output larger than") {
		t.Errorf("over the cap: %v", err)
	}
	res, err := ExecRunner{}.Run(ctx, Command{Argv: []string{filepath.Join(dir, "squeue")}, Limit: 10})
	if err != nil || !res.TooLarge || len(res.Stdout) != 10 || !strings.Contains(string(res.Stderr), "warning: big") {
		t.Errorf("run = %+v, %v", res, err)
	}
	if _, err := c.AccountingJob(ctx, 1); err == nil || !strings.Contains(err.Error(), "sacct") {
		t.Errorf("no sacct: %v", err)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestVersionRead: the data_parser version comes from scontrol ping
// --json once; a failure to read it is retried only when transient, and
// a release the client cannot read is refused naming what it printed.
func TestVersionRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		res       Result
		wantCalls int
		wantErr   string
	}{
		{"communication error", Result{ExitCode: 1, Stderr: []byte("scontrol: error: Unable to contact slurm controller (connect failure)")}, 4, "Unable to contact slurm controller"},
		{"no configuration", Result{ExitCode: 1, Stderr: []byte("scontrol: fatal: Could not establish a configuration source")}, 1, "Could not establish a configuration source"},
		{"no --json (before 23.02)", Result{Stdout: []byte("Slurmctld(primary) at ctl is UP\n")}, 1, "output is not JSON"},
		{"Slurm 23.02", Result{Stdout: []byte(`{"meta":{"plugin":{"data_parser":"data_parser/v0.0.39"}},"pings":[]}`)}, 1, "prints data_parser/v0.0.39, which slurmbench does not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFake(t)
				res := tc.res
				f.fault["scontrol"] = func(context.Context, int, Command) (*Result, error) { return &res, nil }
				c := client(t, f, Config{})
				_, err := c.Ping(context.Background())
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %v, want %q", err, tc.wantErr)
				}
				if n := len(f.callsOf("scontrol")); n != tc.wantCalls {
					t.Errorf("%d calls, want %d", n, tc.wantCalls)
				}
			})
		})
	}
}

// TestExecRunnerEndsWithCtx: a real command that outlives its context is
// killed, and the run reports the context's end, not an exit status.
func TestExecRunnerEndsWithCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ExecRunner{}.Run(ctx, Command{Argv: []string{"sleep", "600"}, Limit: 10})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if _, err := (ExecRunner{}).Run(context.Background(), Command{Argv: []string{"no-such-slurm-command"}}); err == nil {
		t.Error("a missing command ran")
	}
	res, err := ExecRunner{}.Run(context.Background(), Command{Argv: []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, Limit: 100})
	if err != nil || res.ExitCode != 3 || string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" || res.TooLarge {
		t.Errorf("run = %+v, %v", res, err)
	}
}

// TestBatchScriptSlurmConf: sbatch finds the site's configuration through
// SLURM_CONF from slurmbench's environment, unless the job sets its own;
// nothing else of slurmbench's environment reaches the job.
func TestBatchScriptSlurmConf(t *testing.T) {
	t.Setenv("SLURM_CONF", "/site/slurm.conf")
	t.Setenv("HF_TOKEN", "secret")
	for _, tc := range []struct {
		env  []any
		want string
	}{
		{[]any{"PATH=/bin"}, "PATH=/bin SLURM_CONF=/site/slurm.conf"},
		{[]any{"PATH=/bin", "SLURM_CONF=/job/slurm.conf"}, "PATH=/bin SLURM_CONF=/job/slurm.conf"},
	} {
		_, _, env, err := BatchScript(map[string]any{"script": "#!/bin/sh\n", "environment": tc.env})
		if err != nil || strings.Join(env, " ") != tc.want {
			t.Errorf("environment %v: sbatch's %q (%v), want %q", tc.env, env, err, tc.want)
		}
	}
}

// TestFindJobs: the client's accounting query (slurmdbd's GET jobs) is
// sacct with the same selection; without accounting, squeue's listing is
// read instead; either way only the user's named live jobs come back.
func TestFindJobs(t *testing.T) {
	for _, accounting := range []bool{true, false} {
		t.Run(fmt.Sprintf("accounting=%v", accounting), func(t *testing.T) {
			f := newFake(t)
			c := client(t, f, Config{})
			ctx := context.Background()
			for _, name := range []string{"want", "other", "want"} {
				if _, err := c.Submit(ctx, slurm.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n"}); err != nil {
					t.Fatal(err)
				}
			}
			var sacctArgs []string
			f.fault["sacct"] = func(_ context.Context, _ int, c Command) (*Result, error) {
				sacctArgs = c.Argv[1:]
				if !accounting {
					return &Result{ExitCode: 1, Stderr: []byte("Slurm accounting storage is disabled\n")}, nil
				}
				return &Result{Stdout: []byte(`{"jobs":[{"job_id":100,"name":"want","user":"slurmtest","cluster":"slurmbench"},{"job_id":102,"name":"want","user":"slurmtest","cluster":"slurmbench"}],"errors":[]}`)}, nil
			}
			jobs, err := c.FindJobs(ctx, slurm.JobQuery{User: "slurmtest", Names: []string{"want"}})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, j := range jobs {
				ids = append(ids, j.ID.String())
			}
			if strings.Join(ids, ",") != "100,102" {
				t.Errorf("found %v, want 100,102", ids)
			}
			got := strings.Join(sacctArgs, " ")
			for _, want := range []string{"--json", "--user=slurmtest", "--name=want", "--state=PENDING,RUNNING,SUSPENDED,REQUEUED,RESIZING", "--starttime=", "--endtime="} {
				if !strings.Contains(got, want) {
					t.Errorf("sacct %s lacks %s", got, want)
				}
			}
			if n := len(f.callsOf("squeue")); accounting && n != 0 || !accounting && n != 1 {
				t.Errorf("%d squeue listings with accounting %v", n, accounting)
			}
		})
	}
}
