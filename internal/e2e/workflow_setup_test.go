package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results/resultname"
)

// setupFragment is the mock-setup row's fragment (testdata/workflow's
// master config): a vllm-router 1P1D recipe on the mock image's
// stand-ins, so every process of it — both workers and the router —
// runs the recipe's setup_script first (the mock engine's own workers
// run none), and the sa-bench native client, which runs outside the
// container. No model block: the binder writes it.
const setupFragment = `name: mock-setup
resources:
  gpu_type: mock
  gpus_per_node: 4
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
frontend:
  type: vllm-router
  enable_multiple_frontends: false
backend:
  type: vllm
  vllm_config:
    prefill:
      tensor-parallel-size: 4
    decode:
      tensor-parallel-size: 4
environment:
  SLURMBENCH_MOCK_TTFT: 5ms
  SLURMBENCH_MOCK_ITL: 1ms
health_check:
  max_attempts: 120
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: 1024
  osl: 128
  num_prompts_mult: 2
  num_warmup_mult: 0
setup_script: @SCRIPT@
`

// setupTree is InferenceX's tree for the mock-setup row: the lane's
// shared block, the fragment naming script, and both configs/ sources.
// e2e-setup.sh is srt-slurm's (utils/srt-slurm/configs) and reads
// e2e-fact.txt, which both have: it must see the mirror's, copied over
// srt-slurm's. It leaves a marker under /logs (mounted: the run's logs/)
// and says what it read on its output, the step's log. e2e-fail.sh is a
// mirror patch (run as /configs/patches/e2e-fail.sh) that fails.
func setupTree(script string) map[string]string {
	frag := "benchmarks/multi_node/srt-slurm-recipes/mock/setup/disagg-1p1d.yaml"
	return map[string]string{
		"configs/srt-recipes/fixed-sequence-multi.yaml": "health_check:\n  interval_seconds: 1\n",
		frag: strings.Replace(setupFragment, "@SCRIPT@", script, 1),
		"utils/srt-slurm/configs/e2e-setup.sh": `set -eu
fact=$(cat /configs/e2e-fact.txt)
mkdir -p /logs/setup-markers
marker=$(mktemp /logs/setup-markers/ran.XXXXXX)
printf '%s\n' "$fact" >"$marker"
echo "e2e-setup: read $fact from /configs/e2e-fact.txt"
`,
		"utils/srt-slurm/configs/e2e-fact.txt":                                "srt-slurm\n",
		"benchmarks/multi_node/srt-slurm-recipes/configs/e2e-fact.txt":        "mirror\n",
		"benchmarks/multi_node/srt-slurm-recipes/configs/patches/e2e-fail.sh": "echo 'e2e-fail: the patch does not apply' >&2\nexit 3\n",
	}
}

// TestWorkflowSetupScript runs a workflow row (driven only by the
// workflow's environment) whose fragment names a setup_script, in Slurm's
// own OCI containers from the mock image: the staged /configs is mounted
// in every container, the script — srt-slurm's, reading a file the mirror
// overrides — runs as `bash /configs/e2e-setup.sh` in each process's
// container before its program, and the run succeeds. A script that
// exits non-zero fails the run naming the setup step.
func TestWorkflowSetupScript(t *testing.T) {
	t.Parallel()
	c := setup(t).over(t, "cli")
	img := pushMockImage(t, c, uniqueName("wf-setup"))
	t.Cleanup(func() { removeBundle(bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref)) })
	// ociRow prepares the row on the OCI path: the image alias names the
	// pushed image, and the containers start with Slurm's OCI runtime,
	// the image imported on a compute node (realContainerRun's edits).
	ociRow := func(t *testing.T, name, script string) (*run, string, string) {
		row := wfRow{name: name, key: "mock-setup", recipes: setupTree(script)}
		r, ws, rf := c.wfRun(t, row, func(r *run) {
			r.editProfile(`mock-image = "slurmbench/mock-engine:e2e"`, `mock-image = "`+img.Ref+`"`)
			r.editProfile(`runtime = "enroot"
enroot = "`+c.Enroot+`"`, `runtime = "oci"
insecure_registries = ["`+os.Getenv("SLURMBENCH_CLUSTER_REGISTRY")+`"]
import_on = "compute"`)
		})
		if envValue(r.opts.env, "RUN_EVAL") != "false" || envValue(r.opts.env, "CONC_LIST") != "4" {
			t.Fatalf("the row's environment: RUN_EVAL %q CONC_LIST %q", envValue(r.opts.env, "RUN_EVAL"), envValue(r.opts.env, "CONC_LIST"))
		}
		return r, ws, rf
	}
	t.Run("runs before the workers", func(t *testing.T) {
		r, ws, rf := ociRow(t, "setup", "e2e-setup.sh")
		r.start()
		if code := r.wait(10 * time.Minute); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.output())
		}
		point, err := resultname.PointFilename(rf, "sa-bench_isl_1024_osl_128", "4", "8", "4", "4")
		if err != nil {
			t.Fatal(err)
		}
		if got := stagedResults(t, ws); !slices.Equal(got, []string{point}) {
			t.Errorf("staged %v, want [%s]", got, point)
		}
		if ev := readJobEvent(t, ws); ev["outcome"] != "success" {
			t.Errorf("job_event %v", ev)
		}
		runDir := r.runDir()
		assertConfigsMounted(t, ws, filepath.Join(runDir, "plan.json"))
		setupRan := assertSetupBeforeProgram(t, filepath.Join(runDir, "plan.json"), "bash /configs/e2e-setup.sh", "e2e-setup: read mirror from /configs/e2e-fact.txt")
		// One marker per process that ran the script, each with the
		// mirror's fact: the script wrote them through /logs.
		markers, _ := filepath.Glob(filepath.Join(runDir, "logs", "setup-markers", "ran.*"))
		if len(markers) != setupRan || setupRan != 3 {
			t.Errorf("markers %v from %d processes with the setup step; want one from each of the 2 workers and the router", markers, setupRan)
		}
		for _, m := range markers {
			if b, err := os.ReadFile(m); err != nil || string(b) != "mirror\n" {
				t.Errorf("marker %s: %q, %v; want the mirror's e2e-fact.txt", m, b, err)
			}
		}
	})
	t.Run("failing script", func(t *testing.T) {
		r, ws, _ := ociRow(t, "setupfail", "e2e-fail.sh")
		r.start()
		if code := r.wait(10 * time.Minute); code == 0 {
			t.Fatalf("exit 0 with a setup script that exits 3\n%s", r.output())
		}
		o := r.outcome()
		if o.Class != "setup_failed" || !strings.Contains(o.FirstError, "setup step 1 (bash /configs/patches/e2e-fail.sh)") || !strings.Contains(o.FirstError, "exit status 3") {
			t.Errorf("outcome class %q first error %q, want setup_failed naming the step and its exit status", o.Class, o.FirstError)
		}
		if !slices.ContainsFunc(o.LastLines, func(l string) bool { return strings.Contains(l, "e2e-fail: the patch does not apply") }) {
			t.Errorf("outcome last lines lack the script's own output: %q", o.LastLines)
		}
		if out := r.output(); !strings.Contains(out, "setup_failed") {
			t.Errorf("the run's summary does not name the setup failure:\n%s", out)
		}
		ev := readJobEvent(t, ws)
		if ev["outcome"] != "failure" {
			t.Errorf("job_event %v", ev)
		}
		if jobs := r.jobs(); len(jobs) != 1 {
			t.Errorf("jobs named %s: %+v, want one", r.opts.name, jobs)
		}
	})
}

// assertConfigsMounted checks that the staged /configs has srt-slurm's
// script and the mirror's fact over srt-slurm's, and that the plan mounts
// it in every container process.
func assertConfigsMounted(t *testing.T, ws, planFile string) {
	t.Helper()
	dir := filepath.Join(ws, ".slurmbench", "configs")
	if b, err := os.ReadFile(filepath.Join(dir, "e2e-fact.txt")); err != nil || string(b) != "mirror\n" {
		t.Errorf("staged e2e-fact.txt %q, %v", b, err)
	}
	pl := readPlan(t, planFile)
	for _, p := range pl.Processes {
		if p.Container && !slices.Contains(p.Mounts, dir+":"+plan.ConfigsMount) {
			t.Errorf("%s runs in a container without %s at %s: %v", p.Name, dir, plan.ConfigsMount, p.Mounts)
		}
	}
}

// assertSetupBeforeProgram checks every process of the plan that has a
// setup step: the step is `script` (split on spaces) and its log shows
// the shim's setup banner, then the script's line said, then the
// program's exec line, in that order. It returns how many such processes
// there are.
func assertSetupBeforeProgram(t *testing.T, planFile, script, said string) int {
	t.Helper()
	n := 0
	for _, p := range readPlan(t, planFile).Processes {
		if len(p.Setup) == 0 {
			continue
		}
		n++
		if !slices.EqualFunc(p.Setup, [][]string{strings.Fields(script)}, slices.Equal) {
			t.Errorf("%s: setup %q, want [%s]", p.Name, p.Setup, script)
		}
		b, err := os.ReadFile(p.Log)
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		log := string(b)
		banner := strings.Index(log, "slurmbench exec: "+p.Name+" setup 1/1 on ")
		ran := strings.Index(log, said)
		started := strings.Index(log, "slurmbench exec: "+p.Name+" on ")
		// The banner (the shim's stderr) and the script's own line (its
		// stdout) reach the log through two pipes, in either order; both
		// come before the program starts.
		if banner < 0 || ran < 0 || started < ran || started < banner {
			t.Errorf("%s's log does not show its setup (at %d), the script's line (at %d), then its program (at %d):\n%s", p.Name, banner, ran, started, log)
		}
	}
	return n
}

func readPlan(t *testing.T, file string) plan.Plan {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var pl plan.Plan
	if err := json.Unmarshal(b, &pl); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return pl
}
