package planner

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestVLLMRouterPlans: the router's argv, where it and its workers listen,
// and what the health gate waits for, for topologies built from the two
// testdata recipes (srt-slurm's vllm_router.py / static_router.py rules,
// planner/infra/vllm_router.go).
func TestVLLMRouterPlans(t *testing.T) {
	pd := string(readTestdata(t, "recipes", "vllm-router-pd.yaml"))
	agg := string(readTestdata(t, "recipes", "vllm-router-agg.yaml"))
	edit := func(base string, pairs ...string) string {
		t.Helper()
		for i := 0; i+1 < len(pairs); i += 2 {
			if !strings.Contains(base, pairs[i]) {
				t.Fatalf("recipe has no %q", pairs[i])
			}
			base = strings.Replace(base, pairs[i], pairs[i+1], 1)
		}
		return base
	}
	const aggDP = "      tensor-parallel-size: 1\n      data-parallel-size: 2\n"
	const decodeDP = "      data-parallel-size: 16\n      tensor-parallel-size: 1\n      enable-expert-parallel: true\n      data-parallel-rpc-port: 9999\n"
	type probe = plan.Probe
	cases := []struct {
		name, recipe string
		routers      map[string]string // router process → argv
		routerNodes  map[string]int
		routerPort   int
		workers      map[string]string // worker process → substring of its argv ("!x" must not appear)
		httpPorts    map[string]int    // worker process → its http port (0: none)
		prefill      int
		decode       int
		probes       []probe
	}{
		{
			name:   "aggregated DEP2: one URL expanded into two ranks",
			recipe: agg,
			routers: map[string]string{"vllm_router_0": "vllm-router --worker-urls http://{ip:0}:6100 --host 0.0.0.0 --port 8000 " +
				"--intra-node-data-parallel-size 2 --worker-startup-timeout-secs 7200 --policy consistent_hash " +
				"--prometheus-host 127.0.0.1 --prometheus-port 18000 --disable-retries"},
			routerNodes: map[string]int{"vllm_router_0": 0}, routerPort: 8000,
			workers:   map[string]string{"agg_w0": "vllm serve /model --host 0.0.0.0 --port 6100 --device-ids 0,1 --data-parallel-size 2"},
			httpPorts: map[string]int{"agg_w0": 6100},
			prefill:   0, decode: 2, probes: []probe{{Node: 0, Port: 6100, Path: "/health"}},
		},
		{
			name:   "aggregated TP4 replicas: one URL each; no expansion",
			recipe: edit(agg, "  agg_workers: 1\n  gpus_per_agg: 2\n", "  agg_workers: 2\n  gpus_per_agg: 4\n", aggDP, "      tensor-parallel-size: 4\n"),
			routers: map[string]string{"vllm_router_0": "vllm-router --worker-urls http://{ip:0}:6100 http://{ip:0}:6132 --host 0.0.0.0 --port 8000 " +
				"--worker-startup-timeout-secs 7200 --policy consistent_hash --prometheus-host 127.0.0.1 --prometheus-port 18000 --disable-retries"},
			routerNodes: map[string]int{"vllm_router_0": 0}, routerPort: 8000,
			workers:   map[string]string{"agg_w1": "vllm serve /model --host 0.0.0.0 --port 6132 --device-ids 4,5,6,7"},
			httpPorts: map[string]int{"agg_w0": 6100, "agg_w1": 6132},
			prefill:   0, decode: 2, probes: []probe{{Node: 0, Port: 6100, Path: "/health"}, {Node: 0, Port: 6132, Path: "/health"}},
		},
		{
			name:   "P/D; DP16 decode pools on two nodes; each its own API",
			recipe: pd,
			routers: map[string]string{"vllm_router_0": "vllm-router --vllm-pd-disaggregation --prefill http://{ip:0}:6100 5400 " +
				"--decode http://{ip:1}:6100 --decode http://{ip:2}:6100 --host 0.0.0.0 --port 8000 " +
				"--worker-startup-timeout-secs 1800 --policy round_robin --request-timeout-secs 14400"},
			routerNodes: map[string]int{"vllm_router_0": 0}, routerPort: 8000,
			workers: map[string]string{
				"prefill_w0":   "--kv-transfer-config {\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"}",
				"decode_w0_r0": "--host 0.0.0.0 --port 6100 --data-parallel-size-local 8 --data-parallel-start-rank 0 --data-parallel-address {ip:1} --data-parallel-rpc-port 8400 --data-parallel-hybrid-lb",
				"decode_w0_r1": "--host 0.0.0.0 --port 6100 --data-parallel-size-local 8 --data-parallel-start-rank 8 --data-parallel-address {ip:1} --data-parallel-rpc-port 8400 --data-parallel-hybrid-lb",
			},
			httpPorts: map[string]int{"prefill_w0": 6100, "decode_w0_r0": 6100, "decode_w0_r1": 6100},
			prefill:   1, decode: 2,
			probes: []probe{{Node: 0, Port: 6100, Path: "/health"}, {Node: 1, Port: 6100, Path: "/health"}, {Node: 2, Port: 6100, Path: "/health"}},
		},
		{
			name:   "P/D; a TP16 decode replica spans two nodes: one API; headless follower",
			recipe: edit(pd, decodeDP, "      tensor-parallel-size: 16\n"),
			routers: map[string]string{"vllm_router_0": "vllm-router --vllm-pd-disaggregation --prefill http://{ip:0}:6100 5400 " +
				"--decode http://{ip:1}:6100 --host 0.0.0.0 --port 8000 --worker-startup-timeout-secs 1800 --policy round_robin --request-timeout-secs 14400"},
			routerNodes: map[string]int{"vllm_router_0": 0}, routerPort: 8000,
			workers: map[string]string{
				"decode_w0_r0": "vllm serve /model --host 0.0.0.0 --port 6100 --master-addr {ip:1} --nnodes 2 --node-rank 0 --device-ids",
				"decode_w0_r1": "vllm serve /model --master-addr {ip:1} --nnodes 2 --node-rank 1 --headless --device-ids",
			},
			httpPorts: map[string]int{"prefill_w0": 6100, "decode_w0_r0": 6100, "decode_w0_r1": 0},
			prefill:   1, decode: 1,
			probes: []probe{{Node: 0, Port: 6100, Path: "/health"}, {Node: 1, Port: 6100, Path: "/health"}},
		},
		{
			name: "frontend.args: '_' spelled '-'; a list repeats its flag; a timeout given is not managed",
			recipe: edit(agg, "    disable-retries: true\n",
				"    disable_retries: true\n    worker_startup_timeout_secs: 99\n    api_key: [a, b]\n    skipped: false\n    none: null\n"),
			routers: map[string]string{"vllm_router_0": "vllm-router --worker-urls http://{ip:0}:6100 --host 0.0.0.0 --port 8000 " +
				"--intra-node-data-parallel-size 2 --policy consistent_hash --prometheus-host 127.0.0.1 --prometheus-port 18000 " +
				"--disable-retries --worker-startup-timeout-secs 99 --api-key a --api-key b"},
			routerNodes: map[string]int{"vllm_router_0": 0}, routerPort: 8000,
			httpPorts: map[string]int{"agg_w0": 6100},
			prefill:   0, decode: 2, probes: []probe{{Node: 0, Port: 6100, Path: "/health"}},
		},
		{
			name:   "the expansion written in frontend.args; agreeing; is not repeated",
			recipe: edit(agg, "    policy: consistent_hash\n", "    policy: consistent_hash\n    intra_node_data_parallel_size: 2\n"),
			routers: map[string]string{"vllm_router_0": "vllm-router --worker-urls http://{ip:0}:6100 --host 0.0.0.0 --port 8000 " +
				"--worker-startup-timeout-secs 7200 --policy consistent_hash --intra-node-data-parallel-size 2 " +
				"--prometheus-host 127.0.0.1 --prometheus-port 18000 --disable-retries"},
			routerNodes: map[string]int{"vllm_router_0": 0}, routerPort: 8000,
			httpPorts: map[string]int{"agg_w0": 6100},
			prefill:   0, decode: 2, probes: []probe{{Node: 0, Port: 6100, Path: "/health"}},
		},
		{
			name:   "several routers behind nginx on the worker nodes after the head",
			recipe: edit(pd, "  enable_multiple_frontends: false\n", "  enable_multiple_frontends: true\n"),
			routers: map[string]string{
				"vllm_router_0": "vllm-router --vllm-pd-disaggregation --prefill http://{ip:0}:6100 5400 --decode http://{ip:1}:6100 --decode http://{ip:2}:6100 --host 0.0.0.0 --port 8180 --worker-startup-timeout-secs 1800 --policy round_robin --request-timeout-secs 14400",
				"vllm_router_1": "vllm-router --vllm-pd-disaggregation --prefill http://{ip:0}:6100 5400 --decode http://{ip:1}:6100 --decode http://{ip:2}:6100 --host 0.0.0.0 --port 8180 --worker-startup-timeout-secs 1800 --policy round_robin --request-timeout-secs 14400",
			},
			routerNodes: map[string]int{"vllm_router_0": 1, "vllm_router_1": 2}, routerPort: 8180,
			httpPorts: map[string]int{"prefill_w0": 6100, "decode_w0_r0": 6100, "decode_w0_r1": 6100},
			prefill:   1, decode: 2,
			probes: []probe{{Node: 0, Port: 6100, Path: "/health"}, {Node: 1, Port: 6100, Path: "/health"}, {Node: 2, Port: 6100, Path: "/health"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := buildText(t, "b200.toml", tc.recipe)
			if pl.Frontend != "vllm-router" {
				t.Fatalf("frontend %q", pl.Frontend)
			}
			var routers []string
			for _, p := range pl.Processes {
				if p.Role == plan.RoleFrontend {
					routers = append(routers, p.Name)
				}
			}
			if len(routers) != len(tc.routers) {
				t.Errorf("routers %v, want %d", routers, len(tc.routers))
			}
			for name, want := range tc.routers {
				p := procNamed(t, pl, name)
				if got := strings.Join(p.Argv, " "); got != want {
					t.Errorf("%s argv:\n got %s\nwant %s", name, got, want)
				}
				if p.Nodes[0] != tc.routerNodes[name] || p.Ports["http"] != tc.routerPort {
					t.Errorf("%s on node %d port %d, want node %d port %d", name, p.Nodes[0], p.Ports["http"], tc.routerNodes[name], tc.routerPort)
				}
				if !slices.EqualFunc(p.Setup, [][]string{{"bash", "/configs/vllm-router.sh"}}, slices.Equal) {
					t.Errorf("%s setup %q, want the recipe's setup script", name, p.Setup)
				}
				if p.Env["ROUTER_VERSION"] != "0.1.14" {
					t.Errorf("%s env %v: the recipe's environment (ROUTER_VERSION) is missing", name, p.Env)
				}
			}
			for name, want := range tc.workers {
				got := strings.Join(procNamed(t, pl, name).Argv, " ")
				if neg, ok := strings.CutPrefix(want, "!"); ok {
					if strings.Contains(got, neg) {
						t.Errorf("%s argv has %q: %s", name, neg, got)
					}
				} else if !strings.Contains(got, want) {
					t.Errorf("%s argv lacks %q:\n%s", name, want, got)
				}
			}
			for name, port := range tc.httpPorts {
				if got := procNamed(t, pl, name).Ports["http"]; got != port {
					t.Errorf("%s http port %d, want %d", name, got, port)
				}
			}
			h := pl.Health
			if h.Kind != "sglang-router" || h.Path != "/workers" || h.Prefill != tc.prefill || h.Decode != tc.decode {
				t.Errorf("health %s %s %dP %dD, want sglang-router /workers %dP %dD", h.Kind, h.Path, h.Prefill, h.Decode, tc.prefill, tc.decode)
			}
			if fmt.Sprint(h.Workers) != fmt.Sprint(tc.probes) {
				t.Errorf("worker probes %v, want %v", h.Workers, tc.probes)
			}
			if slices.ContainsFunc(pl.Processes, func(p plan.Process) bool { return p.Role == plan.RoleInfra }) {
				t.Error("NATS/etcd planned: a static router needs no discovery plane")
			}
		})
	}
}

// TestVLLMRouterRefused: what srtctl refuses for a vLLM Router is refused
// naming the field and the numbers.
func TestVLLMRouterRefused(t *testing.T) {
	pd := string(readTestdata(t, "recipes", "vllm-router-pd.yaml"))
	agg := string(readTestdata(t, "recipes", "vllm-router-agg.yaml"))
	sglang := string(readTestdata(t, "recipes", "1p1d.yaml"))
	edit4 := func(base string) string { // one TP2 × DP2 worker on four GPUs
		s := strings.Replace(base, "  gpus_per_agg: 2\n", "  gpus_per_agg: 4\n", 1)
		return strings.Replace(s, "      tensor-parallel-size: 1\n", "      tensor-parallel-size: 2\n", 1)
	}
	cases := []struct {
		name, base, old, new string
		want                 []string
	}{
		{"an SGLang engine", sglang, "  type: sglang\n  args:", "  type: vllm-router\n  args:",
			[]string{"frontend.type", "requires backend.type: vllm", `"sglang"`}},
		{"per-GPU DP processes", agg, "  connector: null\n", "  connector: null\n  dp_launch_mode: per_gpu\n",
			[]string{"backend.dp_launch_mode", "requires backend.dp_launch_mode: per_node"}},
		{"per-GPU DP processes with TP2 replicas", edit4(agg), "  connector: null\n", "  connector: null\n  dp_launch_mode: per_gpu\n",
			[]string{"backend.dp_launch_mode", "requires backend.dp_launch_mode: per_node"}},
		{"an expansion that disagrees", agg, "    policy: consistent_hash\n", "    policy: consistent_hash\n    intra-node-data-parallel-size: 4\n",
			[]string{"frontend.args.intra-node-data-parallel-size", "configured 4, derived 2"}},
		{"an expansion that is no number", agg, "    policy: consistent_hash\n", "    policy: consistent_hash\n    intra-node-data-parallel-size: two\n",
			[]string{"frontend.args.intra-node-data-parallel-size", "must be an integer"}},
		{"pools with different expansions", pd,
			"  prefill_nodes: 1\n  decode_nodes: 2\n", "  prefill_nodes: 1\n  decode_nodes: 1\n  gpus_per_prefill: 2\n  gpus_per_decode: 4\n",
			[]string{"frontend.type", "one uniform node-local DP expansion factor", "2, 4"}},
		{"TP2 over the two GPUs without DP is planned", agg, "      tensor-parallel-size: 1\n      data-parallel-size: 2\n",
			"      tensor-parallel-size: 2\n      data-parallel-size: 1\n      pipeline-parallel-size: 1\n",
			nil}, // planned: TP2 × DP1 fills the two GPUs (no DP, no expansion)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.base, tc.old) {
				t.Fatalf("recipe has no %q", tc.old)
			}
			text := strings.Replace(tc.base, tc.old, tc.new, 1)
			if tc.name == "pools with different expansions" {
				text = strings.Replace(text, "      tensor-parallel-size: 8\n      max-num-seqs: 64\n", "      tensor-parallel-size: 1\n      data-parallel-size: 2\n", 1)
				text = strings.Replace(text, "      data-parallel-size: 16\n", "      data-parallel-size: 4\n", 1)
			}
			_, err := buildTextErr(t, "b200.toml", text)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("planned")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
