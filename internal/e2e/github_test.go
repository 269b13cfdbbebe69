package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// c2048ConfigFile is the InferenceX CONFIG_FILE of the 4P1D c2048 DeepSeek
// point (dsr1-fp4-b200-dynamo-sglang-mtp in configs/nvidia-master.yaml).
const c2048ConfigFile = "recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_4p1d_c2048.yaml"

// c2048Recipe is that point's recipe on the mock backend, fitted to the
// test cluster's 4-GPU nodes with the same shape and GPU split: 4 prefill
// workers of 4 GPUs (ctx 16) and one decode worker of 8 GPUs, here across
// two nodes (gen 8): 24 GPUs on 6 nodes. ISL/OSL are
// the point's.
func c2048Recipe() string {
	return `name: b200-fp4-dsr1_8k1k_mtp_4p1d_c2048
model:
  path: dsr1
  container: "lmsysorg/sglang:v0.5.12.post1"
  precision: fp4
resources:
  gpu_type: b200
  gpus_per_node: 4
  prefill_nodes: 4
  prefill_workers: 4
  gpus_per_prefill: 4
  decode_nodes: 2
  decode_workers: 1
frontend:
  type: dynamo
  enable_multiple_frontends: false
backend:
  type: mock
  mock_config:
    prefill:
      served-model-name: deepseek-ai/DeepSeek-R1
    decode:
      served-model-name: deepseek-ai/DeepSeek-R1
health_check:
  max_attempts: 120
  interval_seconds: 1
benchmark:
  type: sa-bench
  req_rate: inf
  isl: 8192
  osl: 1024
  concurrencies: '2048'
  num_prompts_mult: 1
  num_warmup_mult: 0
`
}

// workflowEnv is benchmark-multinode-tmpl.yml's environment for the point
// with GitHub's own variables.
func workflowEnv(dir, runnerName, resultFilename, concList string) []string {
	return []string{
		"GITHUB_ACTIONS=true",
		"GITHUB_WORKSPACE=" + filepath.Join(dir, "workspace"),
		"GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "step-summary.md"),
		"GITHUB_OUTPUT=" + filepath.Join(dir, "github-output"),
		"GITHUB_RUN_ID=1796000000", "GITHUB_RUN_ATTEMPT=1",
		"EXP_NAME=dsr1_8k1k", "IMAGE=lmsysorg/sglang:v0.5.12.post1",
		"MODEL=deepseek-r1-fp4", "MODEL_PREFIX=dsr1", "FRAMEWORK=dynamo-sglang", "PRECISION=fp4",
		"ISL=8192", "OSL=1024", "MAX_MODEL_LEN=9416", "CONC_LIST=" + concList,
		"SPEC_DECODING=mtp", "DISAGG=true", "RUN_EVAL=false", "EVAL_ONLY=false", "EVAL_CONC=" + concList,
		"RANDOM_RANGE_RATIO=0.8", "SCENARIO_TYPE=fixed-seq-len", "IS_MULTINODE=true",
		"PREFILL_NUM_WORKERS=4", "PREFILL_TP=4", "PREFILL_EP=4", "PREFILL_DP_ATTN=true",
		"PREFILL_PP_SIZE=1", "PREFILL_DCP_SIZE=1", "PREFILL_PCP_SIZE=1",
		"DECODE_NUM_WORKERS=1", "DECODE_TP=8", "DECODE_EP=8", "DECODE_DP_ATTN=true",
		"DECODE_PP_SIZE=1", "DECODE_DCP_SIZE=1", "DECODE_PCP_SIZE=1",
		"RUNNER_NAME=" + runnerName, "RUNNER_TYPE=b200-multinode",
		"RESULT_FILENAME_BASE=dsr1_8k1k_fp4_dynamo-sglang", "RESULT_FILENAME=" + resultFilename,
		"CONFIG_FILE=" + c2048ConfigFile,
	}
}

// ghaRun prepares a run the way the workflow starts one: no flags but the
// profile, everything else from the environment, the recipe found through
// CONFIG_FILE under the profile's recipes root.
func (c *cluster) ghaRun(t *testing.T, recipe, runnerName, resultFilename, concList string) *run {
	t.Helper()
	r := c.prepare(t, runOpts{name: runnerName, recipe: recipe, stage: "-"})
	root := filepath.Join(r.dir, "srt-slurm")
	// The recipes root is what CONFIG_FILE's "recipes/" stands for.
	path := filepath.Join(root, strings.TrimPrefix(c2048ConfigFile, "recipes/"))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	r.recipe = ""
	r.editProfile("[paths]\n", "[paths]\nrecipes_root = \""+root+"\"\n")
	r.editProfile("[models]\n", "[models]\ndsr1 = \""+filepath.Join(c.Root, "models", "mock")+"\"\n")
	r.opts.env = workflowEnv(r.dir, runnerName, resultFilename, concList)
	// The workflow's checkout: it exists before the step runs.
	r.stage = filepath.Join(r.dir, "workspace")
	if err := os.MkdirAll(r.stage, 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGitHubActions is the workflow's acceptance: the 4P1D
// c2048 DeepSeek point's environment, pointed at the mock backend, stages
// <RESULT_FILENAME>_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json
// (bounded when RESULT_FILENAME is long), LOGS/ and the logs bundle, writes
// the step summary and outputs, groups its log; a missing concurrency
// fails the step with a named error.
func TestGitHubActions(t *testing.T) {
	// Not parallel: its point takes six nodes, so it runs before the
	// parallel tests start, on an idle cluster, instead of waiting behind
	// their smaller jobs.
	c := setup(t)
	// RESULT_FILENAME as the workflow computes it; one with a recipe
	// fingerprint, long enough that the config slurmbench adds is
	// shortened (never RESULT_FILENAME: the workflow globs
	// ${RESULT_FILENAME}_*.json); and one with the full fingerprint, too
	// long for any staged name: refused before anything is submitted.
	short := "dsr1_8k1k_fp4_dynamo-sglang"
	stem := "dsr1_8k1k_fp4_dynamo-sglang_prefill-tp4-pp1-dcp1-pcp1-ep4-dptrue-nw4_decode-tp8-pp1-dcp1-pcp1-ep8-dptrue-nw1_b200-dgxc-slurm_7_recipe-"
	long := stem + strings.Repeat("4c817771ab781632", 3)[:40]                   // 174 bytes
	tooLong := stem + strings.Repeat("4c817771ab781632", 4) + "_run-1796000000" // 213 bytes
	// The follower rank of the two-node decode worker must not register
	// with the frontend as a worker of its own (requests would go to a
	// port nobody serves).
	probe := c.prepare(t, runOpts{name: "probe", recipe: c2048Recipe()})
	probe.editProfile("[models]\n", "[models]\ndsr1 = \""+filepath.Join(c.Root, "models", "mock")+"\"\n")
	if bad := nonLeaderRegistrations(t, c, probe); len(bad) > 0 {
		t.Fatalf("follower ranks register with the frontend: %s", strings.Join(bad, ", "))
	}
	// Each run takes six nodes: one after the other.
	t.Run("short RESULT_FILENAME", func(t *testing.T) { c.ghaPoint(t, c2048Recipe(), short) })
	t.Run("long RESULT_FILENAME", func(t *testing.T) { c.ghaPoint(t, c2048Recipe(), long) })
	t.Run("RESULT_FILENAME too long for any staged name", func(t *testing.T) {
		runner := uniqueName("b200-dgxc-slurm")
		r := c.ghaRun(t, c2048Recipe(), runner, tooLong, "2048")
		r.start()
		code := r.wait(5 * time.Minute)
		// The most that leaves the config its "-<20 hex>" stand-in
		// (InferenceX's point_filename).
		max := results.MaxStagedNameLen - len("_conc2048_gpus_24_ctx_16_gen_8.json") - len("_") - 21
		for _, want := range []string{"RESULT_FILENAME", itoa(len(tooLong)) + " bytes", itoa(max) + " bytes"} {
			if !strings.Contains(r.output(), want) {
				t.Errorf("refusal does not name %q:\n%s", want, r.output())
			}
		}
		if code != 2 {
			t.Errorf("exit %d, want 2", code)
		}
		if jobs := c.jobsNamed(t, runner); len(jobs) != 0 {
			t.Errorf("submitted %+v for a refused RESULT_FILENAME", jobs)
		}
	})

	t.Run("missing concurrency", func(t *testing.T) {
		runner := uniqueName("b200-dgxc-slurm")
		r := c.ghaRun(t, c2048Recipe(), runner, short, "1024 2048")
		r.start()
		// c1024's result is lost (as on a flaky shared filesystem) while
		// c2048 runs: Slurm and the driver report success, the gate does not.
		waitFor(r, 10*time.Minute, func() bool {
			m, _ := filepath.Glob(filepath.Join(r.runDir(), "results", "*", "results_concurrency_1024_*.json"))
			for _, f := range m {
				_ = os.Remove(f)
			}
			return len(m) > 0
		})
		code := r.wait(15 * time.Minute)
		if code != 8 {
			t.Fatalf("exit %d, want 8\n%s", code, r.output())
		}
		var errLine string
		for _, l := range r.stderr.Lines() {
			if strings.HasPrefix(l, "::error") {
				errLine = l
			}
		}
		t.Logf("%s", errLine)
		if !strings.Contains(errLine, "1024") || !strings.Contains(errLine, "missing") {
			t.Errorf("::error line %q does not name the missing concurrency 1024\n%s", errLine, r.output())
		}
		staged := stagedResults(t, r.stage)
		if len(staged) != 1 || staged[0] != short+"_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json" {
			t.Errorf("staged %v, want the c2048 result only", staged)
		}
		assertGitHubFiles(t, r, "failed")
		summary, _ := os.ReadFile(filepath.Join(r.dir, "step-summary.md"))
		if !regexp.MustCompile(`(?m)^\|[^\n]*1024[^\n]*missing`).Match(summary) {
			t.Errorf("step summary does not mark c1024 missing:\n%s", summary)
		}
	})
}

// nonLeaderRegistrations lists the processes of rank > 0 that the plan
// lets register with the frontend.
func nonLeaderRegistrations(t *testing.T, c *cluster, r *run) []string {
	t.Helper()
	cmd := exec.Command(c.Binary, "render", "--json", "--profile", r.profile, "--recipe", r.recipe)
	cmd.Env = c.baseEnv("")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var pl struct {
		Processes []struct {
			Name string   `json:"name"`
			Rank int      `json:"rank"`
			Argv []string `json:"argv"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(out, &pl); err != nil {
		t.Fatal(err)
	}
	var bad []string
	for _, p := range pl.Processes {
		if p.Rank > 0 && slices.Contains(p.Argv, "--frontend") {
			bad = append(bad, p.Name)
		}
	}
	return bad
}

// ghaPoint runs the c2048 point under the workflow's environment and
// checks the staged name, the step summary, the outputs and the groups.
func (c *cluster) ghaPoint(t *testing.T, recipe, resultFilename string) {
	t.Helper()
	const tail = "_sa-bench_isl_8192_osl_1024_conc2048_gpus_24_ctx_16_gen_8.json"
	runner := uniqueName("b200-dgxc-slurm")
	r := c.ghaRun(t, recipe, runner, resultFilename, "2048")
	r.start()
	code := r.wait(15 * time.Minute)
	t.Logf("run took %s", r.ended.Sub(r.started).Round(time.Second))
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	staged := stagedResults(t, r.stage)
	if len(staged) != 1 {
		t.Fatalf("staged %v, want one result", staged)
	}
	got := staged[0]
	t.Logf("staged %s", got)
	if full := resultFilename + tail; len(full) <= results.MaxStagedNameLen {
		if got != full {
			t.Errorf("staged %s, want %s", got, full)
		}
	} else if !regexp.MustCompile(`^`+regexp.QuoteMeta(resultFilename)+`_[a-z0-9_-]*-[0-9a-f]{20}_conc2048_gpus_24_ctx_16_gen_8\.json$`).MatchString(got) ||
		len(got) > 255-len("power_validation_")-len(".tmp") {
		// Bounded: RESULT_FILENAME whole (the workflow's glob), the config
		// shortened to a prefix and a hash, the numeric tail intact, and
		// room for InferenceX's power_validation_<name>.tmp.
		t.Errorf("staged %s (%d bytes), want the bounded form of %s", got, len(got), full)
	}
	out, err := os.ReadFile(filepath.Join(r.dir, "github-output"))
	if err != nil {
		t.Fatal(err)
	}
	if files := strings.Split(parseOutputs(string(out))["staged_files"], "\n"); !slices.Contains(files, got) || !slices.Contains(files, "manifest.json") {
		t.Errorf("staged_files output %q lacks %s or manifest.json", files, got)
	}
	assertGitHubFiles(t, r, "succeeded")
	if !strings.Contains(r.stderr.String(), "::group::") || !strings.Contains(r.stderr.String(), "::endgroup::") {
		t.Errorf("no ::group:: lines in the output")
	}
	if jobs := r.jobs(); len(jobs) != 1 || jobs[0].NodeCount != 6 {
		t.Errorf("jobs named %s: %+v, want one of 6 nodes", runner, jobs)
	}
}

// assertGitHubFiles checks the step summary and the outputs.
func assertGitHubFiles(t *testing.T, r *run, outcome string) {
	t.Helper()
	assertBundle(t, r.stage)
	summary, err := os.ReadFile(filepath.Join(r.dir, "step-summary.md"))
	if err != nil {
		t.Fatalf("step summary: %v", err)
	}
	if !strings.Contains(string(summary), "| 2048 |") && !strings.Contains(string(summary), "c2048") {
		t.Errorf("step summary has no c2048 row:\n%s", summary)
	}
	if !regexp.MustCompile(`(?m)^\| Point \|.*\n\|[-:|]+\|$`).Match(summary) {
		t.Errorf("step summary has no table:\n%s", summary)
	}
	out, err := os.ReadFile(filepath.Join(r.dir, "github-output"))
	if err != nil {
		t.Fatalf("GITHUB_OUTPUT: %v", err)
	}
	outputs := parseOutputs(string(out))
	if outputs["job_id"] != r.jobID().String() || r.jobID() == 0 {
		t.Errorf("output job_id %q, run printed job %d", outputs["job_id"], r.jobID())
	}
	if outputs["run_dir"] != r.runDir() {
		t.Errorf("output run_dir %q, want %q", outputs["run_dir"], r.runDir())
	}
	if outputs["outcome"] != outcome {
		t.Errorf("output outcome %q, want %q (%s)", outputs["outcome"], outcome, out)
	}
}

// parseOutputs reads GITHUB_OUTPUT: name=value lines and name<<DELIM heredocs.
func parseOutputs(s string) map[string]string {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if name, delim, ok := strings.Cut(l, "<<"); ok {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[name] = strings.Join(val, "\n")
			continue
		}
		if name, val, ok := strings.Cut(l, "="); ok {
			out[name] = val
		}
	}
	return out
}
