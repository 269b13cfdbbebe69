package planner

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// serveAgg is a schema-2 aggregated trtllm_serve recipe on the GB300 test
// profile (4 GPUs per node); cases edit its role and engine lines.
const serveAgg = `schema: 2
name: serve
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4}
frontend: {type: trtllm_serve, enable_multiple_frontends: false}
engine: ENGINE
roles:
  agg:
    workers: 1
ROLE
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`

func serveAggText(engine, role string) string {
	return strings.NewReplacer("ENGINE", engine, "ROLE", role).Replace(serveAgg)
}

// serveDisagg is a schema-1 disaggregated trtllm_serve recipe: one TP2
// prefill on node 0, two TP4 decode workers on nodes 1 and 2.
const serveDisagg = `name: serve-pd
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, gpus_per_prefill: 2, decode_nodes: 2, decode_workers: 2}
frontend:
  type: trtllm_serve
  enable_multiple_frontends: false
  args: {log_level: info, verbose: true, quiet: false}
  env: {FE: "1"}
FRONTEND
environment: {RECIPE_ENV: x}
backend:
  type: trtllm
BACKEND
  prefill_environment: {TLLM_LOG_LEVEL: INFO}
  trtllm_config:
    prefill: {tensor_parallel_size: 2, moe_expert_parallel_size: 2}
    decode: {tensor_parallel_size: 4, pipeline_parallel_size: 1, cuda_graph_config: {batch_sizes: [1, 2]}}
benchmark: BENCH
`

func serveDisaggText(frontend, backend, bench string) string {
	if bench == "" {
		bench = "{type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}"
	}
	return strings.NewReplacer("FRONTEND\n", frontend, "BACKEND\n", backend, "BENCH", bench).Replace(serveDisagg)
}

// TestTRTLLMServeWorkers: the worker argv, port, environment and engine
// YAML srtctl builds for frontend.type trtllm_serve
// (backends/trtllm.py@17c4ece9, frontends/trtllm_serve.py@3c0b8d46):
// aggregated with and without MTP, multi-node aggregated, disaggregated.
func TestTRTLLMServeWorkers(t *testing.T) {
	cases := []struct {
		name, text, proc string
		argv             string
		port             int
		nodes            []int
		ntasks           int
		yaml             []string // lines the engine YAML holds
		env              map[string]string
	}{
		{
			name: "agg TP4 without speculative decoding",
			text: serveAggText("trtllm", "    nodes: 1\n    gpus: 4\n    args: {tensor_parallel_size: 4, max_batch_size: 8}"),
			proc: "agg_w0",
			argv: "trtllm-llmapi-launch trtllm-serve /model --host 0.0.0.0 --port 8000 --tensor_parallel_size 4 --config /logs/trtllm_config_agg.yaml",
			port: 8000, nodes: []int{0}, ntasks: 4,
			yaml: []string{"enable_iter_perf_stats: false", "return_perf_metrics: true", "max_batch_size: 8"},
		},
		{
			name: "agg MTP with served name extra_args and explicit perf keys",
			text: serveAggText("{type: trtllm, served_model_name: nvidia/Qwen3.5-FP4}",
				"    nodes: 1\n    gpus: 2\n    extra_args: [--tool_parser, qwen3, --chat_template, /model/t.jinja]\n"+
					"    env: {DYN_LOG: debug}\n"+
					"    args: {tensor_parallel_size: 2, moe_expert_parallel_size: 2, pipeline_parallel_size: 1, return_perf_metrics: false, enable_iter_perf_stats: true,\n"+
					"           speculative_config: {decoding_type: MTP, num_nextn_predict_layers: 3}}"),
			proc: "agg_w0",
			argv: "trtllm-llmapi-launch trtllm-serve /model --host 0.0.0.0 --port 8000 --tensor_parallel_size 2 --moe_expert_parallel_size 2 --pipeline_parallel_size 1 " +
				"--config /logs/trtllm_config_agg.yaml --served_model_name nvidia/Qwen3.5-FP4 --tool_parser qwen3 --chat_template /model/t.jinja",
			port: 8000, nodes: []int{0}, ntasks: 2,
			yaml: []string{"enable_iter_perf_stats: true", "return_perf_metrics: false", "speculative_config:\n  decoding_type: MTP\n  num_nextn_predict_layers: 3"},
			// The role sets DYN_LOG: it stays; Dynamo's other defaults go.
			env: map[string]string{"DYN_LOG": "debug", "CUDA_VISIBLE_DEVICES": "0,1"},
		},
		{
			name: "agg over two nodes TP8 Eagle3",
			text: serveAggText("trtllm", "    nodes: 2\n    gpus: 8\n    args: {tensor_parallel_size: 8, speculative_config: {decoding_type: Eagle3, max_draft_len: 3}}"),
			proc: "agg_w0",
			argv: "trtllm-llmapi-launch trtllm-serve /model --host 0.0.0.0 --port 8000 --tensor_parallel_size 8 --config /logs/trtllm_config_agg.yaml",
			port: 8000, nodes: []int{0, 1}, ntasks: 8,
			yaml: []string{"speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3"},
		},
		{
			name: "disagg prefill on its own HTTP port with Grace numactl",
			text: serveDisaggText("", "", ""),
			proc: "prefill_w0",
			argv: "numactl -m 0,1 trtllm-llmapi-launch trtllm-serve /model --host 0.0.0.0 --port 6100 --tensor_parallel_size 2 --moe_expert_parallel_size 2 --config /logs/trtllm_config_prefill.yaml",
			port: 6100, nodes: []int{0}, ntasks: 2,
			env: map[string]string{"TLLM_LOG_LEVEL": "INFO", "RECIPE_ENV": "x", "HEAD_NODE_IP": "{ip:0}"},
		},
		{
			name: "disagg decode with numa_memory_bind false",
			text: serveDisaggText("", "  numa_memory_bind: false\n", ""),
			proc: "decode_w1",
			argv: "trtllm-llmapi-launch trtllm-serve /model --host 0.0.0.0 --port 6100 --tensor_parallel_size 4 --pipeline_parallel_size 1 --config /logs/trtllm_config_decode.yaml",
			port: 6100, nodes: []int{2}, ntasks: 4,
			yaml: []string{"cuda_graph_config:\n  batch_sizes:\n  - 1\n  - 2", "return_perf_metrics: true"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := buildText(t, "gb300.toml", tc.text)
			p := procNamed(t, pl, tc.proc)
			if got := strings.Join(p.Argv, " "); got != tc.argv {
				t.Errorf("argv:\n got %s\nwant %s", got, tc.argv)
			}
			if want := map[string]int{"http": tc.port}; !reflect.DeepEqual(p.Ports, want) {
				t.Errorf("ports %v, want %v", p.Ports, want)
			}
			if !reflect.DeepEqual(p.Nodes, tc.nodes) || p.Srun.NTasks != tc.ntasks || p.Srun.MPI != "pmix" {
				t.Errorf("nodes %v srun %+v, want nodes %v, %d tasks, pmix", p.Nodes, p.Srun, tc.nodes, tc.ntasks)
			}
			for _, k := range []string{"ETCD_ENDPOINTS", "NATS_SERVER", "DYN_SYSTEM_PORT", "DYN_REQUEST_PLANE", "DYN_SKIP_SGLANG_LOG_FORMATTING", "DYN_LOG"} {
				if _, set := p.Env[k]; set && tc.env[k] == "" {
					t.Errorf("env %s=%q: a Dynamo default on a trtllm-serve worker", k, p.Env[k])
				}
			}
			for k, v := range tc.env {
				if p.Env[k] != v {
					t.Errorf("env %s=%q, want %q", k, p.Env[k], v)
				}
			}
			if !eplbName.MatchString(p.Env["TRTLLM_EPLB_SHM_NAME"]) {
				t.Errorf("TRTLLM_EPLB_SHM_NAME %q", p.Env["TRTLLM_EPLB_SHM_NAME"])
			}
			conf := ""
			for path, c := range p.Files {
				if strings.HasPrefix(filepath.Base(path), "trtllm_config_") {
					conf = c
				}
			}
			for _, want := range tc.yaml {
				if !strings.Contains(conf, want+"\n") {
					t.Errorf("engine YAML lacks %q:\n%s", want, conf)
				}
			}
			if len(p.Setup) != 0 {
				t.Errorf("setup steps %q: trtllm_serve installs no Dynamo", p.Setup)
			}
		})
	}
}

// TestTRTLLMServeEndpoint: what serves the public API, the health gate and
// where clients point; no NATS, etcd or Dynamo install; the disaggregated
// orchestrator's argv, environment, ser.yaml and wait on the workers.
func TestTRTLLMServeEndpoint(t *testing.T) {
	const ser = "context_servers:\n  num_instances: 1\n  urls:\n  - {ip:0}:6100\n" +
		"generation_servers:\n  num_instances: 2\n  urls:\n  - {ip:1}:6100\n  - {ip:2}:6100\n" +
		"hostname: 0.0.0.0\nport: 8000\n"
	cases := []struct {
		name, text   string
		apiNode      int
		orchestrator bool
		orchNode     int
	}{
		{"agg", serveAggText("trtllm", "    nodes: 1\n    gpus: 4\n    args: {tensor_parallel_size: 4}"), 0, false, 0},
		{"agg over two nodes", serveAggText("trtllm", "    nodes: 2\n    gpus: 8\n    args: {tensor_parallel_size: 8}"), 0, false, 0},
		{"disagg on head", serveDisaggText("", "", ""), 0, true, 0},
		{"disagg on first_decode", serveDisaggText("  orchestrator_placement: first_decode\n", "", ""), 1, true, 1},
		{"disagg on last_decode", serveDisaggText("  orchestrator_placement: last_decode\n", "", ""), 2, true, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := buildText(t, "gb300.toml", tc.text)
			h := pl.Health
			// gb300.toml's [health] max_attempts 240 wins, as for every gate.
			if h.Kind != "http-ok" || h.Path != "/health" || h.Node != tc.apiNode || h.Port != 8000 || h.MaxAttempts != 240 {
				t.Errorf("health %+v, want http-ok GET /health on node %d:8000", h, tc.apiNode)
			}
			if pl.Dynamo.Install {
				t.Error("Dynamo is installed for trtllm-serve workers")
			}
			bench := procNamed(t, pl, "benchmark")
			if want := "http://{ip:" + string(rune('0'+tc.apiNode)) + "}:8000"; !strings.Contains(strings.Join(bench.Argv, " "), "--frontend "+want) {
				t.Errorf("benchmark argv %q does not point at %s", bench.Argv, want)
			}
			var fe []plan.Process
			for _, p := range pl.Processes {
				switch p.Role {
				case plan.RoleInfra, plan.RoleNginx:
					t.Errorf("process %s (%s): trtllm_serve runs no NATS, etcd or nginx", p.Name, p.Role)
				case plan.RoleFrontend:
					fe = append(fe, p)
				}
			}
			if !tc.orchestrator {
				if len(fe) != 0 {
					t.Errorf("frontends %v: the aggregated worker is the endpoint", fe)
				}
				return
			}
			if len(fe) != 1 {
				t.Fatalf("%d frontends, want the orchestrator", len(fe))
			}
			o := fe[0]
			if got, want := strings.Join(o.Argv, " "), "trtllm-serve disaggregated --config /logs/ser.yaml --log_level info --verbose"; got != want {
				t.Errorf("orchestrator argv:\n got %s\nwant %s", got, want)
			}
			if o.Name != "frontend_0" || !reflect.DeepEqual(o.Nodes, []int{tc.orchNode}) || o.Srun.MPI != "pmix" || o.Srun.NTasks != 1 || !o.Critical || !o.Container {
				t.Errorf("orchestrator %s nodes %v srun %+v critical %v", o.Name, o.Nodes, o.Srun, o.Critical)
			}
			// frontend.env and the cluster's fixed variables; not the recipe's.
			if want := map[string]string{"FE": "1", "ENROOT_ROOTFS_WRITABLE": "1"}; !reflect.DeepEqual(o.Env, want) {
				t.Errorf("orchestrator env %v, want %v", o.Env, want)
			}
			if got := o.Files[filepath.Join(pl.Layout.Logs, "ser.yaml")]; got != ser {
				t.Errorf("ser.yaml:\n%s\nwant:\n%s", got, ser)
			}
			if want := []string{"prefill_w0", "decode_w0", "decode_w1"}; !reflect.DeepEqual(o.After, want) {
				t.Errorf("orchestrator after %v, want %v", o.After, want)
			}
			for _, name := range o.After {
				w := procNamed(t, pl, name)
				want := &plan.Probe{Node: w.Nodes[0], Port: 6100, Path: "/health", Status: 200}
				if !reflect.DeepEqual(w.Ready, want) {
					t.Errorf("%s ready %+v, want %+v", name, w.Ready, want)
				}
			}
			if err := pl.Validate(); err != nil {
				t.Errorf("plan does not validate: %v", err)
			}
		})
	}
}

// TestTRTLLMServeCustomBenchmark: a custom benchmark is told every logical
// worker's endpoint, and the P/D leaders' Prometheus text at
// /prometheus/metrics; an aggregated worker's metrics are left out.
func TestTRTLLMServeCustomBenchmark(t *testing.T) {
	const custom = "{type: custom, command: bench.sh}"
	cases := []struct {
		name, text, endpoints, metrics string
		endpointsKey                   string
	}{
		{"disagg", serveDisaggText("", "", custom), "{ip:1}:6100,{ip:2}:6100",
			"http://{ip:0}:6100/prometheus/metrics,http://{ip:1}:6100/prometheus/metrics,http://{ip:2}:6100/prometheus/metrics", "SRT_DECODE_ENDPOINTS"},
		{"agg", strings.Replace(serveAggText("trtllm", "    nodes: 1\n    gpus: 4\n    args: {tensor_parallel_size: 4}"), "{type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}", custom, 1),
			"{ip:0}:8000", "", "SRT_AGG_ENDPOINTS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := buildText(t, "gb300.toml", tc.text)
			env := procNamed(t, pl, "benchmark").Env
			if env[tc.endpointsKey] != tc.endpoints {
				t.Errorf("%s=%q, want %q", tc.endpointsKey, env[tc.endpointsKey], tc.endpoints)
			}
			if env["AIPERF_SERVER_METRICS_URLS"] != tc.metrics {
				t.Errorf("AIPERF_SERVER_METRICS_URLS=%q, want %q", env["AIPERF_SERVER_METRICS_URLS"], tc.metrics)
			}
			if env["SRTCTL_FRONTEND_TYPE"] != "trtllm_serve" || env["SRT_FRONTEND_PORT"] != "8000" {
				t.Errorf("frontend env %q %q", env["SRTCTL_FRONTEND_TYPE"], env["SRT_FRONTEND_PORT"])
			}
		})
	}
}

// TestTRTLLMServeSequentialStart: backend.sequential_node_start waits for a
// trtllm-serve worker's own HTTP port (worker_ready_port), not a Dynamo
// system port it does not have.
func TestTRTLLMServeSequentialStart(t *testing.T) {
	text := serveDisaggText("", "  sequential_node_start: 1\n", "")
	text = strings.Replace(text, "decode_nodes: 2, decode_workers: 2}", "decode_nodes: 1, decode_workers: 2}", 1)
	text = strings.Replace(text, "decode: {tensor_parallel_size: 4,", "decode: {tensor_parallel_size: 2,", 1)
	pl := buildText(t, "gb300.toml", text)
	d0, d1 := procNamed(t, pl, "decode_w0"), procNamed(t, pl, "decode_w1")
	if !reflect.DeepEqual(d1.After, []string{"decode_w0"}) {
		t.Fatalf("decode_w1 after %v", d1.After)
	}
	if d0.Ready == nil || d0.Ready.Port != d0.Ports["http"] || d0.Ready.Path != "/health" || d0.Ports["http"] == 0 {
		t.Errorf("decode_w0 ready %+v ports %v: want its HTTP port", d0.Ready, d0.Ports)
	}
	if err := pl.Validate(); err != nil {
		t.Error(err)
	}
}

// TestTRTLLMServeRefused: what srtctl refuses is refused naming the field,
// before anything starts: by the recipe reader (its load-time rules) or
// the planner.
func TestTRTLLMServeRefused(t *testing.T) {
	agg := serveAggText("trtllm", "    nodes: 1\n    gpus: 4\n    args: {tensor_parallel_size: 4}")
	cases := []struct{ name, text, field string }{
		{"two agg workers", strings.Replace(serveAggText("trtllm", "    nodes: 1\n    gpus: 2\n    args: {tensor_parallel_size: 2}"), "workers: 1", "workers: 2", 1), "roles.agg.workers"},
		{"multiple frontends", strings.Replace(serveDisaggText("", "", ""), "enable_multiple_frontends: false", "enable_multiple_frontends: true", 1), "frontend.enable_multiple_frontends"},
		{"multiple frontends by default", strings.Replace(agg, ", enable_multiple_frontends: false", "", 1), "frontend.type"},
		{"sglang engine", serveAggText("sglang", "    nodes: 1\n    gpus: 4"), "frontend.type"},
		{"agg endpoint placed on a decode node", strings.Replace(agg, "type: trtllm_serve,", "type: trtllm_serve, placement: {node: first_decode},", 1), "frontend.placement.node"},
		{"parallelism leaves GPUs idle", serveAggText("trtllm", "    nodes: 1\n    gpus: 4\n    args: {tensor_parallel_size: 2}"), "tensor_parallel_size 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "recipe.yaml")
			writeFile(t, path, tc.text)
			r, err := recipe.Load(path)
			if err == nil {
				_, err = Build(inputs(loadProfile(t, filepath.Join(testdataDir(t), "profiles", "gb300.toml")), r))
			}
			if err == nil || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err %v, want refused naming %s", err, tc.field)
			}
		})
	}
}

// serveDisaggV2 is a schema-2 disaggregated trtllm_serve recipe (ctx_router,
// gen_router and server_config_extra are schema-2 keys); FRONTEND adds to
// its frontend block.
const serveDisaggV2 = `schema: 2
name: serve-pd-v2
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4}
frontend:
  type: trtllm_serve
  enable_multiple_frontends: false
FRONTEND
engine: trtllm
roles:
  prefill: {nodes: 1, workers: 1, gpus: 4, args: {tensor_parallel_size: 4}}
  decode: {nodes: 1, workers: 1, gpus: 4, args: {tensor_parallel_size: 4}}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`

// TestTRTLLMServeSerOptions: frontend.ctx_router and gen_router become the
// server lists' "router", server_config_extra updates the top level in
// place or appends (trtllm_serve.py@3c0b8d46 _build_ser); an empty mapping
// adds nothing, and anything but a mapping is refused naming the key.
func TestTRTLLMServeSerOptions(t *testing.T) {
	const lists = "context_servers:\n  num_instances: 1\n  urls:\n  - {ip:0}:6100\nCTX" +
		"generation_servers:\n  num_instances: 1\n  urls:\n  - {ip:1}:6100\nGEN"
	cases := []struct {
		name, frontend, ser, field string
	}{
		{"none", "", strings.NewReplacer("CTX", "", "GEN", "").Replace(lists) + "hostname: 0.0.0.0\nport: 8000\n", ""},
		{"routers", "  ctx_router: {type: kv_cache_aware, use_kv_events: true}\n  gen_router: {type: load_balancing, args: [a, 'yes']}\n",
			strings.NewReplacer("CTX", "  router:\n    type: kv_cache_aware\n    use_kv_events: true\n",
				"GEN", "  router:\n    type: load_balancing\n    args:\n    - a\n    - \"yes\"\n").Replace(lists) + "hostname: 0.0.0.0\nport: 8000\n", ""},
		{"empty router", "  ctx_router: {}\n  gen_router: null\n", strings.NewReplacer("CTX", "", "GEN", "").Replace(lists) + "hostname: 0.0.0.0\nport: 8000\n", ""},
		{"server_config_extra", "  server_config_extra: {port: 8001, max_retries: 3, perf_metrics_max_requests: 1000.5}\n",
			strings.NewReplacer("CTX", "", "GEN", "").Replace(lists) + "hostname: 0.0.0.0\nport: 8001\nmax_retries: 3\nperf_metrics_max_requests: 1000.5\n", ""},
		{"router not a mapping", "  ctx_router: [round_robin]\n", "", "frontend.ctx_router"},
		{"extra not a mapping", "  server_config_extra: 3\n", "", "frontend.server_config_extra"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(serveDisaggV2, "FRONTEND\n", tc.frontend, 1)
			if tc.field != "" {
				_, err := buildTextErr(t, "gb300.toml", text)
				if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "recipe.yaml:") {
					t.Errorf("err %v, want refused naming %s at its line", err, tc.field)
				}
				return
			}
			pl := buildText(t, "gb300.toml", text)
			o := procNamed(t, pl, "frontend_0")
			if got := o.Files[filepath.Join(pl.Layout.Logs, "ser.yaml")]; got != tc.ser {
				t.Errorf("ser.yaml:\n%s\nwant:\n%s", got, tc.ser)
			}
		})
	}
}
