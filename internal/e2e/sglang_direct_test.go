package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results/power"
)

// sglangDirectRecipe is schema 2's router-free `frontend.type: sglang`
// (srt-slurm's direct SGLang frontend) on the test cluster: one aggregated
// worker over two 4-GPU nodes, slurmbench's mock engine standing in for
// sglang.launch_server, with DCGM power over each point.
const sglangDirectRecipe = `schema: 2
name: @NAME@
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
    nodes: 2
    workers: 1
    args:
      served-model-name: mock/DeepSeek-R1
      ttft: 5ms
      itl: 1ms
      answer-key: @KEY@
frontend:
  type: sglang
  enable_multiple_frontends: false
health_check:
  max_attempts: 90
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: 64
  osl: 16
  concurrencies: "2x4"
  num_prompts_mult: 2
  num_warmup_mult: 0
telemetry:
  enabled: true
  collect_interval_ms: 500
  dcgm_exporter:
    container_image: dcgm-exporter
    port: 19401
`

// TestSGLangDirect runs the direct SGLang frontend end to end: no router
// or frontend step starts, the aggregated leader serves the public port,
// the health gate polls it (/health, then /v1/models), and the benchmark,
// the gsm8k eval and the power package all come from that one worker;
// the results stage under InferenceX's names.
func TestSGLangDirect(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-sglang-direct")
	key := filepath.Join(c.Root, "workspaces", name+"-answer-key.jsonl")
	if err := os.MkdirAll(filepath.Dir(key), 0o777); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(c.Binary, "mock-answer-key", "--accuracy", "1", "--out", key).CombinedOutput(); err != nil {
		t.Fatalf("mock-answer-key: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = os.Remove(key) })
	rec := regexp.MustCompile(`@NAME@`).ReplaceAllLiteralString(sglangDirectRecipe, name)
	rec = regexp.MustCompile(`@KEY@`).ReplaceAllLiteralString(rec, key)
	r := c.prepare(t, runOpts{name: name, recipe: rec, env: []string{"RUN_EVAL=true", "EVAL_CONC=4", "EVAL_LIMIT=40", "RESULT_FILENAME=" + name}})
	appendProfile(t, r.profile, "\n[telemetry]\nmock_watts = 350\n")
	r.start()
	if code := r.wait(8 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	out := r.output()
	for _, re := range []string{name + `: succeeded`, `gsm8k: strict-match 1\.0+`, `power c4: [0-9.]+ J per output token`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output lacks /%s/:\n%s", re, out)
		}
	}
	if got := stagedResults(t, r.stage); len(got) != 2 {
		t.Errorf("staged %v, want the c2 and c4 results\n%s", got, out)
	}
	// The exporters ran on both of the worker's nodes.
	if m, err := power.ReadManifest(filepath.Join(r.stage, "LOGS", "power", power.ManifestFile)); err != nil {
		t.Error(err)
	} else if m.PublicationValid == nil || !*m.PublicationValid || len(m.ObservedDevices) != 8 {
		t.Errorf("power manifest: valid %v, %d devices observed (want 8), reasons %v", m.PublicationValid, len(m.ObservedDevices), m.Reasons)
	}

	dir := r.runDir()
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pl plan.Plan
	if err := json.Unmarshal(b, &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Frontend != "sglang-direct" || pl.Health.Kind != "models" || pl.Health.Port != plan.PortPublicFrontend {
		t.Errorf("plan frontend %q, health %s on port %d: want sglang-direct, models on 8000", pl.Frontend, pl.Health.Kind, pl.Health.Port)
	}
	var leader *plan.Process
	for i, p := range pl.Processes {
		switch {
		case p.Role == plan.RoleFrontend || p.Role == plan.RoleNginx:
			t.Errorf("%s (%s) planned: the direct server has no frontend", p.Name, p.Role)
		case p.Role == plan.RoleAgg && p.Rank == 0:
			leader = &pl.Processes[i]
		}
	}
	if leader == nil || leader.Ports["http"] != plan.PortPublicFrontend || leader.Nodes[0] != pl.Health.Node {
		t.Fatalf("aggregated leader %+v: want it on the health gate's node, serving 8000", leader)
	}
	// The worker's own log shows it answered the clients: the mock logs
	// every request it serves, and no frontend log exists.
	if fileExists(filepath.Join(dir, "logs", "frontend_0.log")) {
		t.Error("a frontend_0 log: a frontend ran")
	}
	lb, err := os.ReadFile(leader.Log)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`mode=standalone .*listen=\S*:8000 `).Match(lb) {
		t.Errorf("%s does not show the leader listening on the public port:\n%s", leader.Log, lb)
	}
	r.removeOnPass()
}
