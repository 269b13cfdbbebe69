package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// laneRecord is a runners.yaml cluster record for id with its volumes under
// root and the srt-slurm lines given (four GPUs per node, as the mock
// fragments ask).
func laneRecord(id, root, srt string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "  %s:\n    gpus-per-node: 4\n    available-cpu-dram-mib: 16_384\n    arch: x86_64\n", id)
	b.WriteString("    models:\n      entries:\n        DeepSeek-R1: {root: models, dir: mock}\n")
	b.WriteString("    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: false\n      volumes:\n")
	for _, v := range []string{"models", "aiperf-cache", "hf-hub-cache", "dynamo-wheels", "it-share-data"} {
		fmt.Fprintf(&b, "        %s: {path: %q}\n", v, filepath.Join(root, id, v))
	}
	b.WriteString("      srt-slurm:\n        network-interface: \"\"\n")
	for _, l := range strings.Split(strings.TrimSpace(srt), "\n") {
		if l != "" {
			b.WriteString("        " + l + "\n")
		}
	}
	return b.String()
}

// laneTree writes an InferenceX tree whose runners.yaml holds clusters of
// InferenceX's lane table and one outside it, each with one runner
// (<cluster>_00), the lane's shared blocks, a setup script in srt-slurm's
// configs/, and the recipes given.
func laneTree(t *testing.T, recipes map[string]string) (ws, root string) {
	t.Helper()
	ws, root = t.TempDir(), t.TempDir()
	clusters := map[string]string{
		"gb200-nv":    fmt.Sprintf("shared-run-root: %q", filepath.Join(root, "runs")),
		"gb300-nv":    "",
		"mi355x-amds": "volume-mounts: {hf-hub-cache: /hf_hub_cache}",
		"b200-nscale": "",
		"h200-dgxc":   `default-time-limit: "6:00:00"`,
		"h100-dgxc":   `default-time-limit: "6:00:00"`,
		"mycluster":   "",
	}
	var y strings.Builder
	y.WriteString("labels:\n")
	ids := make([]string, 0, len(clusters))
	for id := range clusters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(&y, "  cluster:%s: [%s_00]\n", id, id)
	}
	y.WriteString("clusters:\n")
	for _, id := range ids {
		y.WriteString(laneRecord(id, root, clusters[id]))
	}
	files := map[string]string{
		"configs/runners.yaml":                          y.String(),
		"configs/srt-recipes/fixed-sequence-multi.yaml": "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/srt_fixed_sequence.sh\n",
		"configs/srt-recipes/agentic-multi.yaml":        "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh\n",
		"utils/srt-slurm/configs/install-torchao.sh":    "#!/bin/bash\n",
		".git/HEAD":                         "ref: refs/heads/main\n",
		"benchmarks/multi_node/srt_eval.sh": "#!/bin/bash\n",
		"images/old.sqsh":                   "squash",
	}
	for k, v := range recipes {
		files[k] = v
	}
	for rel, body := range files {
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws, root
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func planJSON(t *testing.T, pl *plan.Plan) string {
	t.Helper()
	data, err := json.Marshal(pl)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// planningLaunch plans the point for real (launch.Plan) where the run
// would submit it, and keeps what it planned.
type planningLaunch struct {
	opts launch.RunOptions
	plan *plan.Plan
	prof *profile.Profile
	// meta is the meta_env.json the run stages ("" : none).
	meta string
}

func (f *planningLaunch) run(ctx context.Context, o launch.RunOptions) error {
	f.opts = o
	pl, prof, err := launch.Plan(ctx, o.Plan)
	if err != nil {
		return err
	}
	f.plan, f.prof = pl, prof
	o.Hooks.Planned(pl, prof)
	if f.meta != "" {
		return os.WriteFile(filepath.Join(o.Stage.StageDir, EvalMetaFile), []byte(f.meta), 0o644)
	}
	return nil
}

// stagedMeta is the meta_env.json an eval in the container wrote.
const stagedMeta = `{"is_multinode": false, "eval_suite": "gsm8k", "conc": 8, "recipe_fingerprint": ""}`

const laneFragment = `schema: 2
name: mock-2p1d
resources:
  gpu_type: mock
  gpus_per_node: 4
engine: mock
roles:
  prefill:
    nodes: 2
    workers: 2
    gpus: 4
    args:
      ep-dispatch-algorithm: fake
  decode:
    nodes: 1
    workers: 1
    gpus: 4
    args:
      ep-dispatch-algorithm: fake
frontend:
  type: dynamo
`

// TestLaneWorkflow drives `slurmbench run` by the workflow's environment
// on a built InferenceX tree and checks, per cluster of the lane table and
// one outside it, what the lane changes: a refusal (exit 2 before anything
// is bound or staged, naming FRAMEWORK, the cluster and the lane in
// InferenceX's words), the setup script, mounts (their host directories
// created), eval edits, real verification, the job's time limit and
// job_event.json's launch_path — and that a cluster outside the table runs
// as it would without one.
func TestLaneWorkflow(t *testing.T) {
	const trt = "benchmarks/multi_node/srt-slurm-recipes/mock/trtllm/gb300/agentx.yaml"
	const plain = "benchmarks/multi_node/srt-slurm-recipes/mock/sglang/2p1d.yaml"
	forced := strings.Replace(laneFragment, "engine: mock\n", "engine: mock\nenvironment:\n  TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS: \"3\"\n  KEEP: \"1\"\n", 1)
	type outcome struct {
		plan *plan.Plan
		prof *profile.Profile
		opts launch.RunOptions
		ws   string
		root string
	}
	hasOverride := func(o outcome, s string) bool {
		for _, ov := range o.opts.Plan.Overrides {
			if ov.String() == s {
				return true
			}
		}
		return false
	}
	mount := func(o outcome, m string) bool {
		return slices.Contains(o.prof.Container.Mounts, m)
	}
	for _, tc := range []struct {
		name    string
		cluster string
		recipe  string
		env     []string
		refused string // exit 2 naming this; "" : planned
		// noScript leaves the lane's setup script out of the tree.
		noScript bool
		check    func(t *testing.T, o outcome)
	}{
		{name: "gb200-nv refuses a framework outside its lane", cluster: "gb200-nv", recipe: plain,
			env: []string{"FRAMEWORK", "sglang"}, refused: "Unsupported framework: sglang. Supported frameworks are: dynamo-sglang, dynamo-trt, dynamo-vllm"},
		{name: "b200-nscale refuses dsv4 fp8 on dynamo-trt", cluster: "b200-nscale", recipe: plain,
			env: []string{"FRAMEWORK", "dynamo-trt", "PRECISION", "fp8"}, refused: "multinode dsv4 supports only dynamo-vllm (FRAMEWORK=dynamo-trt)"},
		{name: "b200-nscale runs dsv4 fp4 sglang on its native lane", cluster: "b200-nscale", recipe: plain,
			check: func(t *testing.T, o outcome) {
				if ev := readEvent(t, o.ws); ev["launch_path"] != "srt-native" {
					t.Errorf("launch_path %v", ev["launch_path"])
				}
				if o.plan.Slurm.TimeLimitMinutes != 480 {
					t.Errorf("time limit %d min, want SALLOC_TIME_LIMIT's 480", o.plan.Slurm.TimeLimitMinutes)
				}
			}},
		{name: "gb200-nv dynamo-sglang: the setup script and the wheels cache of glm5.2 fp4 AgentX", cluster: "gb200-nv", recipe: plain,
			env: []string{"MODEL_PREFIX", "glm5.2", "IS_AGENTIC", "1", "SCENARIO_TYPE", "agentic-coding", "KV_OFFLOADING", "none"},
			check: func(t *testing.T, o outcome) {
				// The mock engine runs no setup steps; the planner checks the
				// script is staged (the refusal case below).
				if !hasOverride(o, "--set setup_script=install-torchao.sh") {
					t.Errorf("overrides %v", o.opts.Plan.Overrides)
				}
				wheels := filepath.Join(o.root, "gb200-nv", "dynamo-wheels")
				if !mount(o, wheels+":/configs/dynamo-wheels") {
					t.Errorf("mounts %v", o.prof.Container.Mounts)
				}
				if st, err := os.Stat(wheels); err != nil || st.Mode().Perm() != 0o777 {
					t.Errorf("wheels cache host directory: %v %v", st, err)
				}
				if ev := readEvent(t, o.ws); ev["launch_path"] != "srt-multi" || ev["cluster"] != "gb200-nv" {
					t.Errorf("launch_path %v cluster %v", ev["launch_path"], ev["cluster"])
				}
			}},
		{name: "gb200-nv minimaxm3 runs on the shared run root with a copy of the workspace", cluster: "gb200-nv", recipe: plain,
			env: []string{"MODEL_PREFIX", "minimaxm3"},
			check: func(t *testing.T, o outcome) {
				copyDir := SharedWorkspaceDir(filepath.Join(o.root, "runs"), "gb200-nv_00")
				if o.opts.Plan.Workspace != copyDir || !strings.Contains(planJSON(t, o.plan), strconvQuote(copyDir+":"+plan.WorkspaceMount)) {
					t.Fatalf("job workspace %s; the plan does not mount it at %s", o.opts.Plan.Workspace, plan.WorkspaceMount)
				}
				for rel, want := range map[string]bool{
					"benchmarks/multi_node/srt_eval.sh": true, "configs/runners.yaml": true,
					".slurmbench/configs/install-torchao.sh": true, ".git": false, "images/old.sqsh": false,
					"benchmarks/multi_node/srt-slurm-recipes": false, ".slurmbench/bound": false,
				} {
					if _, err := os.Stat(filepath.Join(copyDir, rel)); (err == nil) != want {
						t.Errorf("%s in the copy: %v, want %v", rel, err == nil, want)
					}
				}
				if o.prof.Paths.Configs != filepath.Join(copyDir, ".slurmbench", "configs") {
					t.Errorf("paths.configs %s", o.prof.Paths.Configs)
				}
			}},
		{name: "mi355x-amds TileRT: the prefill image is PREFILL_IMAGE", cluster: "mi355x-amds", recipe: plain,
			env: []string{"FRAMEWORK", "tilert", "PREFILL_IMAGE", "tilert-prefill:1"},
			check: func(t *testing.T, o outcome) {
				src, ok := o.prof.Sources["containers."+profile.TileRTPrefillAlias]
				if o.prof.Containers[profile.TileRTPrefillAlias] == "" || o.prof.Containers[profile.TileRTDecodeAlias] == "" || !ok || src.File != "PREFILL_IMAGE" {
					t.Errorf("containers %v, prefill source %+v", o.prof.Containers, src)
				}
			}},
		{name: "gb200-nv dsv4 on dynamo-trt mounts the runner's workspace", cluster: "gb200-nv", recipe: plain,
			env: []string{"FRAMEWORK", "dynamo-trt"},
			check: func(t *testing.T, o outcome) {
				if o.opts.Plan.Workspace != o.ws {
					t.Errorf("job workspace %s", o.opts.Plan.Workspace)
				}
			}},
		{name: "gb200-nv dynamo-trt: no setup script and no wheels cache", cluster: "gb200-nv", recipe: plain,
			env: []string{"FRAMEWORK", "dynamo-trt", "MODEL_PREFIX", "glm5.2", "IS_AGENTIC", "1", "SCENARIO_TYPE", "agentic-coding", "KV_OFFLOADING", "none"},
			check: func(t *testing.T, o outcome) {
				for _, ov := range o.opts.Plan.Overrides {
					if strings.Contains(ov.String(), "setup_script") {
						t.Errorf("override %s", ov)
					}
				}
				if slices.ContainsFunc(o.prof.Container.Mounts, func(m string) bool { return strings.HasSuffix(m, ":/configs/dynamo-wheels") }) {
					t.Errorf("mounts %v", o.prof.Container.Mounts)
				}
				// glm5.2 runs on the shared run root; dsv4 on dynamo-trt
				// would not: the prefix decides here.
				if o.opts.Plan.Workspace == o.ws {
					t.Errorf("glm5.2 mounts the runner's workspace")
				}
			}},
		{name: "mi355x-amds eval: ep-dispatch-algorithm unset and aiperf mounted for 1 h", cluster: "mi355x-amds", recipe: plain,
			env: []string{"FRAMEWORK", "sglang", "RUN_EVAL", "true"},
			check: func(t *testing.T, o outcome) {
				for _, k := range []string{"roles.prefill.args.ep-dispatch-algorithm", "roles.decode.args.ep-dispatch-algorithm"} {
					if !hasOverride(o, "--unset "+k) {
						t.Errorf("no --unset %s in %v", k, o.opts.Plan.Overrides)
					}
				}
				if !mount(o, filepath.Join(o.root, "mi355x-amds", "aiperf-cache")+":/aiperf_mmap_cache") {
					t.Errorf("mounts %v", o.prof.Container.Mounts)
				}
				if o.plan.Slurm.TimeLimitMinutes != 60 {
					t.Errorf("time limit %d min", o.plan.Slurm.TimeLimitMinutes)
				}
				if js := planJSON(t, o.plan); strings.Contains(js, `"--ep-dispatch-algorithm"`) {
					t.Error("the plan's workers still get --ep-dispatch-algorithm")
				}
				if data, _ := os.ReadFile(filepath.Join(o.ws, EvalMetaFile)); string(data) != stagedMeta {
					t.Errorf("meta_env.json changed on a lane without write_eval_meta:\n%s", data)
				}
			}},
		{name: "mi355x-amds throughput run without unsets", cluster: "mi355x-amds", recipe: plain, env: []string{"FRAMEWORK", "sglang"},
			check: func(t *testing.T, o outcome) {
				if len(o.opts.Plan.Overrides) != 0 {
					t.Errorf("overrides %v", o.opts.Plan.Overrides)
				}
				if js := planJSON(t, o.plan); !strings.Contains(js, `"--ep-dispatch-algorithm"`) {
					t.Error("the throughput plan's workers lost --ep-dispatch-algorithm")
				}
			}},
		{name: "gb200-nv dynamo-sglang without the lane's setup script in the tree is refused", cluster: "gb200-nv", recipe: plain,
			noScript: true, refused: "install-torchao.sh"},
		{name: "gb300-nv dsv4 AgentX trt eval-only: real verification and head frontend for 8 h", cluster: "gb300-nv", recipe: trt,
			env: []string{"FRAMEWORK", "dynamo-trt", "IS_AGENTIC", "1", "SCENARIO_TYPE", "agentic-coding", "KV_OFFLOADING", "none", "EVAL_ONLY", "true"},
			check: func(t *testing.T, o outcome) {
				if !hasOverride(o, "--set frontend.placement.node=head") {
					t.Errorf("overrides %v", o.opts.Plan.Overrides)
				}
				bound, err := os.ReadFile(strings.SplitN(o.opts.Plan.Recipe, ":", 2)[0])
				if err != nil || strings.Contains(string(bound), srtlanes.ForcedAcceptanceMarker) || !strings.Contains(string(bound), "KEEP") {
					t.Errorf("bound recipe %s: %v\n%s", o.opts.Plan.Recipe, err, bound)
				}
				if o.plan.Slurm.TimeLimitMinutes != 480 {
					t.Errorf("time limit %d min, want the long 8 h", o.plan.Slurm.TimeLimitMinutes)
				}
				// write_eval_meta: the staged file rebuilt from the
				// workflow's variables.
				data, _ := os.ReadFile(filepath.Join(o.ws, EvalMetaFile))
				var m map[string]any
				if json.Unmarshal(data, &m) != nil || m["recipe_fingerprint"] != "abc" || m["is_multinode"] != true || m["eval_suite"] != "gsm8k" {
					t.Errorf("meta_env.json not refreshed:\n%s", data)
				}
			}},
		{name: "gb300-nv throughput run keeps forced acceptance for 4 h", cluster: "gb300-nv", recipe: trt,
			env: []string{"FRAMEWORK", "dynamo-trt", "MODEL_PREFIX", "qwen3.5"},
			check: func(t *testing.T, o outcome) {
				bound, _ := os.ReadFile(strings.SplitN(o.opts.Plan.Recipe, ":", 2)[0])
				if !strings.Contains(string(bound), srtlanes.ForcedAcceptanceMarker) {
					t.Errorf("forced acceptance stripped on a throughput run:\n%s", bound)
				}
				if o.plan.Slurm.TimeLimitMinutes != 240 {
					t.Errorf("time limit %d min", o.plan.Slurm.TimeLimitMinutes)
				}
			}},
		{name: "h200-dgxc: a record whose default-time-limit would shadow the lane's limits is refused", cluster: "h200-dgxc", recipe: plain,
			env: []string{"FRAMEWORK", "vllm"}, refused: "its time limits are shadowed by default-time-limit"},
		{name: "h100-dgxc: the record's fixed default-time-limit as the lane has none", cluster: "h100-dgxc", recipe: plain,
			env: []string{"FRAMEWORK", "dynamo-trt", "MODEL_PREFIX", "qwen3.5"},
			check: func(t *testing.T, o outcome) {
				if o.plan.Slurm.TimeLimitMinutes != 360 {
					t.Errorf("time limit %d min", o.plan.Slurm.TimeLimitMinutes)
				}
			}},
		{name: "a cluster outside the table: no lane differences", cluster: "mycluster", recipe: plain,
			env: []string{"FRAMEWORK", "sglang", "RUN_EVAL", "true", "SALLOC_TIME_LIMIT", "480"},
			check: func(t *testing.T, o outcome) {
				for _, ov := range o.opts.Plan.Overrides {
					if !strings.HasPrefix(ov.String(), "--set post_eval.") {
						t.Errorf("override %s", ov)
					}
				}
				// srt_time_limit as for a row without limits: SALLOC_TIME_LIMIT.
				if o.plan.Slurm.TimeLimitMinutes != 480 {
					t.Errorf("time limit %d min", o.plan.Slurm.TimeLimitMinutes)
				}
				if ev := readEvent(t, o.ws); ev["launch_path"] != "srt-multi" {
					t.Errorf("launch_path %v", ev["launch_path"])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, root := laneTree(t, map[string]string{trt: forced, plain: laneFragment})
			if tc.noScript {
				if err := os.Remove(filepath.Join(ws, "utils/srt-slurm/configs/install-torchao.sh")); err != nil {
					t.Fatal(err)
				}
			}
			env := with(multinodeEnv(), append([]string{"GITHUB_WORKSPACE", ws, "RUNNER_NAME", tc.cluster + "_00",
				"SRT_RECIPE", tc.recipe, "MODEL", "DeepSeek-R1", "IMAGE", "mock:latest", "SALLOC_TIME_LIMIT", "480"}, tc.env...)...)
			if env["IS_AGENTIC"] == "1" {
				env = with(env, "ISL", "<unset>", "OSL", "<unset>")
			}
			f := &planningLaunch{}
			if env["RUN_EVAL"] == "true" || env["EVAL_ONLY"] == "true" {
				f.meta = stagedMeta
			}
			err := Run(t.Context(), RunOptions{IO: launch.IO{Stdout: &strings.Builder{}, Stderr: &strings.Builder{}},
				Env: env, Resolver: Runners{}, Launch: f.run, Now: clock(0)})
			if tc.refused != "" {
				if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tc.refused) ||
					!strings.Contains(err.Error(), tc.cluster) || !strings.Contains(err.Error(), "lane") {
					t.Fatalf("err %v, want exit 2 naming %s and %q", err, tc.cluster, tc.refused)
				}
				if f.plan != nil {
					t.Error("planned after a refusal")
				}
				if _, err := os.Stat(filepath.Join(ws, BoundDir)); err == nil && !tc.noScript {
					t.Error("bound before the refusal")
				}
				ev := readEvent(t, ws)
				if e, _ := ev["error"].(map[string]any); e == nil || !strings.Contains(fmt.Sprint(e["message"]), tc.refused) {
					t.Errorf("job_event error %v", ev["error"])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, outcome{plan: f.plan, prof: f.prof, opts: f.opts, ws: ws, root: root})
		})
	}
}
