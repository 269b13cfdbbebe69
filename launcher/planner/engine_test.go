package planner

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
)

// buildText plans a recipe given as text on a testdata profile.
func buildText(t *testing.T, profile, text string) *plan.Plan {
	t.Helper()
	pl, err := buildTextErr(t, profile, text)
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, pl)
	return pl
}

func buildTextErr(t *testing.T, profile, text string) (*plan.Plan, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recipe.yaml")
	writeFile(t, path, text)
	return Build(inputs(loadProfile(t, filepath.Join(testdataDir(t), "profiles", profile)), loadRecipe(t, path)))
}

func procNamed(t *testing.T, pl *plan.Plan, name string) plan.Process {
	t.Helper()
	for _, p := range pl.Processes {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no process %s in %v", name, processNames(pl))
	return plan.Process{}
}

func processNames(pl *plan.Plan) []string {
	var out []string
	for _, p := range pl.Processes {
		out = append(out, p.Name)
	}
	return out
}

// argAfter is the value following flag in argv ("" when absent).
func argAfter(argv []string, flag string) string {
	if i := indexOf(argv, flag); i >= 0 && i+1 < len(argv) {
		return argv[i+1]
	}
	return ""
}

const vllmDPRecipe = `name: vllm-dp
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 4, decode_workers: 1}
frontend: {type: dynamo, enable_multiple_frontends: false}
dynamo: {install: false}
backend:
  type: vllm
  vllm_config:
    prefill: {data-parallel-size: 4, tensor-parallel-size: 1, data-parallel-rpc-port: 13345, data-parallel-hybrid-lb: true, enforce-eager: true}
    decode: {data-parallel-size: 16, tensor-parallel-size: 1, served-model-name: Qwen/Qwen3.5}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`

// TestVLLMPerNodeDP: srtctl's per-node data parallelism. Each node's
// process runs its local ranks (start rank by node), the endpoint shares one
// RPC port on its leader and one NIXL block of dp ports, each process gets
// a KV-event block of its local ranks, the GPUs go as --device-ids, and each
// node process registers with the frontend.
func TestVLLMPerNodeDP(t *testing.T) {
	pl := buildText(t, "gb300.toml", vllmDPRecipe)
	pre := procNamed(t, pl, "prefill_w0")
	if got := strings.Join(pre.Argv, " "); !strings.Contains(got, "--disaggregation-mode prefill --kv-transfer-config {\"kv_connector\": \"NixlConnector\", \"kv_role\": \"kv_both\"} --device-ids 0,1,2,3 --data-parallel-size-local 4 --data-parallel-start-rank 0 --data-parallel-address {ip:0} --data-parallel-rpc-port 8400 --data-parallel-hybrid-lb --request-plane tcp") {
		t.Errorf("prefill argv: %s", got)
	}
	if n := strings.Count(strings.Join(pre.Argv, " "), "--data-parallel-hybrid-lb"); n != 1 || indexOf(pre.Argv, "13345") >= 0 {
		t.Errorf("recipe's DP layout flags not replaced: %q", pre.Argv)
	}
	if argAfter(pre.Argv, "--kv-transfer-config") != engine.NIXLTransferConfig {
		t.Errorf("default connector: --kv-transfer-config %q", argAfter(pre.Argv, "--kv-transfer-config"))
	}
	wantEnv := map[string]string{"DYN_VLLM_KV_EVENT_PORT": "5200", "VLLM_NIXL_SIDE_CHANNEL_PORT": "5400", "VLLM_NIXL_SIDE_CHANNEL_HOST": "{ip:0}", "VLLM_PORT": "20000"}
	for k, v := range wantEnv {
		if pre.Env[k] != v {
			t.Errorf("prefill %s = %q, want %q", k, pre.Env[k], v)
		}
	}
	if _, ok := pre.Env["CUDA_VISIBLE_DEVICES"]; ok {
		t.Error("vLLM got a CUDA_VISIBLE_DEVICES mask")
	}
	for rank := 0; rank < 4; rank++ {
		p := procNamed(t, pl, "decode_w0_r"+string(rune('0'+rank)))
		if got := argAfter(p.Argv, "--data-parallel-start-rank"); got != []string{"0", "4", "8", "12"}[rank] {
			t.Errorf("rank %d start rank %s", rank, got)
		}
		if argAfter(p.Argv, "--data-parallel-address") != "{ip:1}" || argAfter(p.Argv, "--data-parallel-rpc-port") != "8400" {
			t.Errorf("rank %d: DP address/port %q", rank, p.Argv)
		}
		if got := p.Env["DYN_VLLM_KV_EVENT_PORT"]; got != []string{"5204", "5208", "5212", "5216"}[rank] {
			t.Errorf("rank %d KV events %s", rank, got)
		}
		if p.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] != "5404" {
			t.Errorf("rank %d NIXL %s, want the endpoint's block at 5404", rank, p.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"])
		}
		if _, ok := p.Env["VLLM_PORT"]; ok || !reflect.DeepEqual(p.Unset, []string{"VLLM_PORT"}) {
			t.Errorf("rank %d: VLLM_PORT %q, unset %v: a multi-node endpoint rendezvouses without it", rank, p.Env["VLLM_PORT"], p.Unset)
		}
		// served-model-name stays in the config flags too, as srtctl passes it.
		if strings.Count(strings.Join(p.Argv, " "), "--served-model-name Qwen/Qwen3.5") != 2 {
			t.Errorf("rank %d: %q", rank, p.Argv)
		}
	}
	if pf, dc := pl.Registrations(); pf != 1 || dc != 4 {
		t.Errorf("registrations %d/%d, want 1 prefill and 4 decode node processes", pf, dc)
	}
}

// TestVLLMReplicaSpansNodes: a TP8 replica on 4-GPU nodes runs as one
// multi-node group per replica, leader address for both rendezvous.
func TestVLLMReplicaSpansNodes(t *testing.T) {
	text := strings.Replace(vllmDPRecipe, "decode: {data-parallel-size: 16, tensor-parallel-size: 1, served-model-name: Qwen/Qwen3.5}",
		"decode: {data-parallel-size: 2, tensor-parallel-size: 8}", 1)
	pl := buildText(t, "gb300.toml", text)
	r0, r1 := procNamed(t, pl, "decode_w0_r0"), procNamed(t, pl, "decode_w0_r1")
	want := "--master-addr {ip:1} --nnodes 4 --node-rank 1 --data-parallel-address {ip:1} --data-parallel-rpc-port 8400 --headless --request-plane"
	if got := strings.Join(r1.Argv, " "); !strings.Contains(got, want) {
		t.Errorf("rank 1 argv: %s\nwant %s", got, want)
	}
	if indexOf(r0.Argv, "--headless") >= 0 || indexOf(r0.Argv, "--data-parallel-size-local") >= 0 {
		t.Errorf("rank 0 argv: %q", r0.Argv)
	}
	if pf, dc := pl.Registrations(); pf != 1 || dc != 1 {
		t.Errorf("registrations %d/%d, want one per endpoint", pf, dc)
	}
}

// TestVLLMServe: frontend vllm makes the aggregated worker the server: the
// leader on the public port, the other node headless, no infra.
func TestVLLMServe(t *testing.T) {
	pl := buildText(t, "gb300.toml", `name: vllm-serve
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4, agg_nodes: 2, agg_workers: 1}
frontend: {type: vllm}
backend:
  type: vllm
  connector: null
  vllm_config:
    aggregated: {tensor-parallel-size: 4, pipeline-parallel-size: 2, host: 1.2.3.4, api-server-count: 2}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`)
	r0, r1 := procNamed(t, pl, "agg_w0_r0"), procNamed(t, pl, "agg_w0_r1")
	if got := strings.Join(r0.Argv, " "); !strings.HasPrefix(got, "vllm serve /model --host 0.0.0.0 --port 8000 --master-addr {ip:0} --nnodes 2 --node-rank 0 --device-ids 0,1,2,3 --api-server-count 2 ") ||
		!strings.Contains(got, "--served-model-name Qwen3.5-397B-A17B-NVFP4") || strings.Contains(got, "1.2.3.4") || strings.Contains(got, "kv-transfer") {
		t.Errorf("leader argv: %s", got)
	}
	if got := strings.Join(r1.Argv, " "); !strings.HasPrefix(got, "vllm serve /model --master-addr {ip:0} --nnodes 2 --node-rank 1 --headless --device-ids") || strings.Contains(got, "api-server-count") || strings.Contains(got, "--port") {
		t.Errorf("follower argv: %s", got)
	}
	for _, p := range pl.Processes {
		if p.Role == plan.RoleInfra || p.Role == plan.RoleFrontend || p.Role == plan.RoleNginx {
			t.Errorf("%s: vllm serve needs no %s", p.Name, p.Role)
		}
		if _, ok := p.Env["ETCD_ENDPOINTS"]; ok {
			t.Errorf("%s points at an etcd that does not run", p.Name)
		}
	}
	if pl.Health.Node != 0 || pl.Health.Port != 8000 || r0.Ports["http"] != 8000 {
		t.Errorf("health %+v, leader ports %v", pl.Health, r0.Ports)
	}
	if _, err := buildTextErr(t, "gb300.toml", strings.Replace(vllmDPRecipe, "type: dynamo,", "type: vllm,", 1)); err == nil || !strings.Contains(err.Error(), "aggregated") {
		t.Errorf("disaggregated vllm serve: %v", err)
	}
}

const trtllmRecipe = `name: trt
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4, prefill_nodes: 1, prefill_workers: 1, gpus_per_prefill: 2, decode_nodes: 2, decode_workers: 1}
frontend: {type: dynamo, enable_multiple_frontends: false}
dynamo: {version: 1.3.0}
srun_options: {mem: "0"}
backend:
  type: trtllm
  prefill_environment: {TLLM_LOG_LEVEL: INFO}
  trtllm_config:
    prefill: {tensor_parallel_size: 2, kv_cache_config: {free_gpu_memory_fraction: 0.9, dtype: fp8}}
    decode: {tensor_parallel_size: 8, cuda_graph_config: {batch_sizes: [1, 2, 4]}}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`

// TestTRTLLMLaunch: one MPI srun per endpoint with a task per GPU, numactl
// on Grace nodes, the engine YAML written into the logs directory.
func TestTRTLLMLaunch(t *testing.T) {
	pl := buildText(t, "gb300.toml", trtllmRecipe)
	pre, dec := procNamed(t, pl, "prefill_w0"), procNamed(t, pl, "decode_w0")
	want := "numactl -m 0,1 trtllm-llmapi-launch python3 -m dynamo.trtllm --model-path /model --served-model-name Qwen3.5-397B-A17B-NVFP4 --disaggregation-mode prefill --extra-engine-args /logs/trtllm_config_prefill.yaml --request-plane tcp"
	if got := strings.Join(pre.Argv, " "); got != want {
		t.Errorf("prefill argv:\n got %s\nwant %s", got, want)
	}
	if pre.Srun.NTasks != 2 || pre.Env["CUDA_VISIBLE_DEVICES"] != "0,1" || pre.Srun.MPI != "pmix" {
		t.Errorf("prefill srun %+v, CUDA_VISIBLE_DEVICES %q", pre.Srun, pre.Env["CUDA_VISIBLE_DEVICES"])
	}
	if !reflect.DeepEqual(dec.Nodes, []int{1, 2}) || dec.Srun.NTasks != 8 || !reflect.DeepEqual(dec.Srun.Extra, []string{"--oversubscribe", "--cpu-bind=verbose,none", "--mem=0"}) {
		t.Errorf("decode nodes %v srun %+v", dec.Nodes, dec.Srun)
	}
	if _, ok := dec.Env["DYN_REQUEST_PLANE"]; ok {
		t.Error("srtctl's MPI launch sets no DYN_REQUEST_PLANE")
	}
	if !eplbName.MatchString(dec.Env["TRTLLM_EPLB_SHM_NAME"]) || dec.Env["TRTLLM_EPLB_SHM_NAME"] == pre.Env["TRTLLM_EPLB_SHM_NAME"] {
		t.Errorf("EPLB names %q, %q", pre.Env["TRTLLM_EPLB_SHM_NAME"], dec.Env["TRTLLM_EPLB_SHM_NAME"])
	}
	conf := dec.Files[filepath.Join(pl.Layout.Logs, "trtllm_config_decode.yaml")]
	if conf != "cuda_graph_config:\n  batch_sizes:\n  - 1\n  - 2\n  - 4\ntensor_parallel_size: 8\n" {
		t.Errorf("decode YAML:\n%s", conf)
	}
	// Aggregated: no disaggregation mode, and no numactl (srtctl binds only P/D).
	agg := buildText(t, "gb300.toml", strings.NewReplacer(
		"prefill_nodes: 1, prefill_workers: 1, gpus_per_prefill: 2, decode_nodes: 2, decode_workers: 1", "agg_nodes: 1, agg_workers: 1",
		"prefill: {tensor_parallel_size: 2, kv_cache_config: {free_gpu_memory_fraction: 0.9, dtype: fp8}}", "aggregated: {tensor_parallel_size: 4}",
		"    decode: {tensor_parallel_size: 8, cuda_graph_config: {batch_sizes: [1, 2, 4]}}\n", "").Replace(trtllmRecipe))
	if got := strings.Join(procNamed(t, agg, "agg_w0").Argv, " "); got != "trtllm-llmapi-launch python3 -m dynamo.trtllm --model-path /model --served-model-name Qwen3.5-397B-A17B-NVFP4 --extra-engine-args /logs/trtllm_config_agg.yaml --request-plane tcp" {
		t.Errorf("agg argv %s", got)
	}
}

// TestInfra: NATS and etcd with srtctl's flags; a max payload goes through a
// config file; binaries the profile names by path run on the host.
func TestInfra(t *testing.T) {
	td := testdataDir(t)
	p := loadProfile(t, filepath.Join(td, "profiles", "b200.toml"))
	p.Infra.NATSServer, p.Infra.Etcd = "/opt/infra/nats-server", "/opt/infra/etcd"
	text := string(readTestdata(t, "recipes", "4p1d.yaml")) + "infra: {nats_max_payload_mb: 32}\n"
	path := filepath.Join(t.TempDir(), "r.yaml")
	writeFile(t, path, text)
	pl, err := Build(inputs(p, loadRecipe(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	nats, etcd := procNamed(t, pl, "infra_nats"), procNamed(t, pl, "infra_etcd")
	conf := filepath.Join(pl.Layout.Logs, "nats.conf")
	if strings.Join(nats.Argv, " ") != "/opt/infra/nats-server -c "+conf+" -p 4222" || nats.Container {
		t.Errorf("nats %q container %v", nats.Argv, nats.Container)
	}
	if got := nats.Files[conf]; got != "max_payload: 33554432\njetstream { store_dir: \"/tmp/slurmbench-{job_id}/nats/jetstream\" }\n" {
		t.Errorf("nats.conf %q", got)
	}
	if strings.Join(etcd.Argv, " ") != "/opt/infra/etcd --data-dir /tmp/slurmbench-{job_id}/etcd --listen-client-urls http://0.0.0.0:2379 --advertise-client-urls http://{ip:0}:2379" || etcd.Container {
		t.Errorf("etcd %q", etcd.Argv)
	}
	if nats.Ready == nil || nats.Ready.Port != 4222 || etcd.Ready == nil || etcd.Ready.Port != 2379 {
		t.Errorf("readiness probes %+v %+v", nats.Ready, etcd.Ready)
	}
	writeFile(t, path, string(readTestdata(t, "recipes", "4p1d.yaml"))+"infra: {nats_max_payload_mb: 0}\n")
	if _, err := Build(inputs(p, loadRecipe(t, path))); err == nil || !strings.Contains(err.Error(), "nats_max_payload_mb") {
		t.Errorf("payload 0: %v", err)
	}
}

// TestNginx: nginx on the head balances over the routers' addresses, with
// session affinity when asked.
func TestNginx(t *testing.T) {
	pl := mustBuild(t, "b200.toml", "4p1d.yaml", nil)
	nginx := procNamed(t, pl, "nginx")
	conf := nginx.Files[filepath.Join(pl.Layout.Logs, "nginx.conf")]
	for _, want := range []string{"server {ip:1}:8180;", "server {ip:2}:8180;", "listen 8000;", "client_max_body_size 45m;", "proxy_read_timeout 24h;"} {
		if !strings.Contains(conf, want) {
			t.Errorf("nginx.conf lacks %q:\n%s", want, conf)
		}
	}
	if strings.Contains(conf, "hash ") {
		t.Error("hashing without session affinity")
	}
	if strings.Join(nginx.Argv, " ") != "nginx -c /logs/nginx.conf -g daemon off;" || !reflect.DeepEqual(nginx.Srun.Extra, []string{"--container-remap-root"}) {
		t.Errorf("nginx %q %+v", nginx.Argv, nginx.Srun)
	}
	for i, node := range []int{1, 2} {
		if f := procNamed(t, pl, "frontend_"+string(rune('0'+i))); f.Nodes[0] != node || f.Ports["http"] != 8180 {
			t.Errorf("frontend_%d on %v ports %v", i, f.Nodes, f.Ports)
		}
	}
	text := strings.Replace(string(readTestdata(t, "recipes", "4p1d.yaml")), "frontend:\n", "frontend:\n  nginx_session_affinity: true\n  nginx_session_affinity_header: X-Correlation-ID\n", 1)
	pl = buildText(t, "b200.toml", text)
	conf = procNamed(t, pl, "nginx").Files[filepath.Join(pl.Layout.Logs, "nginx.conf")]
	if !strings.Contains(conf, "map $http_x_correlation_id $frontend_hash_key") || !strings.Contains(conf, "hash $frontend_hash_key consistent;") {
		t.Errorf("affinity nginx.conf:\n%s", conf)
	}
	if n := strings.Count(conf, "keepalive_timeout 600s;"); n != 2 {
		t.Errorf("default keepalive_timeout 600s set %d times, want client and upstream:\n%s", n, conf)
	}
	// frontend.nginx_keepalive_timeout sets both, as srtctl's nginx.conf.j2.
	text = strings.Replace(string(readTestdata(t, "recipes", "4p1d.yaml")), "frontend:\n", "frontend:\n  nginx_keepalive_timeout: 1h30m\n", 1)
	pl = buildText(t, "b200.toml", text)
	conf = procNamed(t, pl, "nginx").Files[filepath.Join(pl.Layout.Logs, "nginx.conf")]
	if n := strings.Count(conf, "keepalive_timeout 1h30m;"); n != 2 || strings.Contains(conf, "600s") {
		t.Errorf("keepalive 1h30m set %d times:\n%s", n, conf)
	}
}

// TestFrontendArgs: router flags keep the recipe's order and spelling,
// true is a bare flag, false and null are left out, the rest is str().
func TestFrontendArgs(t *testing.T) {
	text := strings.Replace(string(readTestdata(t, "recipes", "agg.yaml")), "    router-mode: kv\n",
		"    router-mode: kv\n    active-decode-blocks-threshold: None\n    no-kv-events: true\n    router_temperature: 0.5\n    disabled: false\n    nothing: null\n    ttl: 3600\n", 1)
	pl := buildText(t, "b200.toml", text)
	got := procNamed(t, pl, "frontend_0").Argv
	want := []string{"python3", "-m", "dynamo.frontend", "--http-port=8000", "--router-mode", "kv", "--active-decode-blocks-threshold", "None",
		"--no-kv-events", "--router_temperature", "0.5", "--ttl", "3600"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("frontend argv\n got %q\nwant %q", got, want)
	}
}

// TestSGLangRouter: launch_server workers behind SGLang routers, the
// routers in srtctl's layout: PD lists with bootstrap ports, or
// --worker-urls for aggregated workers.
func TestSGLangRouter(t *testing.T) {
	pl := mustBuild(t, "b200.toml", "1p1d.yaml", nil)
	r := procNamed(t, pl, "router_0")
	want := "python -m sglang_router.launch_router --pd-disaggregation --prefill http://{ip:0}:6100 7200 --decode http://{ip:1}:6100 --host 0.0.0.0 --port 8180 --policy round_robin --log-level warn"
	if got := strings.Join(r.Argv, " "); got != want || r.Nodes[0] != 1 {
		t.Errorf("router on %v: %s", r.Nodes, got)
	}
	for _, p := range pl.Processes {
		if p.Role == plan.RoleInfra || len(p.Setup) > 0 || indexOf(p.Argv, "--dump-config-to") >= 0 {
			t.Errorf("%s: %q setup %q (no NATS/etcd, Dynamo or config dump under the SGLang router)", p.Name, p.Argv, p.Setup)
		}
	}
	text := `name: agg-router
model: {path: dsr1, container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, agg_nodes: 1, agg_workers: 2}
frontend: {type: sglang}
backend:
  type: sglang
  sglang_config:
    aggregated: {tensor-parallel-size: 4}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`
	pl = buildText(t, "b200.toml", text)
	r = procNamed(t, pl, "router_0")
	if got := strings.Join(r.Argv, " "); !strings.HasPrefix(got, "python -m sglang_router.launch_router --worker-urls http://{ip:0}:6100 http://{ip:0}:6132 --host 0.0.0.0 --port 8000") {
		t.Errorf("agg router: %s", got)
	}
	if got := strings.Join(procNamed(t, pl, "agg_w1").Argv, " "); strings.Contains(got, "disaggregation") || !strings.Contains(got, "sglang.launch_server") {
		t.Errorf("agg worker: %s", got)
	}
}

// trtllmRecipeV2 is trtllmRecipe in schema 2.
const trtllmRecipeV2 = `schema: 2
name: trt
model: {path: qwen3.5-fp4, container: dynamo-sglang}
resources: {gpu_type: gb300, gpus_per_node: 4}
frontend: {type: dynamo, enable_multiple_frontends: false}
dynamo: {source: {pypi: 1.3.0}}
srun_options: {mem: "0"}
engine: trtllm
roles:
  prefill:
    nodes: 1
    workers: 1
    gpus: 2
    env: {TLLM_LOG_LEVEL: INFO}
    args: {tensor_parallel_size: 2, kv_cache_config: {free_gpu_memory_fraction: 0.9, dtype: fp8}}
  decode:
    nodes: 2
    workers: 1
    args: {tensor_parallel_size: 8, cuda_graph_config: {batch_sizes: [1, 2, 4]}}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`

// TestTRTLLMSchema2: the schema-2 spelling of a TRT-LLM recipe plans the
// same processes as schema 1; engine.publish_metrics: true adds srtctl
// 2.x's --publish-metrics.
func TestTRTLLMSchema2(t *testing.T) {
	v1, v2 := buildText(t, "gb300.toml", trtllmRecipe), buildText(t, "gb300.toml", trtllmRecipeV2)
	if len(v1.Processes) != len(v2.Processes) {
		t.Fatalf("%d processes from schema 1, %d from schema 2", len(v1.Processes), len(v2.Processes))
	}
	for i, p := range v1.Processes {
		q := v2.Processes[i]
		if p.Name != q.Name || !reflect.DeepEqual(p.Argv, q.Argv) || !reflect.DeepEqual(p.Nodes, q.Nodes) || !reflect.DeepEqual(p.Files, q.Files) || !reflect.DeepEqual(p.Srun, q.Srun) {
			t.Errorf("%s differs:\n v1 %q %v\n v2 %q %v", p.Name, p.Argv, p.Nodes, q.Argv, q.Nodes)
		}
	}
	on := buildText(t, "gb300.toml", strings.Replace(trtllmRecipeV2, "engine: trtllm", "engine: {type: trtllm, publish_metrics: true}", 1))
	for _, name := range []string{"prefill_w0", "decode_w0"} {
		if argv := procNamed(t, on, name).Argv; argv[len(argv)-1] != "--publish-metrics" {
			t.Errorf("%s argv %q lacks --publish-metrics", name, argv)
		}
	}
}

// TestTRTLLMSequentialStart: sequential_node_start N starts the TRT-LLM
// endpoint workers that share a leader node N at a time: each later batch
// waits for the one before to answer /health on its system port; a node
// with one worker, and N = 0, wait for nothing.
func TestTRTLLMSequentialStart(t *testing.T) {
	// 4 one-GPU prefill workers on one 4-GPU node, 1 decode worker on two.
	four := strings.NewReplacer("prefill_workers: 1, gpus_per_prefill: 2", "prefill_workers: 4, gpus_per_prefill: 1",
		"prefill: {tensor_parallel_size: 2,", "prefill: {tensor_parallel_size: 1,").Replace(trtllmRecipe)
	cases := []struct {
		n     string
		after map[string][]string // process → After
	}{
		{"0", map[string][]string{}},
		{"2", map[string][]string{"prefill_w2": {"prefill_w0", "prefill_w1"}, "prefill_w3": {"prefill_w0", "prefill_w1"}}},
		{"1", map[string][]string{"prefill_w1": {"prefill_w0"}, "prefill_w2": {"prefill_w1"}, "prefill_w3": {"prefill_w2"}}},
		{"3", map[string][]string{"prefill_w3": {"prefill_w0", "prefill_w1", "prefill_w2"}}},
	}
	for _, c := range cases {
		t.Run("n="+c.n, func(t *testing.T) {
			pl := buildText(t, "gb300.toml", strings.Replace(four, "  type: trtllm\n", "  type: trtllm\n  sequential_node_start: "+c.n+"\n", 1))
			waitedOn := map[string]bool{}
			for _, p := range pl.Processes {
				if !reflect.DeepEqual(p.After, c.after[p.Name]) {
					t.Errorf("%s starts after %q, want %q", p.Name, p.After, c.after[p.Name])
				}
				for _, dep := range p.After {
					waitedOn[dep] = true
				}
			}
			for _, p := range pl.Processes {
				if p.Role != plan.RolePrefill && p.Role != plan.RoleDecode {
					continue
				}
				want := waitedOn[p.Name]
				if (p.Ready != nil) != want {
					t.Errorf("%s ready probe %+v, want one: %v", p.Name, p.Ready, want)
				}
				if p.Ready != nil && (p.Ready.Path != "/health" || p.Ready.Port != p.Ports["system"] || p.Ready.Node != p.Nodes[0]) {
					t.Errorf("%s probe %+v, want GET /health on its system port %d", p.Name, p.Ready, p.Ports["system"])
				}
			}
		})
	}
	// A plan whose After names no earlier process with a probe is
	// refused (the driver would wait for nothing, or forever).
	pl := buildText(t, "gb300.toml", strings.Replace(four, "  type: trtllm\n", "  type: trtllm\n  sequential_node_start: 2\n", 1))
	for i := range pl.Processes {
		if pl.Processes[i].Name == "prefill_w2" {
			pl.Processes[i].After = []string{"prefill_w3"}
		}
	}
	if err := pl.Validate(); err == nil || !strings.Contains(err.Error(), `process "prefill_w2": waits for "prefill_w3"`) {
		t.Errorf("validate: %v", err)
	}
}
