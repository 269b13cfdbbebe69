package engine

import (
	"strconv"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// FrontendVLLMRouter is frontend.type vllm-router: the official vLLM Router
// (package infra starts it) in front of direct `vllm serve` workers, each
// on its own allocated HTTP port, aggregated or prefill/decode, without
// Dynamo, NATS or etcd.
const FrontendVLLMRouter = "vllm-router"

// RouterLocalDP reports whether a vllm-router worker's endpoint runs one
// routable `vllm serve` per node, each its node-local share of the
// data-parallel ranks behind its own API (vLLM's hybrid load balancing):
// a multi-node endpoint with data-parallel-size in dp_launch_mode per_node
// whose TP × PP replica fits on one node. Every node process of such an
// endpoint then gets an HTTP port, not only the leader (srt-slurm
// backends/vllm.py of the v2.43 era, build_worker_command's
// is_router_local_dp and _dp_per_node_endpoints_to_processes).
func RouterLocalDP(cfg map[string]recipe.Value, dpLaunchMode string, nodes, localGPUs int) bool {
	if nodes < 2 || dpLaunchMode == "per_gpu" {
		return false
	}
	if _, dp := Lookup(cfg, "data-parallel-size"); !dp {
		return false
	}
	tp, err1 := intValue(cfg, "tensor-parallel-size", 1)
	pp, err2 := intValue(cfg, "pipeline-parallel-size", 1)
	return err1 == nil && err2 == nil && tp*pp <= localGPUs
}

// routed completes a vllm-router worker: `vllm serve` on the process's
// allocated HTTP port, the way srtctl's direct-worker branch builds it
// (srt-slurm backends/vllm.py build_worker_command, v2.43 era; see
// docs/recipes.md § vLLM Router):
//
//   - srtctl owns headless, host, port, master-addr, nnodes and node-rank
//     and drops the recipe's; served-model-name defaults to the model's;
//   - a prefill or decode worker gets --kv-transfer-config for the
//     backend's connector (NIXL unless set) unless its args name one; an
//     aggregated worker only when its role names a connector;
//   - the leader, and every node of a router-local DP endpoint, binds
//     --host 0.0.0.0 --port <http>; a router-local DP node runs its
//     node-local ranks with --data-parallel-size-local, its start rank,
//     the leader's address and RPC port and --data-parallel-hybrid-lb;
//     any other multi-node endpoint runs vLLM's own multi-node serve
//     (--master-addr, --nnodes, --node-rank, --headless on followers, and
//     the DP address and RPC port when data parallel);
//   - then --device-ids and the role's args.
//
// dp_launch_mode per_gpu with data parallelism is refused as srtctl
// refuses it (PerGPU never lays such a worker out per GPU): those
// processes are Dynamo registrations, not routable servers.
func (e *vllmEngine) routed(w *Worker, proc *plan.Process, cfg map[string]recipe.Value, s vllmShape, dpRPC int, devices []int, leader string) error {
	b := e.b
	if b.Recipe().Backend.DPLaunchMode == "per_gpu" && s.dataParallel {
		return b.Fail("backend.dp_launch_mode", "frontend.type: vllm-router with data-parallel-size requires backend.dp_launch_mode: per_node; deprecated per_gpu processes are Dynamo registrations, not independently routable vLLM API servers")
	}
	pop(cfg, "headless", "host", "port", "master-addr", "nnodes", "node-rank")
	if _, ok := Lookup(cfg, "served-model-name"); !ok {
		cfg["served-model-name"] = stringValue(b.Plan().Model.ServedName)
	}
	roleConn, named := pop(cfg, "connector")
	if w.Role != plan.RoleAgg || named && !roleConn.IsNull() {
		conn, err := e.backendConnector()
		if named && !roleConn.IsNull() && roleConn.String() != "" {
			conn, err = e.expandConnector("backend.vllm_config."+w.Mode()+".connector", roleConn.String())
		}
		if err != nil {
			return err
		}
		if _, set := Lookup(cfg, "kv-transfer-config"); !set && conn != "" {
			cfg["kv-transfer-config"] = stringValue(conn)
		}
	}
	// The bootstrap port a static P/D router is given is the prefill's NIXL
	// side channel (vllm_router.py worker_bootstrap_port); Complete set it.
	argv := []string{"vllm", "serve", b.Plan().Model.Path}
	localDP := RouterLocalDP(b.EngineConfig(w.Role), b.Recipe().Backend.DPLaunchMode, len(w.Nodes), s.local)
	if w.Rank == 0 || localDP {
		argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(w.HTTPPort))
	}
	switch {
	case localDP:
		pop(cfg, "data-parallel-size-local", "data-parallel-start-rank", "data-parallel-address", "data-parallel-rpc-port", "data-parallel-hybrid-lb")
		argv = append(argv, "--data-parallel-size-local", strconv.Itoa(s.localDP),
			"--data-parallel-start-rank", strconv.Itoa(w.Rank*s.localDP),
			"--data-parallel-address", leader, "--data-parallel-rpc-port", strconv.Itoa(dpRPC), "--data-parallel-hybrid-lb")
	case w.MultiNode():
		argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.Nodes)), "--node-rank", strconv.Itoa(w.Rank))
		if s.dataParallel {
			pop(cfg, "data-parallel-address", "data-parallel-rpc-port")
			argv = append(argv, "--data-parallel-address", leader, "--data-parallel-rpc-port", strconv.Itoa(dpRPC))
		}
		if w.Rank > 0 {
			argv = append(argv, "--headless")
			pop(cfg, "api-server-count") // headless ranks run no API server
		}
	}
	if !e.VisibleDevices() {
		argv = append(argv, "--device-ids", plan.JoinInts(devices))
	}
	if w.Rank > 0 && !localDP {
		delete(proc.Ports, "http")
	}
	proc.Argv = append(argv, recipe.Flags(cfg)...)
	return nil
}
