package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/clustertest"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/master/fingerprint"
	"github.com/slurmbench/slurmbench/launcher/login/workflow"
	"github.com/slurmbench/slurmbench/results/resultname"
	"github.com/slurmbench/slurmbench/slurm"
)

// wfRow is one row of the master config written for the test cluster
// (testdata/workflow/master.yaml), as the workflow dispatches it: the
// generator's point for key (its eval-only job when evalOnly), and the
// recipe file its srt-recipe names.
type wfRow struct {
	name     string
	key      string
	evalOnly bool
	recipes  map[string]string // recipe files by their path from the project root
	env      []string          // what the test changes (a bad row, a test-only knob)
}

// wfWorkspace is the workflow's inferencex-e2e/ checkout on the shared
// filesystem (the job mounts it at /infmax-workspace): configs/ with the
// runners.yaml record of the test cluster and the master config, the
// recipe mirrors, and benchmarks/multi_node/srt_eval.sh.
func wfWorkspace(t *testing.T, c *cluster, runner string, recipes map[string]string) string {
	t.Helper()
	ws := filepath.Join(c.Root, "workspaces", runner)
	src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "post-eval", "srt-eval-mock.sh"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(c.repo, "testdata", "workflow", "runners.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	runners := strings.NewReplacer("@RUNNERS@", "    - "+runner, "@PARTITION@", c.Cluster.Partition,
		"@MODELS@", filepath.Join(c.Root, "models"), "@SQUASH@", filepath.Join(c.Root, "squash")).Replace(string(tmpl))
	masterDoc, err := os.ReadFile(filepath.Join(c.repo, "testdata", "workflow", "master.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"benchmarks/multi_node/srt_eval.sh": string(src),
		"configs/runners.yaml":              runners,
		"configs/master.yaml":               string(masterDoc),
	}
	maps.Copy(files, recipes)
	for rel, body := range files {
		path := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
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

// wfPoint is the generator's point for the row, expanded from the master
// config with the runners.yaml facts, its recipe fingerprint read from
// the workspace's recipes (infx.matrix's generate).
func wfPoint(t *testing.T, ws string, row wfRow) master.MatrixPoint {
	t.Helper()
	rdata, err := os.ReadFile(filepath.Join(ws, "configs", "runners.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	facts, err := master.ReadRunnerFacts("runners.yaml", rdata)
	if err != nil {
		t.Fatal(err)
	}
	mdata, err := os.ReadFile(filepath.Join(ws, "configs", "master.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pts, err := master.ExpandWith(filepath.Join(ws, "configs", "master.yaml"), mdata, master.ExpandOptions{Runners: facts, Root: ws})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		if p.Key != row.key || p.EvalOnly != row.evalOnly {
			continue
		}
		if p.Refusal != "" {
			t.Fatalf("%s: %s", p.Key, p.Refusal)
		}
		// The generator fingerprints benchmark rows with their concrete
		// recipe (these are whole recipes, composed as they are).
		if !p.EvalOnly && p.Row["recipe-fingerprint"] == nil {
			file, _, _ := strings.Cut(p.SrtRecipe, ":")
			b, err := os.ReadFile(filepath.Join(ws, file))
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			fp, err := fingerprint.Recipe(p.Row, &doc)
			if err != nil {
				t.Fatal(err)
			}
			p.Row["recipe-fingerprint"] = fp
		}
		return p
	}
	t.Fatalf("no point %s (eval-only %v) in the master config", row.key, row.evalOnly)
	return master.MatrixPoint{}
}

// wfEnv is the launch step's environment for point p, as
// benchmark-multinode-tmpl.yml builds it from the matrix row (its job
// env, the step's exports: RESULT_FILENAME from RESULT_FILENAME_BASE and
// the recipe fingerprint as result_filename.py bounds it, EVAL_CONC
// defaulting to max(CONC_LIST), the additional-settings) and GitHub's own
// variables; a single-node point's as request.py's SingleNodeRequest
// reads it.
func wfEnv(t *testing.T, dir, ws, runner string, p master.MatrixPoint) []string {
	t.Helper()
	str := func(v any) string {
		if v == nil {
			return ""
		}
		return fmt.Sprint(v)
	}
	side := func(m map[string]any, k string) string { return str(m[k]) }
	r := p.Row
	concs := make([]string, len(p.Conc))
	for i, c := range p.Conc {
		concs[i] = itoa(c)
	}
	evalConc := str(r["eval-conc"])
	if evalConc == "" && len(p.Conc) > 0 {
		evalConc = itoa(slices.Max(p.Conc))
	}
	boolStr := func(b bool) string { return strconv.FormatBool(b) }
	requirePower := "0"
	if p.RequirePower {
		requirePower = "1"
	}
	env := []string{
		"GITHUB_ACTIONS=true", "GITHUB_WORKSPACE=" + ws,
		"GITHUB_ENV=" + filepath.Join(dir, "github-env"),
		"GITHUB_OUTPUT=" + filepath.Join(dir, "github-output"),
		"GITHUB_STEP_SUMMARY=" + filepath.Join(dir, "step-summary.md"),
		"GITHUB_RUN_ID=1796000001", "GITHUB_RUN_ATTEMPT=1", "RUNNER_NAME=" + runner, "RUNNER_TYPE=" + p.Runner,
		"EXP_NAME=" + p.ExpName, "RECIPE_FINGERPRINT=" + str(r["recipe-fingerprint"]), "IMAGE=" + p.Image,
		"THINKING_MODE=thinking_on", "MODEL_PREFIX=" + p.ModelPrefix, "MODEL=" + p.Model, "FRAMEWORK=" + p.Framework,
		"PRECISION=" + p.Precision, "ISL=" + itoa(p.ISL), "OSL=" + itoa(p.OSL), "MAX_MODEL_LEN=" + itoa(p.MaxModelLen),
		"CONC_LIST=" + strings.Join(concs, " "), "SPEC_DECODING=" + p.SpecDecoding, "DISAGG=" + boolStr(p.Disagg),
		"RUN_EVAL=" + boolStr(p.RunEval), "EVAL_ONLY=" + boolStr(p.EvalOnly), "EVAL_FRAMEWORK=" + p.EvalFramework,
		"EVAL_CONC=" + evalConc, "REQUIRE_POWER=" + requirePower, "SCENARIO_TYPE=fixed-seq-len", "IS_AGENTIC=0",
		"RANDOM_RANGE_RATIO=0.8", "KV_P2P_TRANSFER=" + str(r["kv-p2p-transfer"]),
		"SRT_RECIPE=" + p.SrtRecipe, "EVAL_SRT_RECIPE=" + p.EvalSrtRecipe,
	}
	var base string
	if p.Multinode {
		pre, dec := p.Prefill, p.Decode
		topo := func(name string, m map[string]any) string {
			return fmt.Sprintf("%s-tp%s-pp%s-dcp%s-pcp%s-ep%s-dp%s-nw%s", name, side(m, "tp"), side(m, "pp"), side(m, "dcp-size"),
				side(m, "pcp-size"), side(m, "ep"), side(m, "dp-attn"), side(m, "num-worker"))
		}
		base = fmt.Sprintf("%s_%s_%s_%s_%s_disagg-%v_spec-%s_conc%s_%s", p.ExpName, p.Precision, p.Framework,
			topo("prefill", pre), topo("decode", dec), p.Disagg, p.SpecDecoding, strings.Join(concs, "x"), runner)
		env = append(env, "IS_MULTINODE=true")
		for _, s := range []struct {
			prefix string
			m      map[string]any
		}{{"PREFILL", pre}, {"DECODE", dec}} {
			env = append(env, s.prefix+"_NUM_WORKERS="+side(s.m, "num-worker"), s.prefix+"_TP="+side(s.m, "tp"),
				s.prefix+"_PP_SIZE="+side(s.m, "pp"), s.prefix+"_DCP_SIZE="+side(s.m, "dcp-size"),
				s.prefix+"_PCP_SIZE="+side(s.m, "pcp-size"), s.prefix+"_EP="+side(s.m, "ep"), s.prefix+"_DP_ATTN="+side(s.m, "dp-attn"))
			settings, _ := s.m["additional-settings"].([]any)
			for _, kv := range settings {
				env = append(env, str(kv))
			}
		}
	} else {
		tp, pp, pcp := intOfAny(r["tp"]), intOfAny(r["pp"]), intOfAny(r["pcp-size"])
		base = fmt.Sprintf("%s_%s_%s_tp%d-ep%s-dpa%s_conc%s_%s", p.ExpName, p.Precision, p.Framework, tp, str(r["ep"]), str(r["dp-attn"]), concs[0], runner)
		env = append(env, "TP="+itoa(tp), "PP_SIZE="+itoa(pp), "DCP_SIZE="+str(r["dcp-size"]), "PCP_SIZE="+itoa(pcp),
			"EP_SIZE="+str(r["ep"]), "DP_ATTENTION="+str(r["dp-attn"]), "GPU_COUNT="+itoa(tp*pp*pcp), "CONC="+concs[0],
			"GPU_MONITOR_INTERVAL=1", "HF_HUB_CACHE=/tmp", "SALLOC_TIME_LIMIT=20")
	}
	rf, err := resultname.ResultStem(base, str(r["recipe-fingerprint"]))
	if err != nil {
		t.Fatal(err)
	}
	return append(env, "RESULT_FILENAME_BASE="+base, "RESULT_FILENAME="+rf)
}

func intOfAny(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case int64:
		return int(n)
	case float64:
		return int(n)
	}
	return 0
}

// envValue is name's value in env (the last one set).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// wfRun prepares one row as the workflow's launch step runs it:
// `slurmbench run` with no flag, the environment derived from the master
// config's point, and the profile of the test cluster in
// SLURMBENCH_PROFILE. It returns the run, the workspace and the row's
// RESULT_FILENAME.
func (c *cluster) wfRun(t *testing.T, row wfRow, mutate func(r *run)) (*run, string, string) {
	t.Helper()
	runner := uniqueName("e2e-wf-" + row.name)
	ws := wfWorkspace(t, c, runner, row.recipes)
	p := wfPoint(t, ws, row)
	r := c.prepare(t, runOpts{name: workflow.JobNamePrefix + runner, recipe: "", stage: "-"})
	// The operator's TOML extends the runner's runners.yaml record with
	// what the record lacks (the test's runs directory and image and model
	// aliases; over REST, slurmrestd and the token); the partition and the
	// GPUs per node are the record's.
	r.editProfile("cluster = \"e2e\"\n", "extends = { runners = \""+filepath.Join(ws, "configs", "runners.yaml")+"\" }\n")
	r.editProfile("partition = \""+c.Cluster.Partition+"\"\n", "")
	r.editProfile("gpus_per_node = 4\n", "")
	if c.cliBin != "" {
		// Over Slurm's commands the TOML names no transport at all: the
		// record's (a runners.yaml record has no REST URL: sbatch, as
		// InferenceX's launcher submits), its commands on the runner's
		// PATH (baseEnv), as on the workflow's runner.
		for _, line := range append(cliProfile(c.cliBin), "rest_url = \""+unreachableREST+"\"") {
			r.editProfile(line+"\n", "")
		}
	}
	env := wfEnv(t, r.dir, ws, runner, p)
	rf := envValue(env, "RESULT_FILENAME")
	r.opts.env = append(append(env, "SLURMBENCH_PROFILE="+r.profile), row.env...)
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
// after a successful multi-node benchmark row: the results under
// point_filename's names, LOGS/, the logs bundle, the stamps,
// job_event.json, one job named inferencex-<runner>.
func assertWorkflowFiles(t *testing.T, r *run, ws, rf, config string, concs []int) map[string]any {
	t.Helper()
	var want []string
	for _, c := range concs {
		name, err := resultname.PointFilename(rf, config, itoa(c), "12", "8", "4")
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
	if jobs := r.jobs(); len(jobs) != 1 {
		t.Errorf("jobs named %s: %+v, want one", r.opts.name, jobs)
	}
	if ev["cluster"] != "testcluster" || !strings.Contains(r.stderr.String(), "cluster testcluster, partition "+r.c.Cluster.Partition) {
		t.Errorf("job_event cluster %v; the run's profile sources:\n%s", ev["cluster"], r.output())
	}
	if r.c.cliBin != "" && !strings.Contains(r.stderr.String(), "(no REST URL in the record: the Slurm commands)") {
		t.Errorf("the run's transport is not the record's Slurm commands:\n%s", r.output())
	}
	assertSubmission(t, r, ws)
	return ev
}

// assertSubmission checks srt-submission.json (the job the run submitted,
// its run directory on disk) and srt-setup.log (the run's output up to the
// submission: the profile's sources are in it, the benchmark is not).
func assertSubmission(t *testing.T, r *run, ws string) {
	t.Helper()
	var sub workflow.Submission
	b, err := os.ReadFile(filepath.Join(ws, workflow.SubmissionFile))
	if err == nil {
		err = json.Unmarshal(b, &sub)
	}
	if err != nil {
		t.Errorf("%s: %v", workflow.SubmissionFile, err)
	} else if sub.Status != "submitted" || sub.SlurmJobID != int64(r.jobID()) || !fileExists(filepath.Join(sub.RunDir, "plan.json")) || sub.OutputDir != sub.RunDir ||
		!strings.HasPrefix(sub.Tags, "testcluster,") {
		t.Errorf("%s: %+v (run printed job %d)", workflow.SubmissionFile, sub, r.jobID())
	}
	log, err := os.ReadFile(filepath.Join(ws, workflow.SetupLogFile))
	if err != nil || !strings.Contains(string(log), "Profile values (") || benchLine.Match(log) {
		t.Errorf("%s (%v):\n%s", workflow.SetupLogFile, err, log)
	}
}

// The recipes the test master config's rows name, as schema-2 recipes of
// the mock engine (2P1D on three 4-GPU nodes; one aggregated node).
var (
	// powerFragment is InferenceX's tree for the power row: the lane's
	// shared blocks and the row's fragment (no model block: the binder
	// writes it), the stand-in's directories filled in by the test.
	powerFragment = map[string]string{
		"configs/srt-recipes/fixed-sequence-multi.yaml":                       "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/srt_fixed_sequence.sh\n  env:\n    TOKENIZER: /model\n",
		"configs/srt-recipes/telemetry-dcgm.yaml":                             "telemetry:\n  enabled: true\n  default_frequency: 0.5\n  dcgm_exporter:\n    container_image: dcgm-exporter\n",
		"benchmarks/multi_node/srt-slurm-recipes/mock/power/disagg-2p1d.yaml": mockFragment("mock-power"),
	}
	powerRecipes = map[string]string{"benchmarks/multi_node/srt-slurm-recipes/mock/power/disagg-2p1d.yaml": mockRecipe{Name: "mock-power", ISL: 8192, OSL: 1024, Conc: "4"}.V2() + telemetryBlock}
	evalRecipes  = map[string]string{"benchmarks/multi_node/srt-slurm-recipes/mock/8k1k/disagg-2p1d.yaml": mockRecipe{Name: "mock-8k1k", ISL: 8192, OSL: 1024, Conc: "16"}.V2()}
	aggRecipes   = map[string]string{"benchmarks/single_node/srt-slurm-recipes/mock/agg/agg.yaml": aggRecipe("mock-single")}
)

// TestWorkflowRows runs rows of a master config written for the test
// cluster (testdata/workflow: its runners.yaml record and master config),
// each driven only by the environment the workflow builds from the
// generator's row: a power row, the eval job the generator adds to an 8k1k
// row, and a single-node row, each staged as the workflow's later steps
// expect; a row with a bad environment is refused naming the variables
// and an interrupted one still leaves job_event.json; the cleanup step
// cancels the runner's jobs under both names and never fails. The rows
// reach Slurm as the workflow's runner does: the record's transport,
// Slurm's own commands (InferenceX's launcher submits with sbatch); the
// cleanup step runs over both transports.
func TestWorkflowRows(t *testing.T) {
	rest := setup(t)
	c := rest.over(t, "cli")
	t.Run("power row", func(t *testing.T) {
		// InferenceX's tree: the row's recipe is a fragment, composed with
		// the lane's shared block (a custom benchmark,
		// srt_fixed_sequence.sh, here its stand-in) and the telemetry
		// block, and bound for the runner's cluster.
		src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "custom-bench", "fixed-sequence-mock.sh"))
		if err != nil {
			t.Fatal(err)
		}
		recipes := maps.Clone(powerFragment)
		recipes["benchmarks/multi_node/srt_fixed_sequence.sh"] = string(src)
		maps.Copy(recipes, configsFiles)
		row := wfRow{name: "power", key: "mock-power", recipes: recipes}
		var runner string
		r, ws, rf := c.wfRun(t, row, func(r *run) {
			runner = strings.TrimPrefix(r.opts.name, workflow.JobNamePrefix)
			appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n")
			// The stand-in's results go to the host's run directory (the
			// stand-in enroot mounts nothing), named by --run-id.
			r.opts.args = []string{"--run-id", runner + "-run"}
		})
		fragmentFile := filepath.Join(ws, "benchmarks/multi_node/srt-slurm-recipes/mock/power/disagg-2p1d.yaml")
		runDir := filepath.Join(c.Root, "runs", runner+"-run")
		b, _ := os.ReadFile(fragmentFile)
		b = []byte(strings.NewReplacer("@LOGS@", filepath.Join(runDir, "logs"), "@SLURMBENCH@", filepath.Join(runDir, "bin", "slurmbench")).Replace(string(b)))
		if err := os.WriteFile(fragmentFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r.opts.env = append(r.opts.env, "POWER=true")
		if envValue(r.opts.env, "REQUIRE_POWER") != "1" || envValue(r.opts.env, "RECIPE_FINGERPRINT") == "" {
			t.Fatalf("the row's environment: REQUIRE_POWER %q, RECIPE_FINGERPRINT %q", envValue(r.opts.env, "REQUIRE_POWER"), envValue(r.opts.env, "RECIPE_FINGERPRINT"))
		}
		workspaceOnNodes(t, c, ws)
		r.start()
		if code := r.wait(8 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		ev := assertWorkflowFiles(t, r, ws, rf, "sa-bench_isl_8192_osl_1024", []int{4, 8})
		if p, _ := ev["power"].(map[string]any); p == nil || p["dcgm"] != true || ev["recipe_fingerprint"] == nil {
			t.Errorf("job_event power %v, fingerprint %v", ev["power"], ev["recipe_fingerprint"])
		}
		for _, f := range []string{workflow.PowerProducerStamp, filepath.Join("LOGS", "power", "manifest.json"), filepath.Join("LOGS", "power", workflow.PowerProducerStamp)} {
			if !fileExists(filepath.Join(ws, f)) {
				t.Errorf("%s not staged", f)
			}
		}
		if b, _ := os.ReadFile(filepath.Join(r.dir, "github-env")); string(b) != "POWER_EXPECTED_CPU_SOURCE=acpi\n" {
			t.Errorf("GITHUB_ENV %q", b)
		}
		// Every container sees /configs as InferenceX's jobs do: srt-slurm's
		// configs/ with the recipe mirror's copied over it, staged beside
		// the bound recipes and mounted before the record's mounts.
		assertConfigsStaged(t, ws, filepath.Join(runDir, "plan.json"))
		// What was planned is the bound recipe: the fragment's point bound
		// (model, the row's concurrencies, the cluster's exporter port).
		bound, err := os.ReadFile(filepath.Join(ws, workflow.BoundDir, "disagg-2p1d.bound.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"path: hf:mock/DeepSeek-R1", "port: 19401", "- 4\n", "- 8\n", "srt_fixed_sequence.sh"} {
			if !strings.Contains(string(bound), want) {
				t.Errorf("bound recipe lacks %q:\n%s", want, bound)
			}
		}
	})
	t.Run("eval row", func(t *testing.T) {
		row := wfRow{name: "eval", key: "mock-8k1k", evalOnly: true, recipes: evalRecipes}
		var runner string
		r, ws, rf := c.wfRun(t, row, func(r *run) {
			runner = strings.TrimPrefix(r.opts.name, workflow.JobNamePrefix)
			// The stand-in enroot cannot mount /logs: the stand-in
			// srt_eval.sh writes where its EVAL_RESULTS_DIR says (the
			// passthrough carries every EVAL_* name), so the run
			// directory is named (--run-id, the one flag here).
			r.opts.args = []string{"--run-id", runner + "-run"}
			r.opts.env = append(r.opts.env, "EVAL_LIMIT=3", "EVAL_RESULTS_DIR="+filepath.Join(c.Root, "runs", runner+"-run", "logs", "eval_results"))
		})
		if envValue(r.opts.env, "EVAL_ONLY") != "true" || envValue(r.opts.env, "EVAL_CONC") != "16" {
			t.Fatalf("the generator's eval job: EVAL_ONLY %q EVAL_CONC %q", envValue(r.opts.env, "EVAL_ONLY"), envValue(r.opts.env, "EVAL_CONC"))
		}
		workspaceOnNodes(t, c, ws)
		r.start()
		if code := r.wait(8 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		// The job ran InferenceX's eval command, as the launcher sets it.
		log, _ := os.ReadFile(filepath.Join(c.Root, "runs", runner+"-run", "logs", "eval.log"))
		if !strings.Contains(string(log), "env HF_HUB_OFFLINE=0 HF_DATASETS_OFFLINE=0 TRANSFORMERS_OFFLINE=0 MODEL_PATH=/model bash /infmax-workspace/benchmarks/multi_node/srt_eval.sh http://") {
			t.Errorf("the eval did not run srt_eval.sh as InferenceX does:\n%s", log)
		}
		// Eval-only: results*.json and meta_env.json, no benchmark result.
		if m, _ := filepath.Glob(filepath.Join(ws, "results*.json")); len(m) != 1 {
			t.Errorf("eval results staged: %v", m)
		}
		b, err := os.ReadFile(filepath.Join(ws, "meta_env.json"))
		if err != nil {
			t.Fatalf("meta_env.json: %v\n%s", err, r.output())
		}
		var meta map[string]string
		_ = json.Unmarshal(b, &meta)
		if meta["eval_conc"] != "16" || meta["workspace"] != "/infmax-workspace" {
			t.Errorf("the eval ran as %s", b)
		}
		if got := stagedResults(t, ws); len(got) != 0 {
			t.Errorf("an eval-only job staged benchmark results %v (RESULT_FILENAME %s)", got, rf)
		}
		ev := readJobEvent(t, ws)
		if ev["outcome"] != "success" || ev["eval_only"] != true || ev["run_eval"] != true || ev["slurm_job_id"] != r.jobID().String() {
			t.Errorf("job_event %v", ev)
		}
		if fileExists(filepath.Join(ws, workflow.PowerProducerStamp)) {
			t.Error("a power stamp on a row without power")
		}
	})
	// The single-node row also runs over slurmrestd: an operator's TOML
	// that extends the record with a REST URL reaches Slurm that way.
	for _, transport := range transports {
		tc := rest.over(t, transport)
		t.Run("single-node row/"+transport, func(t *testing.T) {
			row := wfRow{name: "single", key: "mock-single", recipes: aggRecipes}
			r, ws, rf := tc.wfRun(t, row, nil)
			r.start()
			if code := r.wait(8 * time.Minute); code != 0 {
				t.Fatalf("exit %d\n%s", code, r.output())
			}
			point, err := resultname.PointFilename(rf, "sa-bench_isl_64_osl_16", "4", "4", "", "")
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{rf + ".json", point, "LOGS", workflow.SingleNodeLogsBundle, workflow.SingleNodeSubmissionFile} {
				if !fileExists(filepath.Join(ws, f)) {
					t.Errorf("%s not staged (have %v)", f, stagedResults(t, ws))
				}
			}
			// A single-node launch leaves the single-node names only.
			for _, f := range []string{"multinode_server_logs.tar.gz", workflow.SubmissionFile} {
				if fileExists(filepath.Join(ws, f)) {
					t.Errorf("%s left by a single-node launch", f)
				}
			}
			ev := readJobEvent(t, ws)
			if ev["outcome"] != "success" || ev["launch_path"] != "srt-single" || ev["multinode"] != false || ev["conc"] != 4.0 {
				t.Errorf("job_event %v", ev)
			}
			if b, _ := os.ReadFile(filepath.Join(r.dir, "github-env")); len(b) != 0 {
				t.Errorf("GITHUB_ENV %q for a single-node row without power", b)
			}
			if cli := strings.Contains(r.stderr.String(), "(no REST URL in the record: the Slurm commands)"); cli != (tc.cliBin != "") {
				t.Errorf("over %s, the run reached Slurm through the commands: %v\n%s", transport, cli, r.output())
			}
		})
	}
	t.Run("bad environment", func(t *testing.T) {
		row := wfRow{name: "bad", key: "mock-power", recipes: powerRecipes, env: []string{"CONC_LIST=4 4", "IMAGE="}}
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
	t.Run("missing setup script", func(t *testing.T) {
		// A fragment whose setup_script is in neither configs/ of the tree:
		// refused by name before anything is imported or submitted, as
		// InferenceX's launcher refuses it (srtctl would only warn and start
		// every worker without it).
		recipes := maps.Clone(powerFragment)
		maps.Copy(recipes, configsFiles)
		frag := "benchmarks/multi_node/srt-slurm-recipes/mock/power/disagg-2p1d.yaml"
		recipes[frag] += "setup_script: absent.sh\n"
		row := wfRow{name: "nosetup", key: "mock-power", recipes: recipes}
		r, ws, _ := c.wfRun(t, row, nil)
		r.opts.env = append(r.opts.env, "POWER=true")
		r.start()
		if code := r.wait(time.Minute); code != 2 {
			t.Fatalf("exit %d, want 2\n%s", code, r.output())
		}
		if !strings.Contains(r.stderr.String(), "setup_script: absent.sh is in neither "+filepath.Join(ws, ".slurmbench", "configs")) {
			t.Errorf("refusal does not name setup_script and the staged directory:\n%s", r.output())
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
		slow := map[string]string{"benchmarks/multi_node/srt-slurm-recipes/mock/power/disagg-2p1d.yaml": mockRecipe{Name: "mock-sigint", ISL: 8192, OSL: 1024, TTFT: "30s"}.V2()}
		row := wfRow{name: "sigint", key: "mock-power", recipes: slow, env: []string{"CONC_LIST=4"}}
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
	for _, transport := range transports {
		t.Run("cleanup/"+transport, func(t *testing.T) { wfCleanup(t, rest.over(t, transport)) })
	}
}

// configsFiles are the setup scripts of the workflow's tree: srt-slurm's
// own configs/ (the utils/srt-slurm submodule) and the recipe mirror's,
// one name in both (the mirror's wins).
var configsFiles = map[string]string{
	"utils/srt-slurm/configs/rebuild-deepep.sh":                             "echo srt-slurm\n",
	"utils/srt-slurm/configs/vllm-router.sh":                                "echo srt-slurm\n",
	"benchmarks/multi_node/srt-slurm-recipes/configs/vllm-router.sh":        "echo mirror\n",
	"benchmarks/multi_node/srt-slurm-recipes/configs/patches/kimik3-fix.sh": "echo mirror patch\n",
}

// assertConfigsStaged checks the staged /configs directory of a workflow
// run in InferenceX's tree, and that every process of the plan mounts it.
func assertConfigsStaged(t *testing.T, ws, planFile string) {
	t.Helper()
	dir := filepath.Join(ws, ".slurmbench", "configs")
	for rel, body := range map[string]string{"rebuild-deepep.sh": "echo srt-slurm\n", "vllm-router.sh": "echo mirror\n", "patches/kimik3-fix.sh": "echo mirror patch\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, rel)); err != nil || string(b) != body {
			t.Errorf("staged /configs/%s: %q, %v; want %q", rel, b, err, body)
		}
	}
	b, err := os.ReadFile(planFile)
	if err != nil {
		t.Fatal(err)
	}
	var pl struct {
		Processes []struct {
			Name   string   `json:"name"`
			Mounts []string `json:"mounts"`
		} `json:"processes"`
	}
	if err := json.Unmarshal(b, &pl); err != nil {
		t.Fatal(err)
	}
	mounted := 0
	for _, p := range pl.Processes {
		if slices.Contains(p.Mounts, dir+":/configs") {
			mounted++
		}
	}
	if len(pl.Processes) == 0 || mounted == 0 {
		t.Errorf("no process of %s mounts %s at /configs", planFile, dir)
	}
}

// wfCleanup: the cleanup step cancels the runner's jobs under both names
// (not another job whose name only starts with the runner's), reaching
// Slurm over c's transport: slurmrestd from SLURM_REST_URL, or the
// commands on PATH; with neither it warns and passes.
func wfCleanup(t *testing.T, c *cluster) {
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
	env := []string{"RUNNER_NAME=" + runner}
	if c.cliBin == "" {
		env = append(env, "SLURM_REST_URL="+c.Cluster.RestURL, "SLURM_USER="+c.Cluster.User)
	} else {
		// The runner's own account, whose jobs `scancel --user=$USER`
		// cancels (the test's jobs run as the cluster's user).
		env = append(env, "USER="+c.Cluster.User)
	}
	r := c.prepare(t, runOpts{command: "cleanup", stage: "-", env: env})
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
	if c.cliBin != "" {
		return
	}
	// No Slurm to reach (no URL, no sbatch on PATH): a warning, and the
	// always() step passes.
	none := c.prepare(t, runOpts{command: "cleanup", stage: "-", env: []string{"RUNNER_NAME=" + runner}})
	none.recipe, none.profile = "", ""
	none.start()
	if code := none.wait(time.Minute); code != 0 || !strings.Contains(none.stderr.String(), "warning") {
		t.Errorf("cleanup without Slurm: exit %d\n%s", code, none.output())
	}
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

// mockFragment is the mock 2P1D recipe as an InferenceX fragment: no
// model block (the binder writes it), its benchmark the shared block's,
// with the stand-in's directories (@LOGS@, @SLURMBENCH@) for the test to
// fill in.
func mockFragment(name string) string {
	rec := mockRecipe{Name: name, ISL: 8192, OSL: 1024}.V2()
	rec = strings.Replace(rec, "model:\n  path: mock\n  container: mock-image\n  precision: fp8\n", "", 1)
	return rec[:strings.Index(rec, "benchmark:\n")] + "benchmark:\n  env:\n    SRT_LOGS_DIR: \"@LOGS@\"\n    SLURMBENCH: \"@SLURMBENCH@\"\n"
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
