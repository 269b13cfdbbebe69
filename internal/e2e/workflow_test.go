package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/launcher/login/workflow"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/slurm"
)

// wfRow is one row of the master config written for the test cluster,
// as benchmark-multinode-tmpl.yml (or the single-node template) hands it
// to the launch step: its environment, nothing on the command line.
type wfRow struct {
	name      string
	recipe    string // the recipe file's text
	file      string // its path under the workspace's mirror
	multinode bool
	env       []string // the row's own variables
}

// wfWorkspace is the workflow's inferencex-e2e/ checkout on the shared
// filesystem (the job mounts it at /infmax-workspace): the recipe
// mirrors and benchmarks/multi_node/srt_eval.sh.
func wfWorkspace(t *testing.T, c *cluster, runner string) string {
	t.Helper()
	ws := filepath.Join(c.Root, "workspaces", runner)
	script := filepath.Join(ws, "benchmarks", "multi_node", "srt_eval.sh")
	src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "post-eval", "srt-eval-mock.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{ws, filepath.Join(ws, "benchmarks")} {
		_ = os.Chmod(d, 0o777)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(ws)
		}
	})
	return ws
}

// wfEnv is the workflow's environment for a row: the template's job
// env, the launch step's exports, and GitHub's own variables.
func wfEnv(dir, ws, runner, resultFilename string, row wfRow) []string {
	env := []string{
		"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + ws,
		"GITHUB_ENV=" + filepath.Join(dir, "github-env"),
		"GITHUB_OUTPUT=" + filepath.Join(dir, "github-output"),
		"GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "step-summary.md"),
		"GITHUB_RUN_ID=1796000001", "GITHUB_RUN_ATTEMPT=1",
		"RUNNER_NAME=" + runner, "RESULT_FILENAME=" + resultFilename,
		"EXP_NAME=mock_64_16", "RECIPE_FINGERPRINT=0123456789abcdef",
		"IMAGE=mock-image", "MODEL=mock", "MODEL_PREFIX=mock", "FRAMEWORK=dynamo-mock", "PRECISION=fp8",
		"SPEC_DECODING=none", "IS_AGENTIC=0", "SCENARIO_TYPE=fixed-seq-len", "THINKING_MODE=thinking_on",
		"ISL=64", "OSL=16", "RANDOM_RANGE_RATIO=0.8", "REQUIRE_POWER=0",
		"SRT_RECIPE=" + row.file,
	}
	if row.multinode {
		env = append(env, "IS_MULTINODE=true", "DISAGG=true",
			"PREFILL_NUM_WORKERS=2", "PREFILL_TP=4", "PREFILL_EP=1", "PREFILL_DP_ATTN=false",
			"PREFILL_PP_SIZE=1", "PREFILL_DCP_SIZE=1", "PREFILL_PCP_SIZE=1",
			"DECODE_NUM_WORKERS=1", "DECODE_TP=4", "DECODE_EP=1", "DECODE_DP_ATTN=false",
			"DECODE_PP_SIZE=1", "DECODE_DCP_SIZE=1", "DECODE_PCP_SIZE=1")
	} else {
		env = append(env, "TP=4", "PP_SIZE=1", "DCP_SIZE=1", "PCP_SIZE=1", "EP_SIZE=1", "DP_ATTENTION=false",
			"GPU_COUNT=4", "GPU_MONITOR_INTERVAL=1", "HF_HUB_CACHE=/tmp", "SALLOC_TIME_LIMIT=20")
	}
	// The row's own values win, as the step's later exports do.
	for _, kv := range row.env {
		name, _, _ := strings.Cut(kv, "=")
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		env = append(env, kv)
	}
	return env
}

// wfRun prepares one row as the workflow's launch step runs it:
// `slurmbench run` with no flag, the profile of the test cluster in
// SLURMBENCH_PROFILE (where runners.yaml has no record for it).
func (c *cluster) wfRun(t *testing.T, row wfRow, mutate func(r *run)) (*run, string, string) {
	t.Helper()
	runner := uniqueName("e2e-wf-" + row.name)
	ws := wfWorkspace(t, c, runner)
	path, _ := workflow.MirrorPath(ws, row.file, row.multinode)
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(row.recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	rf := "mock_64_16_fp8_dynamo-mock_" + row.name + "_" + runner
	r := c.prepare(t, runOpts{name: workflow.JobNamePrefix + runner, recipe: row.recipe, stage: "-"})
	r.opts.env = append(wfEnv(r.dir, ws, runner, rf, row), "SLURMBENCH_PROFILE="+r.profile)
	if mutate != nil {
		mutate(r)
	}
	r.recipe, r.profile = "", "" // the environment names both
	return r, ws, rf
}

// readJobEvent reads job_event.json as the workflow's collector does.
func readJobEvent(t *testing.T, ws string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, workflow.EventFile))
	if err != nil {
		t.Fatalf("%s: %v", workflow.EventFile, err)
	}
	var ev map[string]any
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v\n%s", workflow.EventFile, err, b)
	}
	if ev["schema_version"] != 1.0 {
		t.Errorf("schema_version %v", ev["schema_version"])
	}
	return ev
}

// assertWorkflowFiles checks what every later step of the workflow reads
// after a successful multi-node row: the results under point_filename's
// names, LOGS/, the logs bundle, the stamps, job_event.json.
func assertWorkflowFiles(t *testing.T, r *run, ws, rf string, concs []int) map[string]any {
	t.Helper()
	var want []string
	for _, c := range concs {
		name, err := results.PointFilename(rf, "sa-bench_isl_64_osl_16", itoa(c), "12", "8", "4")
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	got := stagedResults(t, ws)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("staged %v, want %v", got, want)
	}
	for _, f := range []string{"LOGS", "multinode_server_logs.tar.gz", workflow.SrtSlurmStamp} {
		if !fileExists(filepath.Join(ws, f)) {
			t.Errorf("%s not staged", f)
		}
	}
	ev := readJobEvent(t, ws)
	if ev["outcome"] != "success" || ev["error"] != nil || ev["slurm_job_id"] != r.jobID().String() || ev["runner"] == nil {
		t.Errorf("job_event: outcome %v error %v job %v (run printed %d)", ev["outcome"], ev["error"], ev["slurm_job_id"], r.jobID())
	}
	arts, _ := ev["artifacts"].([]any)
	for _, w := range want {
		if !slices.Contains(arts, any(w)) {
			t.Errorf("job_event artifacts %v lack %s", arts, w)
		}
	}
	jobs := r.jobs()
	if len(jobs) != 1 {
		t.Errorf("jobs named %s: %+v, want one", r.opts.name, jobs)
	}
	return ev
}

// TestWorkflowRows runs rows of a master config written for the test
// cluster, driven only by the workflow's environment: a power row, an
// eval row and a single-node row, each staged as the workflow's later
// steps expect; a row with a bad environment is refused naming the
// variable and still leaves job_event.json; the cleanup step cancels the
// runner's jobs under both names and never fails.
func TestWorkflowRows(t *testing.T) {
	c := setup(t)
	t.Run("power row", func(t *testing.T) {
		row := wfRow{name: "power", multinode: true, file: "recipes/mock/power/disagg-2p1d.yaml",
			recipe: mockRecipe{Name: "mock-power", Conc: "4"}.V2() + telemetryBlock,
			env:    []string{"CONC_LIST=4 8", "RUN_EVAL=false", "EVAL_ONLY=false", "REQUIRE_POWER=1"}}
		r, ws, rf := c.wfRun(t, row, func(r *run) { appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n") })
		r.start()
		if code := r.wait(8 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		ev := assertWorkflowFiles(t, r, ws, rf, []int{4, 8})
		if p, _ := ev["power"].(map[string]any); p == nil || p["dcgm"] != true {
			t.Errorf("job_event power %v", ev["power"])
		}
		for _, f := range []string{workflow.PowerProducerStamp, filepath.Join("LOGS", "power", "manifest.json"), filepath.Join("LOGS", "power", workflow.PowerProducerStamp)} {
			if !fileExists(filepath.Join(ws, f)) {
				t.Errorf("%s not staged", f)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(r.dir, "github-env")); string(b) != "POWER_EXPECTED_CPU_SOURCE=\n" {
			t.Errorf("GITHUB_ENV %q", b)
		}
	})
	t.Run("eval row", func(t *testing.T) {
		var runner string
		row := wfRow{name: "eval", multinode: true, file: "recipes/mock/eval/disagg-2p1d.yaml",
			recipe: mockRecipe{Name: "mock-eval", Conc: "4"}.V2()}
		r, ws, rf := c.wfRun(t, row, func(r *run) {
			runner = strings.TrimPrefix(r.opts.name, workflow.JobNamePrefix)
			// The stand-in enroot cannot mount /logs: the stand-in
			// srt_eval.sh writes where its EVAL_RESULTS_DIR says (the
			// passthrough carries every EVAL_* name), so the run
			// directory is named (--run-id, the one flag here).
			r.opts.args = []string{"--run-id", runner + "-run"}
			r.opts.env = append(r.opts.env, "CONC_LIST=4", "RUN_EVAL=true", "EVAL_ONLY=false", "EVAL_CONC=4", "EVAL_LIMIT=3",
				"EVAL_RESULTS_DIR="+filepath.Join(c.Root, "runs", runner+"-run", "logs", "eval_results"))
		})
		workspaceOnNodes(t, c, ws)
		r.start()
		if code := r.wait(8 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		ev := assertWorkflowFiles(t, r, ws, rf, []int{4})
		// The job ran InferenceX's eval command, as the launcher sets it.
		log, _ := os.ReadFile(filepath.Join(c.Root, "runs", runner+"-run", "logs", "eval.log"))
		if !strings.Contains(string(log), "env HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 TRANSFORMERS_OFFLINE=0 MODEL_PATH=/model bash /infmax-workspace/benchmarks/multi_node/srt_eval.sh http://") {
			t.Errorf("the eval did not run srt_eval.sh as InferenceX does:\n%s", log)
		}
		if ev["run_eval"] != true {
			t.Errorf("job_event run_eval %v", ev["run_eval"])
		}
		if m, _ := filepath.Glob(filepath.Join(ws, "results_*.json")); len(m) != 1 {
			t.Errorf("eval results staged: %v", m)
		}
		b, err := os.ReadFile(filepath.Join(ws, "meta_env.json"))
		if err != nil {
			t.Fatalf("meta_env.json: %v\n%s", err, r.output())
		}
		var meta map[string]string
		_ = json.Unmarshal(b, &meta)
		if meta["eval_conc"] != "4" || meta["workspace"] != "/infmax-workspace" {
			t.Errorf("the eval ran as %s", b)
		}
		if _, err := os.Stat(filepath.Join(ws, workflow.PowerProducerStamp)); err == nil {
			t.Error("a power stamp on a row without power")
		}
	})
	t.Run("single-node row", func(t *testing.T) {
		row := wfRow{name: "single", file: "benchmarks/single_node/srt-slurm-recipes/mock/agg.yaml", recipe: aggRecipe("mock-single"),
			env: []string{"CONC=4", "RUN_EVAL=false", "EVAL_ONLY=false"}}
		r, ws, rf := c.wfRun(t, row, nil)
		r.start()
		if code := r.wait(8 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		point, err := results.PointFilename(rf, "sa-bench_isl_64_osl_16", "4", "4", "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{rf + ".json", point, "LOGS"} {
			if !fileExists(filepath.Join(ws, f)) {
				t.Errorf("%s not staged (have %v)", f, stagedResults(t, ws))
			}
		}
		ev := readJobEvent(t, ws)
		if ev["outcome"] != "success" || ev["launch_path"] != "srt-single" || ev["multinode"] != false || ev["conc"] != 4.0 {
			t.Errorf("job_event %v", ev)
		}
		if b, _ := os.ReadFile(filepath.Join(r.dir, "github-env")); len(b) != 0 {
			t.Errorf("GITHUB_ENV %q for a single-node row without power", b)
		}
	})
	t.Run("bad environment", func(t *testing.T) {
		row := wfRow{name: "bad", multinode: true, file: "recipes/mock/bad.yaml", recipe: mockRecipe{Name: "mock-bad"}.V2(),
			env: []string{"CONC_LIST=4 4", "IMAGE=", "RUN_EVAL=false", "EVAL_ONLY=false"}}
		r, ws, _ := c.wfRun(t, row, nil)
		r.start()
		if code := r.wait(time.Minute); code != 2 {
			t.Fatalf("exit %d, want 2\n%s", code, r.output())
		}
		for _, want := range []string{"IMAGE", "CONC_LIST"} {
			if !strings.Contains(r.stderr.String(), want) {
				t.Errorf("refusal does not name %s:\n%s", want, r.output())
			}
		}
		ev := readJobEvent(t, ws)
		if e, _ := ev["error"].(map[string]any); ev["outcome"] != "failure" || e["exit_code"] != 2.0 || e["stage"] != "prepare" {
			t.Errorf("job_event %v", ev)
		}
		if jobs := r.jobs(); len(jobs) != 0 {
			t.Errorf("submitted %+v for a refused row", jobs)
		}
	})
	t.Run("interrupted row", func(t *testing.T) {
		// A slow first token keeps the point running until the signal.
		row := wfRow{name: "sigint", multinode: true, file: "recipes/mock/sigint.yaml",
			recipe: mockRecipe{Name: "mock-sigint", TTFT: "30s"}.V2(),
			env:    []string{"CONC_LIST=4", "RUN_EVAL=false", "EVAL_ONLY=false"}}
		r, ws, _ := c.wfRun(t, row, nil)
		r.start()
		r.waitLine(benchLine, 5*time.Minute)
		r.signal(syscall.SIGINT)
		if code := r.wait(3 * time.Minute); code != 130 {
			t.Fatalf("exit %d, want 130\n%s", code, r.output())
		}
		ev := readJobEvent(t, ws)
		e, _ := ev["error"].(map[string]any)
		if ev["outcome"] != "failure" || e["exit_code"] != 130.0 || e["retriable"] != true || ev["slurm_job_id"] != r.jobID().String() {
			t.Errorf("job_event after SIGINT: %v", ev)
		}
		if !fileExists(filepath.Join(ws, "multinode_server_logs.tar.gz")) {
			t.Errorf("no logs bundle after SIGINT")
		}
		r.assertNoLiveJobs(time.Now().Add(time.Minute))
	})
	t.Run("cleanup", func(t *testing.T) {
		runner := uniqueName("e2e-wf-cleanup")
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		dir := filepath.Join(c.Root, "cleanup", runner)
		if err := os.MkdirAll(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(dir, 0o777)
		var ids []slurm.JobID
		for _, name := range []string{runner, workflow.JobNamePrefix + runner, runner + "-other"} {
			res, err := c.api.Submit(ctx, slurm.JobSpec{Name: name, Script: "#!/bin/sh\nsleep 600\n", Nodes: "1",
				Partition: c.Cluster.Partition, TimeLimit: 10 * time.Minute, Environment: clustertest.JobEnv(),
				WorkDir: dir, StdOut: filepath.Join(dir, name+".out")})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, res.JobID)
		}
		t.Cleanup(func() {
			for _, id := range ids {
				_ = c.api.CancelJob(context.Background(), id)
			}
		})
		r := c.prepare(t, runOpts{command: "cleanup", stage: "-", env: []string{"RUNNER_NAME=" + runner,
			"SLURM_REST_URL=" + c.Cluster.RestURL, "SLURM_USER=" + c.Cluster.User}})
		r.recipe, r.profile = "", ""
		r.start()
		if code := r.wait(2 * time.Minute); code != 0 {
			t.Fatalf("cleanup exit %d\n%s", code, r.output())
		}
		for i, id := range ids {
			j, err := c.api.GetJob(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if live := !j.Terminal(); live != (i == 2) {
				t.Errorf("job %d %s: %s after cleanup", id, j.Name, j.State)
			}
		}
		// No Slurm to reach: a warning, and the always() step passes.
		none := c.prepare(t, runOpts{command: "cleanup", stage: "-", env: []string{"RUNNER_NAME=" + runner}})
		none.recipe, none.profile = "", ""
		none.start()
		if code := none.wait(time.Minute); code != 0 || !strings.Contains(none.stderr.String(), "warning") {
			t.Errorf("cleanup without Slurm: exit %d\n%s", code, none.output())
		}
	})
}

// workspaceOnNodes makes the workspace the nodes' /infmax-workspace for
// the test: the stand-in enroot mounts nothing (its steps run on the
// node itself), and InferenceX's eval command names the script by its
// path in the container. The nodes' root is found through a slurmd of
// this cluster (/proc/PID/root: testcluster/up.sh pivots the nodes into
// the cluster's rootfs in a mount namespace of their own); the link goes
// when the test ends.
func workspaceOnNodes(t *testing.T, c *cluster, ws string) {
	t.Helper()
	root := ""
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil || strings.TrimSpace(string(cmd)) != "slurmd" {
			continue
		}
		// A node of this cluster: in a mount namespace of its own (its
		// root is the cluster's rootfs), seeing this test binary's
		// directory.
		ns, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "mnt"))
		self, _ := os.Readlink("/proc/self/ns/mnt")
		r := filepath.Join("/proc", e.Name(), "root")
		if st, err := os.Stat(filepath.Join(r, c.Root)); err == nil && st.IsDir() && ns != "" && ns != self {
			root = r
			break
		}
	}
	if root == "" {
		t.Skipf("no slurmd of this cluster found to show the workspace at its /infmax-workspace")
	}
	link := filepath.Join(root, "infmax-workspace")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatalf("the nodes' /infmax-workspace: %v", err)
	}
	t.Cleanup(func() { _ = os.Remove(link) })
}

// aggRecipe is a one-node aggregated mock point (schema 2), the shape
// of a single-node row.
func aggRecipe(name string) string {
	return `schema: 2
name: ` + name + `
model:
  path: mock
  container: mock-image
  precision: fp8
resources:
  gpu_type: mock
  gpus_per_node: 4
engine: mock
roles:
  agg:
    nodes: 1
    workers: 1
    gpus: 4
    args:
      served-model-name: mock/DeepSeek-R1
      ttft: 5ms
      itl: 2ms
frontend:
  type: dynamo
  enable_multiple_frontends: false
health_check:
  max_attempts: 90
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: 64
  osl: 16
  concurrencies: "4"
  num_prompts_mult: 2
  num_warmup_mult: 0
`
}
