package planner

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// directRecipe is schema 2's router-free `frontend.type: sglang` as
// InferenceX's single-node fragments write it (dsr1/sglang/b200-fp4-mtp):
// one aggregated worker on half an 8-GPU node.
const directRecipe = `schema: 2
name: direct
model: {path: dsr1, container: sglang, precision: fp4}
resources: {gpu_type: b200, gpus_per_node: 8}
frontend:
  type: sglang
  enable_multiple_frontends: false
engine: sglang
roles:
  agg:
    nodes: 1
    workers: 1
    gpus: 4
    args: {tensor-parallel-size: 4, served-model-name: nvidia/DeepSeek-R1-0528-FP4-V2, mem-fraction-static: 0.85}
    env: {SGLANG_ENABLE_SPEC_V2: "1"}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [4, 8]}
`

// edited applies "old=>new" text edits to directRecipe; each must apply.
func edited(t *testing.T, edits ...string) string {
	t.Helper()
	text := directRecipe
	for _, e := range edits {
		old, repl, ok := strings.Cut(e, "=>")
		if !ok || !strings.Contains(text, old) {
			t.Fatalf("edit %q does not apply", e)
		}
		text = strings.Replace(text, old, repl, 1)
	}
	return text
}

// planText reads text as a recipe and plans it on a testdata profile; a
// refusal of the reader or the planner is the error.
func planText(t *testing.T, profile, text string) (*plan.Plan, error) {
	t.Helper()
	r, err := recipe.Parse(filepath.Join(t.TempDir(), "recipe.yaml"), []byte(text))
	if err != nil {
		return nil, err
	}
	return Build(inputs(loadProfile(t, filepath.Join(testdataDir(t), "profiles", profile)), r))
}

// TestSGLangDirectPlans: the rule of srtctl's direct SGLang frontend
// (src/srtctl/frontends/sglang_direct.py@d376d8e4 and its
// test_worker_port_contract) on the topologies it accepts: no router,
// nginx, NATS or etcd; the aggregated leader runs sglang.launch_server on
// the public port 8000; the health gate (/health then /v1/models), the
// benchmark and the custom benchmark's environment point at that worker.
func TestSGLangDirectPlans(t *testing.T) {
	cases := []struct {
		name, profile string
		edits         []string
		leader        string // the process serving the endpoint
		leaderNode    int
		followers     []string // follower ranks: passed the public port, serving nothing
		module        string   // the program the leader runs
	}{
		{name: "single node half a node", profile: "b200.toml", leader: "agg_w0", module: "sglang.launch_server"},
		{name: "single node whole node", profile: "b200.toml", edits: []string{"    gpus: 4\n=>", "tensor-parallel-size: 4=>tensor-parallel-size: 8"},
			leader: "agg_w0", module: "sglang.launch_server"},
		{name: "one worker over two nodes", profile: "b200.toml", edits: []string{"nodes: 1\n=>nodes: 2\n", "    gpus: 4\n=>", "tensor-parallel-size: 4=>tensor-parallel-size: 16"},
			leader: "agg_w0_r0", followers: []string{"agg_w0_r1"}, module: "sglang.launch_server"},
		{name: "one worker over two 4-GPU nodes", profile: "gb300.toml", edits: []string{"container: sglang=>container: dynamo-sglang", "path: dsr1=>path: qwen3.5-fp4", "gpu_type: b200, gpus_per_node: 8=>gpu_type: gb300, gpus_per_node: 4", "nodes: 1\n=>nodes: 2\n", "    gpus: 4\n=>", "tensor-parallel-size: 4=>tensor-parallel-size: 8"},
			leader: "agg_w0_r0", followers: []string{"agg_w0_r1"}, module: "sglang.launch_server"},
		{name: "dp attention", profile: "b200.toml", edits: []string{"tensor-parallel-size: 4,=>tensor-parallel-size: 4, data-parallel-size: 4, enable-dp-attention: true,"},
			leader: "agg_w0", module: "sglang.launch_server"},
		{name: "custom benchmark", profile: "b200.toml", edits: []string{"benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [4, 8]}=>benchmark: {type: custom, command: bash run.sh}"},
			leader: "agg_w0", module: "sglang.launch_server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, c.profile, edited(t, c.edits...))
			if pl.Frontend != schema2.FrontendSGLangDirect || pl.Backend != "sglang" {
				t.Errorf("plan frontend %q backend %q, want %q sglang", pl.Frontend, pl.Backend, schema2.FrontendSGLangDirect)
			}
			for _, p := range pl.Processes {
				if p.Role == plan.RoleFrontend || p.Role == plan.RoleNginx || p.Role == plan.RoleInfra {
					t.Errorf("%s (%s) planned: the direct server starts no router, nginx, NATS or etcd", p.Name, p.Role)
				}
			}
			lead := procNamed(t, pl, c.leader)
			if got := lead.Argv[:3]; !slices.Equal(got, []string{"python3", "-m", c.module}) {
				t.Errorf("leader runs %q, want python3 -m %s", got, c.module)
			}
			if port := argAfter(lead.Argv, "--port"); port != "8000" || lead.Ports["http"] != plan.PortPublicFrontend {
				t.Errorf("leader --port %q, http port %d: the direct server binds the public port 8000", port, lead.Ports["http"])
			}
			for _, flag := range []string{"--dump-config-to", "--request-plane", "--disaggregation-mode"} {
				if slices.Contains(lead.Argv, flag) {
					t.Errorf("leader argv has %s, which only a Dynamo worker or a P/D worker gets: %q", flag, lead.Argv)
				}
			}
			if lead.Nodes[0] != c.leaderNode {
				t.Errorf("leader on node %d, want %d", lead.Nodes[0], c.leaderNode)
			}
			for _, name := range c.followers {
				f := procNamed(t, pl, name)
				if port := argAfter(f.Argv, "--port"); port != "8000" || f.Ports["http"] != 0 {
					t.Errorf("%s --port %q, http port %d: a follower is passed the public port and serves nothing", name, port, f.Ports["http"])
				}
				if rank := argAfter(f.Argv, "--node-rank"); rank != "1" {
					t.Errorf("%s --node-rank %q", name, rank)
				}
			}
			for _, p := range pl.Processes {
				if p.Role != plan.RoleAgg {
					continue
				}
				if p.Env["HEAD_NODE_IP"] == "" {
					t.Errorf("%s: no HEAD_NODE_IP", p.Name)
				}
				for k := range p.Env {
					if strings.HasPrefix(k, "DYN_") || k == "ETCD_ENDPOINTS" || k == "NATS_SERVER" {
						t.Errorf("%s: %s set; srtctl gives Dynamo's environment to Dynamo workers only", p.Name, k)
					}
				}
			}
			h := pl.Health
			if h.Kind != "models" || h.Path != "/v1/models" || h.Node != c.leaderNode || h.Port != plan.PortPublicFrontend {
				t.Errorf("health %s %s on node %d port %d, want models /v1/models on node %d port 8000", h.Kind, h.Path, h.Node, h.Port, c.leaderNode)
			}
			endpoint := "http://" + plan.IPPlaceholder(c.leaderNode) + ":8000"
			bench := procNamed(t, pl, "benchmark")
			if pl.Benchmark.Type == "custom" {
				if bench.Env["SRTCTL_FRONTEND_TYPE"] != "sglang" || bench.Env["SRT_FRONTEND_HOST"] != plan.IPPlaceholder(c.leaderNode) || bench.Env["SRT_FRONTEND_PORT"] != "8000" {
					t.Errorf("custom benchmark env SRTCTL_FRONTEND_TYPE %q SRT_FRONTEND_HOST %q SRT_FRONTEND_PORT %q", bench.Env["SRTCTL_FRONTEND_TYPE"], bench.Env["SRT_FRONTEND_HOST"], bench.Env["SRT_FRONTEND_PORT"])
				}
				if got := bench.Env["SRT_AGG_ENDPOINTS"]; got != plan.IPPlaceholder(c.leaderNode)+":8000" {
					t.Errorf("SRT_AGG_ENDPOINTS %q: the aggregated leader's server", got)
				}
			} else if got := argAfter(bench.Argv, "--frontend"); got != endpoint {
				t.Errorf("benchmark --frontend %q, want %s", got, endpoint)
			}
		})
	}
}

// TestSGLangDirectRefusals: what srtctl's SGLangFrontend.validate and its
// required_backend refuse is refused by name, as srtctl's own refusal
// (recipe.ErrSrtctlRefuses), at the field the recipe wrote.
func TestSGLangDirectRefusals(t *testing.T) {
	cases := []struct {
		name   string
		edits  []string
		field  string // the field named, as written
		msg    string
		srtctl bool // srtctl's refusal, not slurmbench's
	}{
		{name: "enable_multiple_frontends left at its default", edits: []string{"  enable_multiple_frontends: false\n=>"},
			field: "frontend.type", msg: "set frontend.enable_multiple_frontends: false", srtctl: true},
		{name: "enable_multiple_frontends true", edits: []string{"enable_multiple_frontends: false=>enable_multiple_frontends: true"},
			field: "frontend.enable_multiple_frontends", msg: "binds sglang.launch_server to the public port", srtctl: true},
		{name: "two aggregated workers", edits: []string{"workers: 1=>workers: 2"},
			field: "roles.agg.workers", msg: "exactly one aggregated worker, got 2", srtctl: true},
		{name: "prefill/decode layout", edits: []string{"  agg:\n    nodes: 1\n    workers: 1\n    gpus: 4\n=>  prefill:\n    nodes: 1\n    workers: 1\n  decode:\n    nodes: 1\n    workers: 1\n    gpus: 4\n"},
			field: "frontend.type", msg: "not a prefill/decode layout", srtctl: true},
		{name: "vllm engine", edits: []string{"engine: sglang=>engine: vllm"},
			field: "engine", msg: "requires engine sglang, got \"vllm\"", srtctl: true},
		{name: "dynamo sidecar", edits: []string{"engine: sglang\n=>engine: sglang\ndynamo: {sidecar: true}\n"},
			field: "dynamo.sidecar", msg: "sidecar"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := planText(t, "b200.toml", edited(t, c.edits...))
			if err == nil {
				t.Fatal("planned; want a refusal")
			}
			if !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q, want it to name %s and say %q", err, c.field, c.msg)
			}
			if got := errors.Is(err, recipe.ErrSrtctlRefuses); got != c.srtctl {
				t.Errorf("srtctl's refusal %v, want %v: %v", got, c.srtctl, err)
			}
			if recipe.RefusedField(err) == "" {
				t.Errorf("not a typed refusal naming its field: %v", err)
			}
		})
	}
}

// TestSGLangDirectIsNotTheRouter: the same recipe with frontend.type
// sglang-router keeps the router in front of the worker's own port, and a
// schema-1 recipe cannot name the direct kind: the two meanings of
// "sglang" stay apart.
func TestSGLangDirectIsNotTheRouter(t *testing.T) {
	pl := buildText(t, "b200.toml", edited(t, "type: sglang=>type: sglang-router"))
	router := procNamed(t, pl, "router_0")
	if pl.Frontend != "sglang" || !slices.Contains(router.Argv, "sglang_router.launch_router") || pl.Health.Kind != "sglang-router" {
		t.Errorf("router plan: frontend %q, router argv %q, health %s", pl.Frontend, router.Argv, pl.Health.Kind)
	}
	if w := procNamed(t, pl, "agg_w0"); w.Ports["http"] == plan.PortPublicFrontend || w.Env["DYN_SYSTEM_PORT"] == "" {
		t.Errorf("a routed worker binds the public port (%d) or lost its environment", w.Ports["http"])
	}
	v1 := "name: v1\nmodel: {path: dsr1, container: sglang, precision: fp4}\nresources: {gpu_type: b200, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1}\n" +
		"frontend: {type: " + schema2.FrontendSGLangDirect + ", enable_multiple_frontends: false}\nbackend: {type: sglang, sglang_config: {aggregated: {tensor-parallel-size: 8}}}\nbenchmark: {type: sa-bench, isl: 8, osl: 8, concurrencies: [1]}\n"
	if _, err := planText(t, "b200.toml", v1); err == nil || !strings.Contains(err.Error(), "not a schema-1 frontend type") {
		t.Errorf("schema 1 naming the internal kind: %v", err)
	}
}

// TestSGLangDirectMock: slurmbench's mock engine takes the direct path as
// SGLang does: the leader a standalone OpenAI server on the public port,
// no mock frontend, the health gate on the worker.
func TestSGLangDirectMock(t *testing.T) {
	text := edited(t, "engine: sglang=>engine: mock", "path: dsr1=>path: mock", "container: sglang=>container: mock-image",
		"gpu_type: b200, gpus_per_node: 8=>gpu_type: mock, gpus_per_node: 4", "nodes: 1\n=>nodes: 2\n", "    gpus: 4\n=>",
		"args: {tensor-parallel-size: 4, served-model-name: nvidia/DeepSeek-R1-0528-FP4-V2, mem-fraction-static: 0.85}=>args: {served-model-name: mock/DeepSeek-R1, ttft: 50ms}")
	pl := buildText(t, "mock4.toml", text)
	lead := procNamed(t, pl, "agg_w0_r0")
	if mode := argAfter(lead.Argv, "--mode"); mode != "standalone" {
		t.Errorf("leader mode %q, want standalone: %q", mode, lead.Argv)
	}
	if listen := argAfter(lead.Argv, "--listen"); listen != "0.0.0.0:8000" || slices.Contains(lead.Argv, "--frontend") {
		t.Errorf("leader listens on %q (frontend flag %v), want 0.0.0.0:8000 and no frontend", listen, slices.Contains(lead.Argv, "--frontend"))
	}
	if ttft := argAfter(lead.Argv, "--ttft"); ttft != "50ms" {
		t.Errorf("the role's args are lost: %q", lead.Argv)
	}
	if listen := argAfter(procNamed(t, pl, "agg_w0_r1").Argv, "--listen"); listen != "0.0.0.0:0" {
		t.Errorf("follower listens on %q", listen)
	}
	for _, p := range pl.Processes {
		if p.Role == plan.RoleFrontend {
			t.Errorf("%s planned: a direct server has no frontend", p.Name)
		}
	}
	if h := pl.Health; h.Kind != "models" || h.Node != lead.Nodes[0] || h.Port != plan.PortPublicFrontend {
		t.Errorf("health %+v, want models on the leader's node at 8000", h)
	}
}

// TestSGLangDirectProfilingAndIgnoredFields: the profiling control routes
// are the leader's server on the public port (srtctl's
// profiling_control_port), SGLang's /start_profile; frontend.args, env and
// placement, which no process reads here, are named in a plan warning
// (and nothing is warned when the recipe sets none of them).
func TestSGLangDirectProfilingAndIgnoredFields(t *testing.T) {
	prof := "profiling:\n  type: torch\n  aggregated:\n    start_step: 1\n    stop_step: 3\n"
	pl := buildText(t, "b200.toml", directRecipe+prof)
	tr := pl.Profiling.Trigger
	if len(tr) != 1 || tr[0].URL != "http://"+plan.IPPlaceholder(0)+":8000" || tr[0].StartPath != "/start_profile" || tr[0].Role != plan.RoleAgg {
		t.Errorf("profiling triggers %+v, want one at the leader's public port, /start_profile", tr)
	}
	for _, w := range pl.Recipe.Warnings {
		if strings.Contains(w, "direct SGLang") {
			t.Errorf("warned with nothing to warn about: %s", w)
		}
	}
	for _, c := range []struct{ edit, field string }{
		{"  enable_multiple_frontends: false\n=>  enable_multiple_frontends: false\n  args: {policy: cache_aware}\n", "frontend.args"},
		{"  enable_multiple_frontends: false\n=>  enable_multiple_frontends: false\n  env: {A: b}\n", "frontend.env"},
		{"  enable_multiple_frontends: false\n=>  enable_multiple_frontends: false\n  placement: {node: head}\n", "frontend.placement"},
	} {
		pl := buildText(t, "b200.toml", edited(t, c.edit))
		if !slices.ContainsFunc(pl.Recipe.Warnings, func(w string) bool { return strings.Contains(w, c.field+" ignored: the direct SGLang frontend") }) {
			t.Errorf("%s: warnings %q", c.field, pl.Recipe.Warnings)
		}
	}
}
