package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// frontendRecipeHead is what the trtllm_serve and vllm-router recipes
// share: the mock image (whose trtllm-serve, trtllm-llmapi-launch, vllm and
// vllm-router are the mock engine's stand-ins, mockengine/standin) with the
// answer key's directory mounted, latency and the key passed to every
// worker through the environment the stand-ins read.
const frontendRecipeHead = `name: @NAME@
model:
  path: mock
  container: mock-image
  precision: fp8
container_mounts:
  @KEYDIR@: /answerkey
environment:
  SLURMBENCH_MOCK_TTFT: 5ms
  SLURMBENCH_MOCK_ITL: 1ms
  SLURMBENCH_MOCK_ANSWER_KEY: /answerkey/key.jsonl
`

const frontendRecipeTail = `health_check:
  max_attempts: 120
  interval_seconds: 1
benchmark:
  type: sa-bench
  isl: 64
  osl: 16
  concurrencies: "2x4"
  num_prompts_mult: 2
  num_warmup_mult: 0
`

// TestServingFrontends runs srt-slurm's frontends that start the engine's
// own servers, end to end in the real container runtime: the plan's argv
// (trtllm-llmapi-launch trtllm-serve …, trtllm-serve disaggregated
// --config /logs/ser.yaml, vllm serve …, vllm-router --vllm-pd-disaggregation
// …, and --worker-urls for aggregated workers) runs unchanged against the mock image's stand-ins, which refuse any
// flag they do not know. Each goes through its health gate, benchmarks c2
// and c4 through the public port, runs gsm8k against the key, and stages
// both results; the router's log shows a prefill worker answered its prefills.
func TestServingFrontends(t *testing.T) {
	t.Parallel()
	c := setup(t)
	img := pushMockImage(t, c, uniqueName("frontends"))
	t.Cleanup(func() { removeBundle(bundleOf(t, filepath.Join(c.Root, "squash"), img.Ref)) })
	cases := []struct {
		name, body string
		frontend   string // plan.Frontend
		health     string // plan.Health.Kind
		router     string // the public process's log must match ("" = the agg worker serves)
		prefill    bool   // the router's log must show a prefill answered
		v2         bool   // a schema-2 recipe
		servedAs   string // the aggregated trtllm-serve's model name ("" = not checked)
	}{
		{name: "trtllm-serve-agg", frontend: "trtllm_serve", health: "http-ok", servedAs: "model", body: `resources:
  gpu_type: mock
  gpus_per_node: 4
  agg_nodes: 1
  agg_workers: 1
frontend:
  type: trtllm_serve
  enable_multiple_frontends: false
backend:
  type: trtllm
  trtllm_config:
    aggregated:
      tensor_parallel_size: 4
      max_batch_size: 16
`},
		{name: "trtllm-serve-disagg", frontend: "trtllm_serve", health: "http-ok", prefill: true,
			router: `trtllm-serve disaggregated \(stand-in\): serving on`, body: `resources:
  gpu_type: mock
  gpus_per_node: 4
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
frontend:
  type: trtllm_serve
  enable_multiple_frontends: false
  args:
    log_level: info
backend:
  type: trtllm
  trtllm_config:
    prefill:
      tensor_parallel_size: 4
      cache_transceiver_config:
        backend: DEFAULT
    decode:
      tensor_parallel_size: 4
      cache_transceiver_config:
        backend: DEFAULT
`},
		{name: "vllm-router-pd", frontend: "vllm-router", health: "sglang-router", prefill: true,
			router: `vllm-router \(stand-in\): serving on`, body: `resources:
  gpu_type: mock
  gpus_per_node: 4
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
frontend:
  type: vllm-router
  enable_multiple_frontends: false
  args:
    policy: round_robin
backend:
  type: vllm
  vllm_config:
    prefill:
      tensor-parallel-size: 4
    decode:
      tensor-parallel-size: 4
      max-num-seqs: 64
`},
		// Schema 2 in the shape of InferenceX's trtllm_serve recipes
		// (single_node/srt-slurm-recipes/dsr1/trtllm/h200-fp8/8k1k.yaml):
		// engine.served_model_name, nested engine arguments, role env.
		{name: "trtllm-serve-agg-v2", frontend: "trtllm_serve", health: "http-ok", v2: true, servedAs: "mock/DeepSeek-R1-0528", body: `resources:
  gpu_type: mock
  gpus_per_node: 4
frontend:
  type: trtllm_serve
  enable_multiple_frontends: false
engine:
  type: trtllm
  served_model_name: mock/DeepSeek-R1-0528
roles:
  agg:
    nodes: 1
    workers: 1
    gpus: 4
    args:
      cuda_graph_config:
        enable_padding: true
        max_batch_size: 16
      kv_cache_config:
        dtype: fp8
        free_gpu_memory_fraction: 0.75
      tensor_parallel_size: 4
      moe_expert_parallel_size: 4
      pipeline_parallel_size: 1
    env:
      PYTHONNOUSERSITE: '1'
`},
		{name: "vllm-router-agg", frontend: "vllm-router", health: "sglang-router",
			router: `vllm-router \(stand-in\): serving on`, body: `resources:
  gpu_type: mock
  gpus_per_node: 4
  agg_nodes: 2
  agg_workers: 2
frontend:
  type: vllm-router
  enable_multiple_frontends: false
backend:
  type: vllm
  vllm_config:
    aggregated:
      tensor-parallel-size: 4
`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("e2e-" + tc.name)
			keyDir := filepath.Join(c.Root, "standins", name)
			if err := os.MkdirAll(keyDir, 0o777); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(keyDir, 0o777)
			t.Cleanup(func() {
				if !t.Failed() {
					_ = os.RemoveAll(keyDir)
				}
			})
			key := filepath.Join(keyDir, "key.jsonl")
			if out, err := exec.Command(c.Binary, "mock-answer-key", "--accuracy", "1", "--out", key).CombinedOutput(); err != nil {
				t.Fatalf("mock-answer-key: %v\n%s", err, out)
			}
			_ = os.Chmod(key, 0o644)
			rec := strings.NewReplacer("@NAME@", name, "@KEYDIR@", keyDir).Replace(frontendRecipeHead) + tc.body + frontendRecipeTail
			if tc.v2 {
				rec = "schema: 2\n" + rec
			}
			// Whole nodes, as GPU clusters give srtctl's jobs: a TRT-LLM
			// worker's step runs one MPI task per GPU.
			r := realContainerRun(t, c, img.Ref, runOpts{name: name, recipe: rec, slurm: []string{"exclusive = true"},
				env: []string{"RUN_EVAL=true", "EVAL_CONC=4", "EVAL_LIMIT=40", "RESULT_FILENAME=" + name}})
			r.start()
			if code := r.wait(10 * time.Minute); code != 0 {
				t.Fatalf("exit %d, want 0\n%s", code, r.output())
			}
			r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
			out := r.output()
			for _, re := range []string{name + `: succeeded`, `gsm8k: strict-match 1\.0+`} {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("output lacks /%s/:\n%s", re, out)
				}
			}
			if got := stagedResults(t, r.stage); len(got) != 2 {
				t.Errorf("staged %v, want the c2 and c4 results\n%s", got, out)
			}
			checkServingPlan(t, r.runDir(), tc.frontend, tc.health, tc.router, tc.servedAs, tc.prefill)
			r.removeOnPass()
		})
	}
}

// checkServingPlan reads the run's plan and logs: the frontend and gate
// planned, the public process's log showing it served (an aggregated
// trtllm-serve under the model name servedAs), and, for P/D, a
// prefill worker that answered the router's prefills.
func checkServingPlan(t *testing.T, dir, frontend, health, router, servedAs string, prefill bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pl plan.Plan
	if err := json.Unmarshal(b, &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Frontend != frontend || pl.Health.Kind != health {
		t.Errorf("plan frontend %q, health %q: want %q, %q", pl.Frontend, pl.Health.Kind, frontend, health)
	}
	var sawRouter, sawPrefill bool
	for _, p := range pl.Processes {
		lb, err := os.ReadFile(p.Log)
		if err != nil {
			continue
		}
		switch {
		case p.Role == plan.RoleFrontend && router != "":
			sawRouter = sawRouter || regexp.MustCompile(router).Match(lb)
			// Only the prefill worker answers the router's prefill.
			sawPrefill = sawPrefill || strings.Contains(string(lb), "(stand-in): first prefill answered by http://")
		case p.Role == plan.RoleAgg && p.Rank == 0 && router == "":
			// trtllm-serve names the model after /model's directory unless
			// --served_model_name names it.
			want := `mode=standalone model=` + regexp.QuoteMeta(servedAs) + ` listen=\S*:8000 `
			if !regexp.MustCompile(want).Match(lb) {
				t.Errorf("%s does not match /%s/ (trtllm-serve on the public port):\n%s", p.Log, want, lb)
			}
		}
	}
	if router != "" && !sawRouter {
		t.Errorf("no frontend log matches /%s/", router)
	}
	if prefill && !sawPrefill {
		t.Error("no prefill worker log shows a request")
	}
}
