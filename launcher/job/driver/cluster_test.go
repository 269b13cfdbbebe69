package driver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/slurm"
)

// mockRecipe is the 2P1D mock topology with extra mock-engine flags per role.
func mockRecipe(name string, prefill, decode []string, attempts int, conc string) clustertest.MockRecipe {
	return clustertest.MockRecipe{Name: name, Prefill: prefill, Decode: decode, Attempts: attempts, Conc: conc,
		ISL: 64, OSL: 32, TTFT: "20ms", ITL: "5ms", PromptsMult: 10, WarmupMult: 2}
}

type run struct {
	plan   *plan.Plan
	client *slurm.Client
	jobID  slurm.JobID
	log    string // stand-in enroot call log
}

// submitMock plans, imports, prepares and submits one mock run.
func submitMock(t *testing.T, env *clustertest.Env, name, recipeText string) *run {
	t.Helper()
	dir := t.TempDir()
	profPath := env.Profile(t, dir, "")
	recPath := filepath.Join(dir, "recipe.yaml")
	if err := os.WriteFile(recPath, []byte(recipeText), 0o644); err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Load(profPath)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := recipe.Load(recPath)
	if err != nil {
		t.Fatal(err)
	}
	runID := fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
	pl, err := planner.Build(planner.Inputs{Profile: prof, Recipe: rec, RunID: runID, Binary: env.Binary,
		ResolveImage: func(ref, dir string) (plan.Image, error) {
			r, err := enroot.ParseRef(ref)
			if err != nil {
				return plan.Image{}, err
			}
			return plan.Image{Ref: r.String(), EnrootURI: r.EnrootURI(), Squash: filepath.Join(dir, r.SquashName())}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := enroot.ParseRef(pl.Image.Ref)
	imp, err := enroot.NewImporter(enroot.Options{SquashDir: prof.Paths.SquashDir, Enroot: env.Enroot})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imp.Import(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	if err := rundir.Create(pl.RunDir); err != nil {
		t.Fatal(err)
	}
	if err := submit.Prepare(pl, env.Binary); err != nil {
		t.Fatal(err)
	}
	r := &run{plan: pl, log: filepath.Join(pl.RunDir, "enroot-calls.jsonl")}
	spec, err := submit.JobSpec(pl, clustertest.JobEnv("ENROOT_STANDIN_LOG="+r.log, "HF_TOKEN=hf_e2e_marker_secret"))
	if err != nil {
		t.Fatal(err)
	}
	r.client, err = slurm.New(slurm.Config{URL: env.Cluster.RestURL, User: env.Cluster.User, Token: env.Cluster.Token})
	if err != nil {
		t.Fatal(err)
	}
	res, err := r.client.Submit(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	r.jobID = res.JobID
	t.Cleanup(func() { _ = r.client.CancelJob(context.Background(), r.jobID) })
	t.Logf("%s: job %d, run dir %s", name, r.jobID, pl.RunDir)
	return r
}

func (r *run) wait(t *testing.T, timeout time.Duration) slurm.Job {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	job, err := r.client.Wait(ctx, r.jobID, slurm.WaitOptions{PollMax: time.Second})
	if err != nil {
		t.Fatalf("waiting for job %d: %v\n%s", r.jobID, err, r.batchOut())
	}
	return job
}

func (r *run) batchOut() string {
	b, _ := os.ReadFile(r.plan.Layout.BatchOut)
	return string(b)
}

func (r *run) outcome(t *testing.T) rundir.Outcome {
	t.Helper()
	o, err := rundir.ReadOutcome(r.plan.Layout.Outcome)
	if err != nil {
		t.Fatalf("outcome.json: %v\nbatch output:\n%s", err, r.batchOut())
	}
	return o
}

// leftovers lists processes still running anything of the run (test
// cluster nodes share the host's process table).
func leftovers(runDir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(b) == 0 {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmd, runDir) {
			out = append(out, e.Name()+": "+cmd)
		}
	}
	return out
}

func assertNoLeftovers(t *testing.T, runDir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		left := leftovers(runDir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes of the run still alive after the job ended:\n%s", strings.Join(left, "\n"))
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestClusterMock2P1D is the driver's acceptance on the test cluster: submitted over REST, the
// driver starts 2 prefill + 1 decode workers and the frontend on the right
// nodes through the enroot runtime, the gate passes with 2+1 instances, and
// a streamed completion through the frontend returns what was asked.
func TestClusterMock2P1D(t *testing.T) {
	env := clustertest.Setup(t)
	r := submitMock(t, env, "mock-2p1d", mockRecipe("mock-2p1d", nil, nil, 60, "8x32").String())

	// Follow status.json until the gate has passed, then talk to the frontend.
	var st rundir.Status
	deadline := time.Now().Add(90 * time.Second)
	for {
		s, err := rundir.ReadStatus(r.plan.Layout.Status)
		if err == nil && s.Health != nil && s.Health.Ready {
			st = s
			break
		}
		if err == nil && (s.Phase == rundir.PhaseFailed || s.Phase == rundir.PhaseDone) {
			t.Fatalf("run ended in phase %s before the gate was seen:\n%s", s.Phase, r.batchOut())
		}
		if time.Now().After(deadline) {
			t.Fatalf("health gate not passed in 90 s; status %+v\n%s", s, r.batchOut())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if st.Health.PrefillSeen != 2 || st.Health.DecodeSeen != 1 {
		t.Errorf("gate saw prefill %d, decode %d; want 2 and 1", st.Health.PrefillSeen, st.Health.DecodeSeen)
	}
	hostOf := map[string]string{}
	for _, p := range st.Processes {
		hostOf[p.Name] = p.Host
	}
	want := map[string]string{"prefill_w0": st.Hosts[0], "prefill_w1": st.Hosts[1], "decode_w0": st.Hosts[2], "frontend_0": st.Hosts[0]}
	for name, host := range want {
		if hostOf[name] != host {
			t.Errorf("%s ran on %q, want %q", name, hostOf[name], host)
		}
	}
	tokens := streamCompletion(t, st.FrontendURL, 17)
	if tokens != 17 {
		t.Errorf("streamed completion: %d tokens, want 17", tokens)
	}

	job := r.wait(t, 3*time.Minute)
	if !job.Success() {
		t.Fatalf("job ended %s, want COMPLETED 0:0\n%s", job.Outcome(), r.batchOut())
	}
	o := r.outcome(t)
	if o.Result != "succeeded" {
		t.Errorf("outcome %+v", o)
	}
	// Every engine process went through `enroot start` on the squash.
	b, err := os.ReadFile(r.log)
	if err != nil {
		t.Fatalf("stand-in enroot log: %v", err)
	}
	starts := strings.Count(string(b), `"start"`)
	if starts < 4 {
		t.Errorf("enroot start called %d times, want ≥ 4 (2 prefill, 1 decode, 1 frontend):\n%s", starts, b)
	}
	if strings.Contains(string(b), "hf_e2e_marker_secret") {
		t.Error("the HF_TOKEN value reached the enroot call log")
	}
	for _, pt := range r.plan.Points {
		if _, err := os.Stat(filepath.Join(r.plan.Benchmark.ResultDir, pt.ResultFile)); err != nil {
			t.Errorf("result of c%d: %v", pt.Concurrency, err)
		}
	}
	assertNoLeftovers(t, r.plan.RunDir)
}

// streamCompletion asks for n tokens with ignore_eos and counts the chunks.
func streamCompletion(t *testing.T, base string, n int) int {
	t.Helper()
	body := fmt.Sprintf(`{"model":"mock/DeepSeek-R1","prompt":[1,2,3,4],"max_tokens":%d,"ignore_eos":true,"stream":true,"stream_options":{"include_usage":true}}`, n)
	resp, err := http.Post(base+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("completion through %s: %v", base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("completion: HTTP %d", resp.StatusCode)
	}
	chunks, usage := 0, -1
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var ev struct {
			Choices []struct{ Text string } `json:"choices"`
			Usage   *struct {
				CompletionTokens int `json:"completion_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		if len(ev.Choices) > 0 {
			chunks++
		}
		if ev.Usage != nil {
			usage = ev.Usage.CompletionTokens
		}
	}
	if usage != chunks {
		t.Errorf("usage says %d tokens, %d chunks arrived", usage, chunks)
	}
	return chunks
}

// TestClusterFaults: each engine fault ends the run with the right class
// and first error line, stops every step and ends the job — within 15 s of
// the fault, except the deadline case.
func TestClusterFaults(t *testing.T) {
	env := clustertest.Setup(t)
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 136.00 MiB"
	graph := "Exception: Capture cuda graph failed: add(): functions with out=... arguments don't support automatic differentiation"
	cases := []struct {
		name       string
		prefill    []string
		decode     []string
		attempts   int
		conc       string
		class      string
		firstError string
		exitCode   int
		process    string
		bounded    bool // the fault-to-end time is checked
	}{
		{name: "oom", decode: []string{"fail-before-healthy-after: 1s", "fail-log-line: " + quoteYAML(oom)},
			attempts: 60, class: "cuda_oom", firstError: oom, exitCode: 7, process: "decode_w0", bounded: true},
		{name: "cuda-graph", prefill: []string{"fail-before-healthy-after: 1s", "fail-log-line: " + quoteYAML("Traceback (most recent call last):\n  File \"/sgl/model_runner.py\", line 1, in init_cuda_graphs\n"+graph)},
			attempts: 60, class: "cuda_graph", firstError: graph, exitCode: 7, process: "prefill_w0", bounded: true}, // either prefill worker may die first
		{name: "exit0", decode: []string{"fail-before-healthy-after: 1s", "fail-exit-code: 0"},
			attempts: 60, class: "exited_before_healthy", exitCode: 7, process: "decode_w0", bounded: true},
		{name: "hang", prefill: []string{"hang: true"}, attempts: 5, class: "health_deadline", exitCode: 6},
		{name: "dies-after-gate", decode: []string{"exit-after: 3s", "fail-log-line: " + quoteYAML("RuntimeError: NCCL error: unhandled system error")},
			attempts: 60, conc: "8", class: "nccl", firstError: "RuntimeError: NCCL error: unhandled system error", exitCode: 7, process: "decode_w0", bounded: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conc := tc.conc
			if conc == "" {
				conc = "8"
			}
			rec := mockRecipe("fault-"+tc.name, tc.prefill, tc.decode, tc.attempts, conc)
			if tc.name == "dies-after-gate" {
				rec.OSL = 600 // long enough a benchmark for the decode worker to die during it
			}
			r := submitMock(t, env, "fault-"+tc.name, rec.String())
			job := r.wait(t, 3*time.Minute)
			if job.Success() || job.State.Base == slurm.StateRunning {
				t.Fatalf("job ended %s, want a failure", job.Outcome())
			}
			if job.Exit.Code != tc.exitCode {
				t.Errorf("job exit %s, want code %d", job.Exit, tc.exitCode)
			}
			o := r.outcome(t)
			if string(o.Class) != tc.class {
				t.Errorf("class %q, want %q (outcome %+v)\n%s", o.Class, tc.class, o, r.batchOut())
			}
			if tc.firstError != "" && o.FirstError != tc.firstError {
				t.Errorf("first error %q, want %q", o.FirstError, tc.firstError)
			}
			if tc.process != "" && !strings.HasPrefix(o.Process, strings.TrimSuffix(tc.process, "0")) {
				t.Errorf("failing process %q, want %q", o.Process, tc.process)
			}
			if o.Hint == "" || len(o.LastLines) == 0 && tc.process != "" {
				t.Errorf("outcome lacks hint or log tail: %+v", o)
			}
			if tc.bounded {
				st, _ := rundir.ReadStatus(r.plan.Layout.Status)
				var faultAt time.Time
				for _, p := range st.Processes {
					if p.Name == o.Process && p.Ended != nil {
						faultAt = *p.Ended
					}
				}
				if faultAt.IsZero() {
					t.Errorf("status has no end time for %s", tc.process)
				} else if lag := job.EndTime.Sub(faultAt); lag > 15*time.Second {
					t.Errorf("job ended %s after the fault, want ≤ 15 s", lag)
				}
			}
			assertNoLeftovers(t, r.plan.RunDir)
		})
	}
}

func quoteYAML(s string) string {
	b, _ := json.Marshal(s) // JSON strings are YAML double-quoted scalars
	return string(b)
}

var _ = sort.Strings
