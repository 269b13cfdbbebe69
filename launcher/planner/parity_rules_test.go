package planner

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
)

// Tests of srtctl's per-node rules that the reference recordings exercise
// on a few recipes only: each builds recipes over a range of node counts,
// worker counts, parallel sizes and roles, and checks the rule on every
// process, with the expected values derived from the layout (which
// endpoint runs on which nodes), not from the implementation.

// clusterShape is what a built recipe needs of a testdata profile.
type clusterShape struct {
	profile, gpuType, model, container string
	gpn                                int
}

var (
	b200Shape  = clusterShape{"b200.toml", "b200", "dsr1", "sglang", 8}
	gb300Shape = clusterShape{"gb300.toml", "gb300", "qwen3.5-fp4", "dynamo-sglang", 4}
)

// sglangLayout is one SGLang recipe's topology: nodes and workers per
// role (a role with no workers is left out), the TP size of each, and the
// frontend.
type sglangLayout struct {
	name                         string
	shape                        clusterShape
	frontend                     string // dynamo or sglang
	prefillNodes, prefillWorkers int
	decodeNodes, decodeWorkers   int
	aggNodes, aggWorkers         int
}

func (l sglangLayout) recipe() string {
	gpus := func(nodes, workers int) int { return nodes * l.shape.gpn / workers }
	var res, cfg strings.Builder
	fmt.Fprintf(&res, "resources: {gpu_type: %s, gpus_per_node: %d", l.shape.gpuType, l.shape.gpn)
	role := func(name, key string, nodes, workers int) {
		if workers == 0 {
			return
		}
		fmt.Fprintf(&res, ", %s_nodes: %d, %s_workers: %d", name, nodes, name, workers)
		fmt.Fprintf(&cfg, "    %s: {tensor-parallel-size: %d, mem-fraction-static: 0.8}\n", key, gpus(nodes, workers))
	}
	role("prefill", "prefill", l.prefillNodes, l.prefillWorkers)
	role("decode", "decode", l.decodeNodes, l.decodeWorkers)
	role("agg", "aggregated", l.aggNodes, l.aggWorkers)
	res.WriteString("}\n")
	return fmt.Sprintf(`name: %s
model: {path: %s, container: %s}
%sfrontend: {type: %s, enable_multiple_frontends: false}
dynamo: {install: false}
backend:
  type: sglang
  sglang_config:
%sbenchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, l.name, l.shape.model, l.shape.container, res.String(), l.frontend, cfg.String())
}

// TestSGLangBootstrapPortEveryNode: srtctl allocates a prefill worker's
// bootstrap port once, on its leader node (7200 + the number of prefill
// workers led from that node before it), and passes it to every node
// process of the worker; decode and aggregated workers get none.
func TestSGLangBootstrapPortEveryNode(t *testing.T) {
	cases := []sglangLayout{
		{name: "1p1d-2node-prefill", shape: gb300Shape, frontend: "dynamo", prefillNodes: 2, prefillWorkers: 1, decodeNodes: 1, decodeWorkers: 1},
		{name: "2p1d-2node-prefills", shape: gb300Shape, frontend: "dynamo", prefillNodes: 4, prefillWorkers: 2, decodeNodes: 2, decodeWorkers: 1},
		{name: "1p1d-3node-prefill", shape: b200Shape, frontend: "dynamo", prefillNodes: 3, prefillWorkers: 1, decodeNodes: 1, decodeWorkers: 1},
		{name: "4p1d-shared-node", shape: b200Shape, frontend: "dynamo", prefillNodes: 1, prefillWorkers: 4, decodeNodes: 2, decodeWorkers: 1},
		{name: "2p2d-router", shape: b200Shape, frontend: "sglang", prefillNodes: 4, prefillWorkers: 2, decodeNodes: 4, decodeWorkers: 2},
		{name: "agg-2node", shape: gb300Shape, frontend: "dynamo", aggNodes: 2, aggWorkers: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, c.shape.profile, c.recipe())
			// The leader node of each prefill worker, from the plan's layout.
			leaders := map[int]int{}
			workers := 0
			for _, p := range pl.Processes {
				if p.Role == plan.RolePrefill && p.Rank == 0 {
					leaders[p.Worker] = p.Nodes[0]
					workers++
				}
			}
			if workers != c.prefillWorkers {
				t.Fatalf("%d prefill workers planned, want %d", workers, c.prefillWorkers)
			}
			// 7200 + the prefill workers led from the same node before it.
			want := map[int]int{}
			for w := 0; w < workers; w++ {
				before := 0
				for v := 0; v < w; v++ {
					if leaders[v] == leaders[w] {
						before++
					}
				}
				want[w] = portBootstrapBase + before
			}
			processes := 0
			for _, p := range pl.Processes {
				flags := flagValues(p.Argv, "--disaggregation-bootstrap-port")
				switch p.Role {
				case plan.RolePrefill:
					processes++
					if len(flags) != 1 || flags[0] != strconv.Itoa(want[p.Worker]) {
						t.Errorf("%s (rank %d): --disaggregation-bootstrap-port %v, want [%d]", p.Name, p.Rank, flags, want[p.Worker])
					}
					if p.Ports["bootstrap"] != want[p.Worker] {
						t.Errorf("%s: bootstrap port %d, want %d", p.Name, p.Ports["bootstrap"], want[p.Worker])
					}
				case plan.RoleDecode, plan.RoleAgg:
					if len(flags) > 0 || p.Ports["bootstrap"] != 0 {
						t.Errorf("%s: a %s worker got bootstrap port %v / %d", p.Name, p.Role, flags, p.Ports["bootstrap"])
					}
				}
			}
			if wantProcs := c.prefillNodes; c.prefillWorkers > 0 && c.prefillNodes >= c.prefillWorkers && processes != wantProcs {
				t.Errorf("%d prefill node processes, want %d", processes, wantProcs)
			}
			// The router lists each prefill worker once, leader and port.
			if c.frontend == "sglang" {
				for _, p := range pl.Processes {
					if p.Role != plan.RoleFrontend {
						continue
					}
					if got := strings.Count(strings.Join(p.Argv, " "), "--prefill "); got != workers {
						t.Errorf("%s lists %d prefill workers, want %d: %q", p.Name, got, workers, p.Argv)
					}
				}
			}
		})
	}
}

// flagValues is the value after every use of flag in argv.
func flagValues(argv []string, flag string) []string {
	var out []string
	for i, a := range argv {
		if a == flag && i+1 < len(argv) {
			out = append(out, argv[i+1])
		}
	}
	return out
}

// vllmLayout is one vLLM recipe: the frontend, and per role its nodes,
// workers and engine-config parallel sizes (dp 0 = not set).
type vllmLayout struct {
	name     string
	shape    clusterShape
	frontend string // dynamo or vllm
	perGPU   bool   // dp_launch_mode per_gpu
	roles    []vllmRole
}

type vllmRole struct {
	role           string // prefill, decode, agg
	nodes, workers int
	dp, tp         int
}

func (l vllmLayout) recipe() string {
	var res, cfg strings.Builder
	fmt.Fprintf(&res, "resources: {gpu_type: %s, gpus_per_node: %d", l.shape.gpuType, l.shape.gpn)
	for _, r := range l.roles {
		fmt.Fprintf(&res, ", %s_nodes: %d, %s_workers: %d", r.role, r.nodes, r.role, r.workers)
		key := r.role
		if key == "agg" {
			key = "aggregated"
		}
		fmt.Fprintf(&cfg, "    %s: {tensor-parallel-size: %d", key, r.tp)
		if r.dp > 0 {
			fmt.Fprintf(&cfg, ", data-parallel-size: %d", r.dp)
		}
		cfg.WriteString("}\n")
	}
	res.WriteString("}\n")
	mode := ""
	if l.perGPU {
		mode = "  dp_launch_mode: per_gpu\n"
	}
	return fmt.Sprintf(`name: %s
model: {path: %s, container: %s}
%sfrontend: {type: %s, enable_multiple_frontends: false}
dynamo: {install: false}
backend:
  type: vllm
%s  vllm_config:
%sbenchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, l.name, l.shape.model, l.shape.container, res.String(), l.frontend, mode, cfg.String())
}

// TestVLLMPortsPerNode: srtctl's NodePortAllocator hands vLLM processes
// their DYN_VLLM_KV_EVENT_PORT and VLLM_NIXL_SIDE_CHANNEL_PORT from two
// global counters (5200+, 5400+), in process order. A process of the
// generic layout (TP only, a DP replica spanning nodes, every `vllm serve`
// process, DP or not) takes one port of each, so node k of a worker gets
// base + k; a per-node hybrid DP process takes a KV-event block of its
// local DP ranks and shares its endpoint's NIXL block of dp ports; a
// per-GPU DP rank takes one KV-event port and shares the NIXL block.
func TestVLLMPortsPerNode(t *testing.T) {
	cases := []vllmLayout{
		{name: "serve-dp4-tp8-4nodes", shape: b200Shape, frontend: "vllm", roles: []vllmRole{{"agg", 4, 1, 4, 8}}},
		{name: "serve-dp2-tp4-2nodes", shape: gb300Shape, frontend: "vllm", roles: []vllmRole{{"agg", 2, 1, 2, 4}}},
		{name: "serve-dp2-tp8-4nodes", shape: gb300Shape, frontend: "vllm", roles: []vllmRole{{"agg", 4, 1, 2, 8}}},
		{name: "serve-tp16-2nodes", shape: b200Shape, frontend: "vllm", roles: []vllmRole{{"agg", 2, 1, 0, 16}}},
		{name: "serve-2workers-dp2", shape: gb300Shape, frontend: "vllm", roles: []vllmRole{{"agg", 4, 2, 2, 4}}},
		{name: "dynamo-hybrid-dp", shape: gb300Shape, frontend: "dynamo", roles: []vllmRole{{"prefill", 1, 1, 4, 1}, {"decode", 4, 1, 16, 1}}},
		{name: "dynamo-hybrid-tp2", shape: b200Shape, frontend: "dynamo", roles: []vllmRole{{"prefill", 2, 1, 8, 2}, {"decode", 2, 1, 4, 4}}},
		{name: "dynamo-spanning-dp", shape: gb300Shape, frontend: "dynamo", roles: []vllmRole{{"prefill", 1, 1, 4, 1}, {"decode", 4, 1, 2, 8}}},
		{name: "dynamo-tp-multinode", shape: gb300Shape, frontend: "dynamo", roles: []vllmRole{{"prefill", 2, 1, 0, 8}, {"decode", 3, 1, 0, 12}}},
		{name: "dynamo-per-gpu", shape: gb300Shape, frontend: "dynamo", perGPU: true, roles: []vllmRole{{"prefill", 1, 1, 4, 1}, {"decode", 2, 1, 8, 1}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, c.shape.profile, c.recipe())
			shapes := map[plan.Role]vllmRole{}
			for _, r := range c.roles {
				shapes[plan.Role(r.role)] = r
			}
			kv, nixl := portKVEventsBase, engine.PortVLLMNIXLBase
			blocks := map[string]int{} // endpoint → its NIXL block
			seen := 0
			for _, p := range pl.Processes {
				r, ok := shapes[p.Role]
				if !ok {
					continue
				}
				seen++
				gpus := r.nodes * c.shape.gpn / r.workers
				local := min(gpus, c.shape.gpn)
				replica := r.tp
				var wantKV, wantNIXL int
				switch {
				case c.frontend == "vllm" || r.dp == 0 || replica > local && !c.perGPU:
					wantKV, wantNIXL = kv, nixl
					kv++
					nixl++
				default:
					key := fmt.Sprintf("%s/%d", p.Role, p.Worker)
					if _, ok := blocks[key]; !ok {
						blocks[key] = nixl
						nixl += r.dp
					}
					wantKV, wantNIXL = kv, blocks[key]
					if c.perGPU {
						kv++
					} else {
						kv += local / replica
					}
				}
				if got := p.Env["DYN_VLLM_KV_EVENT_PORT"]; got != strconv.Itoa(wantKV) {
					t.Errorf("%s: DYN_VLLM_KV_EVENT_PORT %s, want %d", p.Name, got, wantKV)
				}
				if got := p.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"]; got != strconv.Itoa(wantNIXL) {
					t.Errorf("%s: VLLM_NIXL_SIDE_CHANNEL_PORT %s, want %d", p.Name, got, wantNIXL)
				}
				if _, ok := p.Ports["bootstrap"]; ok {
					t.Errorf("%s: vLLM binds no bootstrap port, got %d", p.Name, p.Ports["bootstrap"])
				}
				if c.frontend == "vllm" {
					if _, ok := p.Ports["dp_rpc"]; ok {
						t.Errorf("%s: srtctl gives vllm serve no DP RPC port, got %d", p.Name, p.Ports["dp_rpc"])
					}
				}
			}
			if seen < 2 {
				t.Fatalf("only %d vLLM processes planned", seen)
			}
		})
	}
}

// TestModelDownload: srtctl's model pre-download for an hf: model. One
// step on the first worker node, in the engine image with the workers'
// mounts, none of the recipe's srun_options, HF_HOME from the first
// backend environment (prefill, decode, aggregated) that sets it; none
// without HF_HOME, for a local model, or for the mock engine.
func TestModelDownload(t *testing.T) {
	const base = `name: hf
model: {path: %s, container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, %s}
frontend: {type: dynamo, enable_multiple_frontends: false}
infra: {etcd_nats_dedicated_node: %v}
dynamo: {install: false}
srun_options: {cpu-bind: none}
backend:
  type: %s
%s  %s_config:
%sbenchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`
	disagg := "prefill_nodes: 2, prefill_workers: 1, decode_nodes: 1, decode_workers: 1"
	disaggCfg := "    prefill: {tensor-parallel-size: 16}\n    decode: {tensor-parallel-size: 8}\n"
	agg := "agg_nodes: 1, agg_workers: 1"
	aggCfg := "    aggregated: {tensor-parallel-size: 8}\n"
	cases := []struct {
		name, model, resources, backend, env, cfg string
		dedicated                                 bool
		wantHome                                  string // "" = no download step
		wantNode                                  int
	}{
		{"prefill env", "hf:zai-org/GLM-5.2-FP8", disagg, "sglang",
			"  prefill_environment: {HF_HOME: /hf_hub_cache, HF_TOKEN_PATH: /x}\n  decode_environment: {HF_HOME: /other}\n", disaggCfg, false, "/hf_hub_cache", 0},
		{"decode env only", "hf:zai-org/GLM-5.2-FP8", disagg, "sglang",
			"  decode_environment: {HF_HOME: /decode_cache}\n", disaggCfg, false, "/decode_cache", 0},
		{"dedicated infra node", "hf:zai-org/GLM-5.2-FP8", disagg, "sglang",
			"  prefill_environment: {HF_HOME: /hf_hub_cache}\n", disaggCfg, true, "/hf_hub_cache", 1},
		{"aggregated vllm", "hf:Qwen/Qwen3-8B", agg, "vllm",
			"  aggregated_environment: {HF_HOME: /hf}\n", aggCfg, false, "/hf", 0},
		{"no HF_HOME", "hf:zai-org/GLM-5.2-FP8", disagg, "sglang",
			"  prefill_environment: {HF_HUB_CACHE: /hf_hub_cache}\n", disaggCfg, false, "", 0},
		{"empty HF_HOME", "hf:zai-org/GLM-5.2-FP8", disagg, "sglang",
			"  prefill_environment: {HF_HOME: \"\"}\n  decode_environment: {HF_HOME: /later}\n", disaggCfg, false, "", 0},
		{"local model", "dsr1", disagg, "sglang",
			"  prefill_environment: {HF_HOME: /hf_hub_cache}\n", disaggCfg, false, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, "b200.toml", fmt.Sprintf(base, c.model, c.resources, c.dedicated, c.backend, c.env, c.backend, c.cfg))
			var dl *plan.Process
			firstWorker := -1
			for i, p := range pl.Processes {
				switch {
				case p.Role == plan.RolePrepare:
					if dl != nil {
						t.Fatalf("two prepare steps: %s, %s", dl.Name, p.Name)
					}
					dl = &pl.Processes[i]
					if firstWorker >= 0 {
						t.Errorf("%s planned after the workers", p.Name)
					}
				case plan.IsWorker(p.Role) && firstWorker < 0:
					firstWorker = i
				}
			}
			if c.wantHome == "" {
				if dl != nil {
					t.Fatalf("unexpected %s: %q", dl.Name, dl.Argv)
				}
				return
			}
			if dl == nil {
				t.Fatal("no model_download step")
			}
			worker := pl.Processes[firstWorker]
			id := strings.TrimPrefix(c.model, "hf:")
			script := filepath.Join(pl.Layout.Logs, "model_download.sh")
			if want := []string{"bash", "/logs/model_download.sh", c.wantHome, id}; !slices.Equal(dl.Argv, want) {
				t.Errorf("argv %q, want %q", dl.Argv, want)
			}
			if dl.Files[script] != modelDownloadScript || len(dl.Files) != 1 {
				t.Errorf("files %v, want the script at %s", dl.Files, script)
			}
			if len(dl.Nodes) != 1 || dl.Nodes[0] != c.wantNode || worker.Nodes[0] != c.wantNode {
				t.Errorf("on nodes %v (first worker on %v), want node %d", dl.Nodes, worker.Nodes, c.wantNode)
			}
			if !dl.Container || dl.Image != "" || !slices.Equal(dl.Mounts, worker.Mounts) {
				t.Errorf("container %v image %q mounts %q; want the engine image with the workers' mounts %q", dl.Container, dl.Image, dl.Mounts, worker.Mounts)
			}
			if dl.Srun.NTasks != 1 || len(dl.Srun.Extra) != 0 || len(dl.Srun.Export) != 0 || len(worker.Srun.Extra) == 0 {
				t.Errorf("srun %+v (worker's %+v): srtctl passes the download no srun_options", dl.Srun, worker.Srun)
			}
			for k := range dl.Env {
				if _, ok := pl.Processes[firstWorker].Env[k]; !ok || k == "HF_HOME" {
					t.Errorf("env %s=%s: the step gets only the profile's fixed variables", k, dl.Env[k])
				}
			}
			if dl.Critical || dl.Ports != nil || dl.GPUs != nil {
				t.Errorf("critical %v ports %v gpus %v: a finite step holds nothing", dl.Critical, dl.Ports, dl.GPUs)
			}
		})
	}
}

// srtctlModelDownloadText is srtctl's `bash -c` string for the model
// pre-download (do_sweep.py, _ensure_model_cached), its f-string written
// out with the values shlex-quoted as srtctl does.
func srtctlModelDownloadText(home, id string) string {
	h, m := pyShlexQuote(home), pyShlexQuote(id)
	return "export HF_HOME=" + h + "; find " + h + " -name '*.lock' -mmin +30 -delete 2>/dev/null; DL_CMD='hf download'; " +
		"command -v hf >/dev/null 2>&1 || DL_CMD='huggingface-cli download'; if HF_HUB_OFFLINE=1 $DL_CMD " + m +
		" --quiet 2>/dev/null; then echo 'Model already cached'; else echo 'Downloading model...'; $DL_CMD " + m + " --quiet; fi"
}

// TestParityModelDownload: TestSrtctlParity's comparison of srtctl's
// model_download srun with the plan's step accepts srtctl's launch as
// srtctl builds it (the reference recordings have no hf: model) and flags
// any change to the command, the node or the srun options.
func TestParityModelDownload(t *testing.T) {
	const recipeText = `name: hf
model: {path: "hf:zai-org/GLM-5.2-FP8", container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
frontend: {type: dynamo, enable_multiple_frontends: false}
infra: {etcd_nats_dedicated_node: true}
dynamo: {install: false}
srun_options: {mem: "0"}
backend:
  type: sglang
  prefill_environment: {HF_HOME: %s}
  sglang_config:
    prefill: {tensor-parallel-size: 8}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`
	run := srtctlRun{JobID: srtctlJobID, Nodelist: []string{"node001", "node002", "node003"},
		NodeIPs: map[string]string{"node001": "127.0.1.1", "node002": "127.0.1.2", "node003": "127.0.1.3"}}
	srun := func(node, text string, extra ...string) []string {
		argv := []string{"srun", "--jobid", srtctlJobID, "--overlap", "--nodes", "1", "--ntasks", "1", "--nodelist", node,
			"--output", "/srv/outputs/424242/logs/model_download.out", "--container-image", "/containers/sglang.sqsh",
			"--no-container-entrypoint", "--no-container-mount-home", "--container-mounts", "/srv/outputs/424242/logs:/logs"}
		return append(append(argv, extra...), "bash", "-c", text)
	}
	cases := []struct {
		name, home string
		argv       func(home string) []string
		wantOK     bool
	}{
		{"as srtctl runs it", "/hf_hub_cache", func(h string) []string { return srun("node002", srtctlModelDownloadText(h, "zai-org/GLM-5.2-FP8")) }, true},
		{"a path shlex quotes", "/hf cache/it's", func(h string) []string { return srun("node002", srtctlModelDownloadText(h, "zai-org/GLM-5.2-FP8")) }, true},
		{"another node", "/hf_hub_cache", func(h string) []string { return srun("node001", srtctlModelDownloadText(h, "zai-org/GLM-5.2-FP8")) }, false},
		{"another model", "/hf_hub_cache", func(h string) []string { return srun("node002", srtctlModelDownloadText(h, "zai-org/GLM-5.1")) }, false},
		{"another lock age", "/hf_hub_cache", func(h string) []string {
			return srun("node002", strings.Replace(srtctlModelDownloadText(h, "zai-org/GLM-5.2-FP8"), "+30", "+60", 1))
		}, false},
		{"srun options", "/hf_hub_cache", func(h string) []string {
			return srun("node002", srtctlModelDownloadText(h, "zai-org/GLM-5.2-FP8"), "--mem=0")
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, "b200.toml", fmt.Sprintf(recipeText, strconv.Quote(c.home)))
			r := run
			r.SrunCalls = append(r.SrunCalls, struct {
				Argv []string `json:"argv"`
			}{c.argv(c.home)})
			diffs, names := compareWithSrtctl(t, r, pl)
			if !slices.Equal(names, []string{modelDownloadName}) {
				t.Fatalf("compared %v", names)
			}
			var unexplained []string
			for _, d := range diffs {
				if d.proc == modelDownloadName && d.deliberate() == nil {
					unexplained = append(unexplained, d.String())
				}
			}
			if ok := len(unexplained) == 0; ok != c.wantOK {
				t.Errorf("unexplained differences %q; want none: %v", unexplained, c.wantOK)
			}
		})
	}
}

// TestEnvTemplating: srtctl formats {node} (the node's hostname) and
// {node_id} (its index among the job's worker nodes) in the role's and the
// recipe's environment of a worker started per node; an MPI launch
// (TRT-LLM), the frontends and the benchmark get the values as written,
// and SGLang's router gets frontend.env alone.
func TestEnvTemplating(t *testing.T) {
	const env = `environment: {RECIPE_VAR: "r-{node}-{node_id}"}
`
	sglang := func(frontend string, dedicated bool) string {
		return fmt.Sprintf(`name: tmpl
model: {path: dsr1, container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 2, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
frontend: {type: %s, enable_multiple_frontends: false, env: {FRONT_VAR: "f-{node}"}}
infra: {etcd_nats_dedicated_node: %v}
dynamo: {install: false}
%sbackend:
  type: sglang
  prefill_environment: {ROLE_VAR: "p-{node}-{node_id}"}
  decode_environment: {ROLE_VAR: "d-{node_id}"}
  sglang_config:
    prefill: {tensor-parallel-size: 16}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, frontend, dedicated, env)
	}
	trtllm := strings.Replace(strings.Replace(trtllmRecipe, "  prefill_environment: {TLLM_LOG_LEVEL: INFO}\n",
		"  prefill_environment: {TLLM_LOG_LEVEL: INFO, ROLE_VAR: \"p-{node}-{node_id}\"}\n  decode_environment: {ROLE_VAR: \"d-{node_id}\"}\n", 1),
		"srun_options:", strings.TrimSuffix(env, "\n")+"\nsrun_options:", 1)
	cases := []struct {
		name, profile, text string
		firstWorker         int  // the first worker node: node_id 0
		perNode             bool // workers template
		routerRecipeEnv     bool // the frontend gets the recipe's environment
	}{
		{"sglang dynamo", "b200.toml", sglang("dynamo", false), 0, true, true},
		{"sglang dedicated infra node", "b200.toml", sglang("dynamo", true), 1, true, true},
		{"sglang router", "b200.toml", sglang("sglang", false), 0, true, false},
		{"trtllm MPI launch", "gb300.toml", trtllm, 0, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, c.profile, c.text)
			fronts := 0
			for _, p := range pl.Processes {
				switch {
				case plan.IsWorker(p.Role):
					n := p.Nodes[0]
					wantRole := map[plan.Role]string{plan.RolePrefill: "p-{node}-{node_id}", plan.RoleDecode: "d-{node_id}"}[p.Role]
					wantRecipe := "r-{node}-{node_id}"
					if c.perNode {
						fill := strings.NewReplacer("{node}", placeholderHost(n), "{node_id}", strconv.Itoa(n-c.firstWorker))
						wantRole, wantRecipe = fill.Replace(wantRole), fill.Replace(wantRecipe)
					}
					if p.Env["ROLE_VAR"] != wantRole || p.Env["RECIPE_VAR"] != wantRecipe {
						t.Errorf("%s on node %d: ROLE_VAR %q, RECIPE_VAR %q; want %q, %q", p.Name, n, p.Env["ROLE_VAR"], p.Env["RECIPE_VAR"], wantRole, wantRecipe)
					}
				case p.Role == plan.RoleFrontend:
					fronts++
					if strings.Contains(c.text, "FRONT_VAR") && p.Env["FRONT_VAR"] != "f-{node}" {
						t.Errorf("%s: FRONT_VAR %q, want it as written", p.Name, p.Env["FRONT_VAR"])
					}
					got, ok := p.Env["RECIPE_VAR"]
					if c.routerRecipeEnv && got != "r-{node}-{node_id}" || !c.routerRecipeEnv && ok {
						t.Errorf("%s: RECIPE_VAR %q (set %v); want as written: %v", p.Name, got, ok, c.routerRecipeEnv)
					}
				}
			}
			if fronts == 0 && strings.Contains(c.text, "FRONT_VAR") {
				t.Error("no frontend planned")
			}
		})
	}
}

// TestKVBMEndpointEnv: with DYN_CONNECTOR=kvbm in a worker's environment,
// srtctl points every node of a multi-node endpoint at its leader
// (DYN_KVBM_LEADER_ZMQ_HOST) and gives each endpoint the KVBM leader port
// pair 5600 + 2·(its leader's KV-events port − 5200) and the next; values
// the recipe sets win (cli/mixins/worker_stage.py _apply_kvbm_endpoint_env).
func TestKVBMEndpointEnv(t *testing.T) {
	sglang := func(env string) string {
		return fmt.Sprintf(`name: kvbm
model: {path: dsr1, container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 2, prefill_workers: 1, decode_nodes: 2, decode_workers: 2}
frontend: {type: dynamo, enable_multiple_frontends: false}
dynamo: {install: false}
backend:
  type: sglang
%s  sglang_config:
    prefill: {tensor-parallel-size: 16}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, env)
	}
	vllm := vllmLayout{name: "kvbm", shape: gb300Shape, frontend: "dynamo",
		roles: []vllmRole{{"prefill", 2, 1, 0, 8}, {"decode", 2, 2, 0, 4}}}.recipe()
	vllm = strings.Replace(vllm, "  type: vllm\n", "  type: vllm\n  prefill_environment: {DYN_CONNECTOR: KVBM}\n  decode_environment: {DYN_CONNECTOR: kvbm}\n", 1)
	trtllm := strings.Replace(trtllmRecipe, "  prefill_environment: {TLLM_LOG_LEVEL: INFO}\n",
		"  prefill_environment: {TLLM_LOG_LEVEL: INFO, DYN_CONNECTOR: kvbm}\n  decode_environment: {DYN_CONNECTOR: kvbm}\n", 1)
	cases := []struct {
		name, profile, text string
		kvbmRoles           []plan.Role // roles whose environment sets DYN_CONNECTOR=kvbm
		pinnedPub           string      // the recipe's DYN_KVBM_LEADER_ZMQ_PUB_PORT
	}{
		{"sglang both roles", "b200.toml", sglang("  environment_unused: {}\n  prefill_environment: {DYN_CONNECTOR: kvbm}\n  decode_environment: {DYN_CONNECTOR: kvbm}\n"), []plan.Role{plan.RolePrefill, plan.RoleDecode}, ""},
		{"sglang prefill only pinned port", "b200.toml", sglang("  prefill_environment: {DYN_CONNECTOR: kvbm, DYN_KVBM_LEADER_ZMQ_PUB_PORT: \"6000\"}\n"), []plan.Role{plan.RolePrefill}, "6000"},
		{"sglang other connector", "b200.toml", sglang("  prefill_environment: {DYN_CONNECTOR: nixl}\n"), nil, ""},
		{"vllm", "gb300.toml", vllm, []plan.Role{plan.RolePrefill, plan.RoleDecode}, ""},
		{"trtllm MPI launch", "gb300.toml", trtllm, []plan.Role{plan.RolePrefill, plan.RoleDecode}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.text = strings.Replace(c.text, "  environment_unused: {}\n", "", 1)
			pl := buildText(t, c.profile, c.text)
			// Each endpoint's leader and its srtctl KV-events port: one per
			// node process of the generic layout, in plan order.
			type ep struct{ leader, kv int }
			eps := map[string]ep{}
			kv := portKVEventsBase
			for _, p := range pl.Processes {
				if !plan.IsWorker(p.Role) {
					continue
				}
				key := fmt.Sprintf("%s/%d", p.Role, p.Worker)
				if p.Rank == 0 {
					eps[key] = ep{p.Nodes[0], kv}
				}
				kv += len(p.Nodes) // an MPI launch stands for a process per node
			}
			checked := 0
			for _, p := range pl.Processes {
				if !plan.IsWorker(p.Role) {
					continue
				}
				e := eps[fmt.Sprintf("%s/%d", p.Role, p.Worker)]
				multi := p.Rank > 0 || len(p.Nodes) > 1 || anyRank(pl, p, 1)
				want := map[string]string{}
				if slices.Contains(c.kvbmRoles, p.Role) {
					checked++
					pub := portKVBMBase + 2*(e.kv-portKVEventsBase)
					want["DYN_KVBM_LEADER_ZMQ_PUB_PORT"] = cmpOr(c.pinnedPub, strconv.Itoa(pub))
					want["DYN_KVBM_LEADER_ZMQ_ACK_PORT"] = strconv.Itoa(pub + 1)
					if multi {
						want["DYN_KVBM_LEADER_ZMQ_HOST"] = placeholderIP(e.leader)
					}
				}
				for _, k := range []string{"DYN_KVBM_LEADER_ZMQ_HOST", "DYN_KVBM_LEADER_ZMQ_PUB_PORT", "DYN_KVBM_LEADER_ZMQ_ACK_PORT"} {
					if p.Env[k] != want[k] {
						t.Errorf("%s: %s=%q, want %q", p.Name, k, p.Env[k], want[k])
					}
				}
			}
			if len(c.kvbmRoles) > 0 && checked == 0 {
				t.Fatal("no KVBM worker planned")
			}
		})
	}
}

// anyRank reports whether p's endpoint has a process of rank r.
func anyRank(pl *plan.Plan, p plan.Process, r int) bool {
	for _, q := range pl.Processes {
		if q.Role == p.Role && q.Worker == p.Worker && q.Rank == r {
			return true
		}
	}
	return false
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestStageModel: model.stage_dir stages a local model on every worker
// node before the workers start (cli/do_sweep.py _stage_model): one step
// per worker node running slurmbench stage-model /model <stage_dir>/<model
// name> (srtctl's stage_model.sh's arguments), the node-local root (stage_dir's parent) mounted at its own path
// in every container; TRT-LLM workers load the staged copy, SGLang and
// vLLM workers /model (core/runtime.py worker_model_arg). An hf: model is
// not staged.
func TestStageModel(t *testing.T) {
	sglang := func(model, stage string, dedicated bool) string {
		return fmt.Sprintf(`name: stage
model: {path: %s, container: sglang, stage_dir: %q}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 2, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
frontend: {type: dynamo, enable_multiple_frontends: false}
infra: {etcd_nats_dedicated_node: %v}
dynamo: {install: false}
srun_options: {cpu-bind: none}
backend:
  type: sglang
  sglang_config:
    prefill: {tensor-parallel-size: 16}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, model, stage, dedicated)
	}
	trtllm := strings.Replace(trtllmRecipe, "model: {path: qwen3.5-fp4, container: dynamo-sglang}",
		"model: {path: qwen3.5-fp4, container: dynamo-sglang, stage_dir: /raid/scratch/models}", 1)
	vllm := strings.Replace(vllmLayout{name: "stage", shape: gb300Shape, frontend: "dynamo",
		roles: []vllmRole{{"prefill", 1, 1, 0, 4}, {"decode", 2, 1, 0, 8}}}.recipe(),
		"container: dynamo-sglang}", "container: dynamo-sglang, stage_dir: /local/models}", 1)
	cases := []struct {
		name, profile, text string
		staged, root        string // "" = not staged
		workerNodes         []int
		workersLoadStaged   bool
	}{
		{"sglang", "b200.toml", sglang("dsr1", "/raid/scratch/models", false), "/raid/scratch/models/DeepSeek-R1-0528-NVFP4-v2", "/raid/scratch", []int{0, 1, 2}, false},
		{"sglang dedicated infra node", "b200.toml", sglang("dsr1", "/raid/scratch/models/", true), "/raid/scratch/models/DeepSeek-R1-0528-NVFP4-v2", "/raid/scratch", []int{1, 2, 3}, false},
		{"vllm", "gb300.toml", vllm, "/local/models/Qwen3.5-397B-A17B-NVFP4", "/local", []int{0, 1, 2}, false},
		{"trtllm", "gb300.toml", trtllm, "/raid/scratch/models/Qwen3.5-397B-A17B-NVFP4", "/raid/scratch", []int{0, 1, 2}, true},
		{"hf model", "b200.toml", sglang("\"hf:org/model\"", "/raid/scratch/models", false), "", "", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, c.profile, c.text)
			if pl.Model.Staged != c.staged {
				t.Fatalf("staged %q, want %q", pl.Model.Staged, c.staged)
			}
			var stageNodes []int
			for _, p := range pl.Processes {
				mounted := slices.Contains(p.Mounts, c.root+":"+c.root)
				if p.Container && p.Image == "" && c.root != "" && !mounted {
					t.Errorf("%s: the node-local root %s is not mounted: %q", p.Name, c.root, p.Mounts)
				}
				switch {
				case p.Role == plan.RolePrepare:
					stageNodes = append(stageNodes, p.Nodes...)
					if want := []string{pl.Binary, "stage-model", "/model", c.staged}; !slices.Equal(p.Argv, want) {
						t.Errorf("%s: argv %q, want %q", p.Name, p.Argv, want)
					}
					if len(p.Files) != 0 {
						t.Errorf("%s: writes %d files; slurmbench's own command needs none", p.Name, len(p.Files))
					}
					if len(p.Srun.Extra) != 0 || len(p.Srun.Export) != 0 || p.Name != stageModelName(p.Nodes[0]) {
						t.Errorf("%s: srun %+v", p.Name, p.Srun)
					}
				case plan.IsWorker(p.Role):
					model := argAfter(p.Argv, "--model-path")
					if model == "" {
						model = argAfter(p.Argv, "--model")
					}
					want := pl.Model.Path
					if c.workersLoadStaged {
						want = c.staged
					}
					if model != want {
						t.Errorf("%s loads %q, want %q", p.Name, model, want)
					}
				}
			}
			if !slices.Equal(stageNodes, c.workerNodes) {
				t.Errorf("staging on nodes %v, want every worker node %v", stageNodes, c.workerNodes)
			}
		})
	}
	for _, bad := range []string{"$LOCAL/models", "models", "/raid", "/raid/a,b"} {
		_, err := buildTextErr(t, "b200.toml", sglang("dsr1", bad, false))
		if err == nil || !strings.Contains(err.Error(), "model.stage_dir") {
			t.Errorf("stage_dir %q: %v, want refused naming model.stage_dir", bad, err)
		}
	}
}

// TestParityStageModel: TestSrtctlParity matches srtctl's stage_model_<host>
// sruns with the plan's per-node staging steps and accepts them as srtctl
// builds them, and flags another destination, node or srun option.
func TestParityStageModel(t *testing.T) {
	const recipeText = `name: stage
model: {path: dsr1, container: sglang, stage_dir: /raid/scratch/models}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
frontend: {type: dynamo, enable_multiple_frontends: false}
dynamo: {install: false}
srun_options: {mem: "0"}
backend:
  type: sglang
  sglang_config:
    prefill: {tensor-parallel-size: 8}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`
	const dest = "/raid/scratch/models/DeepSeek-R1-0528-NVFP4-v2"
	srun := func(host, log, dest string, extra ...string) []string {
		argv := []string{"srun", "--jobid", srtctlJobID, "--overlap", "--nodes", "1", "--ntasks", "1", "--nodelist", host,
			"--output", "/srv/outputs/424242/logs/stage_model_" + log + ".out", "--container-image", "/containers/sglang.sqsh",
			"--no-container-entrypoint", "--no-container-mount-home", "--container-mounts", "/srv/outputs/424242/logs:/logs"}
		return append(append(argv, extra...), "bash", "-c", "bash /srtctl-runtime/stage_model.sh /model "+dest)
	}
	cases := []struct {
		name   string
		calls  [][]string
		wantOK bool
	}{
		{"as srtctl runs it", [][]string{srun("node001", "node001", dest), srun("node002", "node002", dest)}, true},
		{"another destination", [][]string{srun("node001", "node001", dest), srun("node002", "node002", "/raid/other")}, false},
		{"srun options", [][]string{srun("node001", "node001", dest, "--mem=0"), srun("node002", "node002", dest)}, false},
		{"one node only", [][]string{srun("node001", "node001", dest)}, false},
	}
	pl := buildText(t, "b200.toml", recipeText)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := srtctlRun{JobID: srtctlJobID, Nodelist: []string{"node001", "node002"},
				NodeIPs: map[string]string{"node001": "127.0.1.1", "node002": "127.0.1.2"}}
			for _, argv := range c.calls {
				r.SrunCalls = append(r.SrunCalls, struct {
					Argv []string `json:"argv"`
				}{argv})
			}
			diffs, _ := compareWithSrtctl(t, r, pl)
			var unexplained []string
			for _, d := range diffs {
				if strings.HasPrefix(d.proc, "stage_model_") && d.deliberate() == nil {
					unexplained = append(unexplained, d.String())
				}
			}
			if ok := len(unexplained) == 0; ok != c.wantOK {
				t.Errorf("unexplained differences %q; want none: %v", unexplained, c.wantOK)
			}
		})
	}
}

// TestEventPlane: dynamo.event_plane is DYN_EVENT_PLANE on every worker,
// per node or MPI, and on Dynamo frontends, not on SGLang's router
// (cli/mixins/worker_stage.py, frontends/dynamo.py); other values than
// nats and zmq are refused as srtctl's schema refuses them.
func TestEventPlane(t *testing.T) {
	sglang := func(frontend, plane string) string {
		return fmt.Sprintf(`name: ev
model: {path: dsr1, container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 2, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
frontend: {type: %s, enable_multiple_frontends: false}
dynamo: {install: false, event_plane: %s}
backend:
  type: sglang
  sglang_config:
    prefill: {tensor-parallel-size: 16}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, frontend, plane)
	}
	trtllm := strings.Replace(trtllmRecipe, "dynamo: {version: 1.3.0}", "dynamo: {version: 1.3.0, event_plane: nats}", 1)
	cases := []struct {
		name, profile, text, plane string
		frontendGets               bool
	}{
		{"sglang dynamo zmq", "b200.toml", sglang("dynamo", "zmq"), "zmq", true},
		{"sglang router nats", "b200.toml", sglang("sglang", "nats"), "nats", false},
		{"trtllm nats", "gb300.toml", trtllm, "nats", true},
		{"unset", "b200.toml", sglang("dynamo", "null"), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, c.profile, c.text)
			n := 0
			for _, p := range pl.Processes {
				want := ""
				switch {
				case plan.IsWorker(p.Role):
					want = c.plane
					n++
				case p.Role == plan.RoleFrontend && c.frontendGets:
					want = c.plane
				}
				if got := p.Env["DYN_EVENT_PLANE"]; got != want {
					t.Errorf("%s: DYN_EVENT_PLANE %q, want %q", p.Name, got, want)
				}
			}
			if n == 0 {
				t.Fatal("no workers planned")
			}
		})
	}
	path := filepath.Join(t.TempDir(), "recipe.yaml")
	writeFile(t, path, sglang("dynamo", "redis"))
	if _, err := recipe.Load(path); err == nil || !strings.Contains(err.Error(), "dynamo.event_plane") {
		t.Errorf("event_plane redis: %v, want refused naming dynamo.event_plane", err)
	}
}

// TestSequentialNodeStart: TRT-LLM's backend.sequential_node_start N
// starts the endpoints led from one node N at a time, each batch after
// every endpoint of the batch before serves on its Dynamo system port's
// /health (cli/mixins/worker_stage.py start_all_workers); nodes with one
// endpoint, and N = 0, start at once.
func TestSequentialNodeStart(t *testing.T) {
	text := func(n, prefillWorkers, gpus int, decodeWorkers int) string {
		return fmt.Sprintf(`name: seq
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: %d, gpus_per_prefill: %d, decode_nodes: 1, decode_workers: %d}
frontend: {type: dynamo, enable_multiple_frontends: false}
dynamo: {install: false}
backend:
  type: trtllm
  sequential_node_start: %d
  trtllm_config:
    prefill: {tensor_parallel_size: %d}
    decode: {tensor_parallel_size: %d}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`, prefillWorkers, gpus, decodeWorkers, n, gpus, 4/decodeWorkers)
	}
	cases := []struct {
		name                              string
		n, prefillWorkers, gpus, decodeWs int
	}{
		{"one at a time", 1, 4, 1, 1},
		{"two at a time", 2, 4, 1, 2},
		{"three of four", 3, 4, 1, 4},
		{"batch covers the node", 4, 4, 1, 2},
		{"two per node of two", 1, 2, 2, 2},
		{"off", 0, 4, 1, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl := buildText(t, "gb300.toml", text(c.n, c.prefillWorkers, c.gpus, c.decodeWs))
			byNode := map[int][]plan.Process{}
			for _, p := range pl.Processes {
				if plan.IsWorker(p.Role) {
					byNode[p.Nodes[0]] = append(byNode[p.Nodes[0]], p)
				}
			}
			for node, procs := range byNode {
				for j, p := range procs {
					var wantAfter []string
					if c.n > 0 && j >= c.n {
						for _, q := range procs[(j/c.n-1)*c.n : j/c.n*c.n] {
							wantAfter = append(wantAfter, q.Name)
						}
					}
					if !slices.Equal(p.After, wantAfter) {
						t.Errorf("node %d %s: after %v, want %v", node, p.Name, p.After, wantAfter)
					}
					waited := c.n > 0 && (j/c.n+1)*c.n < len(procs)
					wantReady := (*plan.Probe)(nil)
					if waited {
						wantReady = &plan.Probe{Node: node, Port: p.Ports["system"], Path: "/health"}
					}
					if !reflect.DeepEqual(p.Ready, wantReady) {
						t.Errorf("node %d %s: ready %+v, want %+v", node, p.Name, p.Ready, wantReady)
					}
				}
			}
		})
	}
	for _, bad := range []struct{ text, want string }{
		{strings.NewReplacer("type: trtllm", "type: sglang", "trtllm_config", "sglang_config", "tensor_parallel_size", "tensor-parallel-size").Replace(text(1, 4, 1, 1)), "a trtllm backend field"},
	} {
		_, err := buildTextErr(t, "gb300.toml", bad.text)
		if err == nil || !strings.Contains(err.Error(), "backend.sequential_node_start") || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v, want refused naming backend.sequential_node_start: %s", err, bad.want)
		}
	}
}

// TestValidateAfter: a plan whose worker waits for a later, a non-worker
// or an unprobed process is refused.
func TestValidateAfter(t *testing.T) {
	text := strings.Replace(trtllmRecipe, "  type: trtllm\n", "  type: trtllm\n  sequential_node_start: 1\n", 1)
	text = strings.Replace(text, "prefill_workers: 1, gpus_per_prefill: 2", "prefill_workers: 2, gpus_per_prefill: 2", 1)
	base := buildText(t, "gb300.toml", text)
	if procNamed(t, base, "prefill_w1").After == nil {
		t.Fatal("prefill_w1 waits for nothing")
	}
	for name, edit := range map[string]func(p *plan.Plan){
		"later":      func(p *plan.Plan) { setAfter(p, "prefill_w0", []string{"decode_w0"}) },
		"unprobed":   func(p *plan.Plan) { setReady(p, "prefill_w0", nil) },
		"non-worker": func(p *plan.Plan) { setAfter(p, "benchmark", []string{"prefill_w0"}) },
	} {
		p := buildText(t, "gb300.toml", text)
		edit(p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "wait") {
			t.Errorf("%s: %v, want refused", name, err)
		}
	}
}

func setReady(p *plan.Plan, name string, r *plan.Probe) {
	for i := range p.Processes {
		if p.Processes[i].Name == name {
			p.Processes[i].Ready = r
		}
	}
}

func setAfter(p *plan.Plan, name string, after []string) {
	for i := range p.Processes {
		if p.Processes[i].Name == name {
			p.Processes[i].After = after
		}
	}
}

// TestVLLMSetCUDAVisibleDevices: backend.set_cuda_visible_devices swaps
// vLLM's --device-ids for a CUDA_VISIBLE_DEVICES mask on workers holding
// part of a node (backends/vllm.py should_set_cuda_visible_devices,
// cli/mixins/worker_stage.py).
func TestVLLMSetCUDAVisibleDevices(t *testing.T) {
	cases := []struct {
		name, frontend string
		set            string // "" = unset
		roles          []vllmRole
	}{
		{"partial nodes mask", "dynamo", "true", []vllmRole{{"prefill", 1, 2, 0, 2}, {"decode", 2, 1, 0, 8}}},
		{"partial nodes device ids", "dynamo", "false", []vllmRole{{"prefill", 1, 2, 0, 2}, {"decode", 2, 1, 0, 8}}},
		{"partial nodes default", "dynamo", "", []vllmRole{{"prefill", 1, 4, 0, 1}, {"decode", 1, 1, 0, 4}}},
		{"vllm serve mask", "vllm", "true", []vllmRole{{"agg", 1, 1, 0, 4}}},
		{"vllm serve device ids", "vllm", "", []vllmRole{{"agg", 2, 1, 0, 8}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := vllmLayout{name: "cvd", shape: gb300Shape, frontend: c.frontend, roles: c.roles}.recipe()
			if c.set != "" {
				text = strings.Replace(text, "  type: vllm\n", "  type: vllm\n  set_cuda_visible_devices: "+c.set+"\n", 1)
			}
			pl := buildText(t, "gb300.toml", text)
			mask := c.set == "true"
			for _, p := range pl.Processes {
				if !plan.IsWorker(p.Role) {
					continue
				}
				partial := len(p.GPUs) > 0 && len(p.GPUs) < pl.GPUsPerNode
				cvd, hasCVD := p.Env["CUDA_VISIBLE_DEVICES"]
				ids := argAfter(p.Argv, "--device-ids")
				switch {
				case mask && partial && cvd != plan.JoinInts(p.GPUs):
					t.Errorf("%s: CUDA_VISIBLE_DEVICES %q, want %s", p.Name, cvd, plan.JoinInts(p.GPUs))
				case mask && !partial && hasCVD:
					t.Errorf("%s holds its node but got CUDA_VISIBLE_DEVICES %q", p.Name, cvd)
				case mask && ids != "":
					t.Errorf("%s: --device-ids %s with the mask", p.Name, ids)
				case !mask && hasCVD:
					t.Errorf("%s: CUDA_VISIBLE_DEVICES %q without set_cuda_visible_devices", p.Name, cvd)
				case !mask && ids == "":
					t.Errorf("%s: no --device-ids: %q", p.Name, p.Argv)
				}
			}
		})
	}
	sg := strings.Replace(strings.Replace(vllmLayout{name: "cvd", shape: gb300Shape, frontend: "dynamo", roles: []vllmRole{{"agg", 1, 1, 0, 4}}}.recipe(),
		"type: vllm\n  vllm_config", "type: sglang\n  set_cuda_visible_devices: true\n  sglang_config", 1), "tensor-parallel-size: 4", "tensor-parallel-size: 4", 1)
	if _, err := buildTextErr(t, "gb300.toml", sg); err == nil || !strings.Contains(err.Error(), "backend.set_cuda_visible_devices") {
		t.Errorf("sglang with set_cuda_visible_devices: %v, want refused naming the field", err)
	}
}
