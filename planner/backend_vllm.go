package planner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/plan"

	"github.com/slurmbench/slurmbench/inputs/recipe"
	"go.yaml.in/yaml/v3"
)

// vLLM's own ports, srtctl's NodePortAllocator: KV-event publishers and
// NIXL side channels from global counters, a private get_open_port() scan
// base per process, a DP RPC port per endpoint from a per-node counter.
const (
	portVLLMNIXLBase   = 5400
	portVLLMScanBase   = 20000
	portVLLMScanStride = 50
	portVLLMDPRPCBase  = 8400
)

// nixlTransferConfig is --kv-transfer-config for srtctl's default
// connector, as Python's json.dumps writes it.
const nixlTransferConfig = `{"kv_connector": "NixlConnector", "kv_role": "kv_both"}`

// vllmEngine runs vLLM: python3 -m dynamo.vllm under a Dynamo frontend,
// `vllm serve` as its own server (frontend vllm), with data parallelism
// launched one process per node (srtctl's backends/vllm.py, dp_launch_mode
// per_node).
type vllmEngine struct {
	b              *builder
	kvEvents, nixl int
	dpRPC          map[int]int        // node → next DP RPC port
	endpoints      map[string]*vllmEP // per endpoint, set by its first process
}

type vllmEP struct{ nixl, dpRPC int }

func newVLLMEngine(b *builder) *vllmEngine {
	return &vllmEngine{b: b, kvEvents: portKVEventsBase, nixl: portVLLMNIXLBase, dpRPC: map[int]int{}, endpoints: map[string]*vllmEP{}}
}

func (e *vllmEngine) perEndpoint() bool { return false }

// visibleDevices: vLLM is given its GPUs as --device-ids and no
// CUDA_VISIBLE_DEVICES, unless backend.set_cuda_visible_devices asks for
// the mask instead (for vLLM builds without --device-ids; srtctl's
// should_set_cuda_visible_devices).
func (e *vllmEngine) visibleDevices() bool {
	v := e.b.r.Backend.SetCUDAVisibleDevices
	return v != nil && *v
}

func (e *vllmEngine) nextDPRPC(node int) int {
	p := portVLLMDPRPCBase + e.dpRPC[node]
	e.dpRPC[node]++
	return p
}

// vllmShape is what a role's config says about parallelism.
type vllmShape struct {
	dp, tp, pp     int
	replica, local int // TP×PP GPUs per replica, GPUs per node process
	dataParallel   bool
	perGPU         bool // dp_launch_mode per_gpu: one process per GPU and DP rank
	spans          bool // one replica spans nodes
	localDP        int  // replicas per node when it does not
}

// perGPU reports srtctl's deprecated per_gpu DP layout for role: one
// process per GPU, each its own DP rank (a direct `vllm serve` ignores it).
func (e *vllmEngine) perGPU(role plan.Role) bool {
	if e.b.r.Backend.DPLaunchMode != "per_gpu" || e.b.frontendType() == "vllm" {
		return false
	}
	_, dp := lookup(e.b.engineConfig(role), "data-parallel-size")
	return dp
}

// shape reads the role's parallelism and checks it against the worker's
// GPUs the way srtctl lays vLLM out: DP × TP × PP = the endpoint's GPUs
// whenever data-parallel-size is set, TP × PP = its GPUs otherwise.
func (e *vllmEngine) shape(w *workerCtx, cfg map[string]recipe.Value) (vllmShape, error) {
	field := "backend.vllm_config." + w.mode()
	var s vllmShape
	var err error
	// srtctl's DP mode is "data-parallel-size is set", even to 1.
	_, s.dataParallel = lookup(cfg, "data-parallel-size")
	if s.dp, err = intValue(cfg, "data-parallel-size", 1); err != nil {
		return s, e.b.fail(field, "%v", err)
	}
	if s.tp, err = intValue(cfg, "tensor-parallel-size", 1); err != nil {
		return s, e.b.fail(field, "%v", err)
	}
	if s.pp, err = intValue(cfg, "pipeline-parallel-size", 1); err != nil {
		return s, e.b.fail(field, "%v", err)
	}
	if s.dp < 1 || s.tp < 1 || s.pp < 1 {
		return s, e.b.fail(field, "data, tensor and pipeline parallel sizes must be positive (got %d, %d, %d)", s.dp, s.tp, s.pp)
	}
	s.replica = s.tp * s.pp
	s.local = w.ep.gpus
	if s.local > e.b.gpn {
		s.local = e.b.gpn
	}
	total := w.ep.gpus
	s.perGPU = e.perGPU(w.ep.role)
	switch {
	case e.b.frontendType() == "vllm":
		// vllm serve: TP × PP × DP over the worker's GPUs.
		if s.dp*s.replica != total {
			return s, e.b.fail(field, "data-parallel-size %d × tensor-parallel-size %d × pipeline-parallel-size %d = %d GPUs, but the %s worker has %d",
				s.dp, s.tp, s.pp, s.dp*s.replica, w.mode(), total)
		}
	case s.perGPU:
		if s.replica != 1 || s.dp != total {
			return s, e.b.fail(field, "dp_launch_mode per_gpu runs one GPU per DP rank: data-parallel-size %d × tensor-parallel-size %d × pipeline-parallel-size %d must be the %s worker's %d GPUs with TP × PP = 1",
				s.dp, s.tp, s.pp, w.mode(), total)
		}
	case s.dataParallel:
		if s.dp*s.replica != total {
			return s, e.b.fail(field, "data-parallel-size %d × tensor-parallel-size %d × pipeline-parallel-size %d = %d GPUs, but the %s worker has %d",
				s.dp, s.tp, s.pp, s.dp*s.replica, w.mode(), total)
		}
		s.spans = s.replica > s.local
		if s.spans && s.replica%s.local != 0 {
			return s, e.b.fail(field, "a TP × PP replica of %d GPUs does not divide evenly over nodes of %d GPUs", s.replica, s.local)
		}
		if !s.spans {
			if s.local%s.replica != 0 {
				return s, e.b.fail(field, "%d GPUs per node are not a multiple of tensor × pipeline parallel size %d", s.local, s.replica)
			}
			s.localDP = s.local / s.replica
		}
	default:
		if s.replica != total {
			return s, e.b.fail(field, "tensor-parallel-size %d × pipeline-parallel-size %d = %d GPUs, but the %s worker has %d",
				s.tp, s.pp, s.replica, w.mode(), total)
		}
	}
	return s, nil
}

func (e *vllmEngine) worker(w *workerCtx, proc *plan.Process) error {
	b := e.b
	cfg := b.engineConfig(w.ep.role)
	s, err := e.shape(w, cfg)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%s/%d", w.ep.role, w.ep.index)
	ep := e.endpoints[key]
	// `vllm serve` lays every endpoint out as srtctl's generic
	// endpoints_to_processes does, data parallel or not: one KV-event and
	// one NIXL port per node process from the global counters (node k of
	// an endpoint gets base + k), no DP RPC port of srtctl's.
	serve := b.frontendType() == "vllm"
	dataParallel := s.dataParallel && !serve
	hybrid := dataParallel && !s.spans && !s.perGPU
	if ep == nil {
		ep = &vllmEP{}
		e.endpoints[key] = ep
		if dataParallel && (!s.spans || s.perGPU) {
			ep.dpRPC = e.nextDPRPC(w.leader)
			// vLLM binds base + DP rank: one block for the endpoint.
			ep.nixl = e.nixl
			e.nixl += s.dp
		} else if dataParallel {
			// A replica spanning nodes gets no port of its own in srtctl:
			// the recipe's data-parallel-rpc-port, else vLLM's default.
			ep.dpRPC = portVLLMDPRPCBase
			if n, err := intValue(cfg, "data-parallel-rpc-port", portVLLMDPRPCBase); err == nil {
				ep.dpRPC = n
			}
		}
	}
	kvEvents, nixl := e.kvEvents, ep.nixl
	switch {
	case hybrid:
		e.kvEvents += s.localDP // one publisher per local DP rank
	case s.perGPU:
		e.kvEvents++
	default:
		e.kvEvents++
		nixl = e.nixl
		e.nixl++
	}
	// srtctl's private get_open_port() base, from the process's system port.
	scan := portVLLMScanBase + portVLLMScanStride*(w.sysPort-portSystemBase)

	w.kvEvents = kvEvents
	proc.Env["DYN_VLLM_KV_EVENT_PORT"] = strconv.Itoa(kvEvents)
	proc.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] = strconv.Itoa(nixl)
	proc.Env["VLLM_NIXL_SIDE_CHANNEL_HOST"] = placeholderIP(w.node)
	if w.multiNode() {
		// The ranks of one endpoint rendezvous on VLLM_PORT; a per-process
		// scan base would split them (srtctl unsets it).
		proc.Unset = []string{"VLLM_PORT"}
	} else {
		proc.Env["VLLM_PORT"] = strconv.Itoa(scan)
	}
	proc.Ports["kv_events"] = kvEvents
	proc.Ports["nixl"] = nixl
	if s.perGPU {
		// Each DP rank binds the endpoint's base + its rank.
		proc.Ports["nixl"] = nixl + w.rank
	}
	if dataParallel && w.rank == 0 {
		proc.Ports["dp_rpc"] = ep.dpRPC
	}
	// srtctl allocates a bootstrap port for vLLM prefill processes but
	// never passes it: vLLM binds none.
	delete(proc.Ports, "bootstrap")
	b.mooncakeWorkerEnv(proc, w, true)

	devices := proc.GPUs
	if devices == nil {
		for g := 0; g < b.gpn; g++ {
			devices = append(devices, g)
		}
	}
	leader := placeholderIP(w.leader)
	if b.frontendType() == "vllm" {
		pop(cfg, "connector")
		return e.serve(w, proc, cfg, devices, leader)
	}
	conn, err := e.connector(cfg)
	if err != nil {
		return err
	}

	argv := []string{"python3", "-m", "dynamo.vllm", "--model", b.plan.Model.Path, "--served-model-name", b.plan.Model.ServedName}
	if w.ep.role != plan.RoleAgg {
		argv = append(argv, "--disaggregation-mode", w.mode())
	}
	if conn != "" {
		argv = append(argv, "--kv-transfer-config", conn)
	}
	if !e.visibleDevices() {
		argv = append(argv, "--device-ids", plan.JoinInts(devices))
	}
	switch {
	case s.perGPU:
		pop(cfg, "data-parallel-rpc-port")
		argv = append(argv, "--data-parallel-rank", strconv.Itoa(w.rank),
			"--data-parallel-address", leader, "--data-parallel-rpc-port", strconv.Itoa(ep.dpRPC))
	case s.dataParallel:
		// Derived from the topology; the recipe's values give way.
		pop(cfg, "data-parallel-rpc-port", "data-parallel-size-local", "data-parallel-start-rank", "data-parallel-hybrid-lb", "headless")
		rpc := strconv.Itoa(ep.dpRPC)
		if s.spans {
			argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.ep.nodes)), "--node-rank", strconv.Itoa(w.rank),
				"--data-parallel-address", leader, "--data-parallel-rpc-port", rpc)
			if w.rank > 0 {
				argv = append(argv, "--headless")
			}
		} else {
			// Hybrid load balancing: every node's process registers with
			// the frontend itself.
			argv = append(argv, "--data-parallel-size-local", strconv.Itoa(s.localDP),
				"--data-parallel-start-rank", strconv.Itoa(w.rank*s.localDP),
				"--data-parallel-address", leader, "--data-parallel-rpc-port", rpc, "--data-parallel-hybrid-lb")
		}
	case w.multiNode():
		argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.ep.nodes)), "--node-rank", strconv.Itoa(w.rank))
		if w.rank > 0 {
			argv = append(argv, "--headless")
		}
	}
	// A host path in srtctl (<log dir>/<node>_config.json, shared by the
	// workers of a node); /logs is that directory in the container.
	argv = append(argv, "--request-plane", b.plan.Dynamo.RequestPlane, "--dump-config-to", "/logs/"+configDumpName(w))
	kv, err := b.kvEventsFlag(w, kvEvents, vllmKVEventsDefaults)
	if err != nil {
		return err
	}
	proc.Argv = append(append(argv, kv...), recipe.Flags(cfg)...)
	delete(proc.Ports, "http") // dynamo.vllm serves through the Dynamo runtime, not HTTP
	return nil
}

// serve is `vllm serve` as the job's server: aggregated only, the leader
// on the public port, other nodes headless.
func (e *vllmEngine) serve(w *workerCtx, proc *plan.Process, cfg map[string]recipe.Value, devices []int, leader string) error {
	b := e.b
	if w.ep.role != plan.RoleAgg {
		return b.fail("frontend.type", "vllm serve as the frontend runs aggregated workers only")
	}
	// srtctl owns these; the recipe's values give way.
	pop(cfg, "headless", "host", "port", "master-addr", "nnodes", "node-rank")
	if _, ok := lookup(cfg, "served-model-name"); !ok {
		cfg["served-model-name"] = stringValue(b.plan.Model.ServedName)
	}
	argv := []string{"vllm", "serve", b.plan.Model.Path}
	delete(proc.Ports, "http")
	if w.rank == 0 {
		argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(portPublicFrontend))
		proc.Ports["http"] = portPublicFrontend
	}
	if w.multiNode() {
		argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.ep.nodes)), "--node-rank", strconv.Itoa(w.rank))
		if w.rank > 0 {
			argv = append(argv, "--headless")
			pop(cfg, "api-server-count") // headless ranks run no API server
		}
	}
	if !e.visibleDevices() {
		argv = append(argv, "--device-ids", plan.JoinInts(devices))
	}
	proc.Argv = append(argv, recipe.Flags(cfg)...)
	return nil
}

// connector is the --kv-transfer-config srtctl passes before the engine
// config: the role's `connector` (popped from cfg), else the backend's
// (default nixl); a known name expands to its JSON, null/none turn it off,
// anything else passes through as the JSON it is taken to be.
func (e *vllmEngine) connector(cfg map[string]recipe.Value) (string, error) {
	var c string
	if v, ok := pop(cfg, "connector"); ok {
		if v.IsNull() {
			c = ""
		} else {
			c = v.String()
		}
		if c == "" {
			// A null per-mode connector falls back to the backend's.
			return e.backendConnector()
		}
	} else {
		return e.backendConnector()
	}
	return e.expandConnector("backend.vllm_config.connector", c)
}

func (e *vllmEngine) backendConnector() (string, error) {
	c := e.b.r.Backend.Connector
	if c == nil {
		if e.b.r.Line("backend.connector") > 0 {
			return "", nil // written as null
		}
		return nixlTransferConfig, nil
	}
	return e.expandConnector("backend.connector", *c)
}

func (e *vllmEngine) expandConnector(field, c string) (string, error) {
	v := strings.TrimSpace(c)
	if v == "" || v == "null" || v == "none" {
		return "", nil
	}
	if preset, ok := vllmConnectors[strings.ToLower(v)]; ok {
		return preset, nil
	}
	if !strings.HasPrefix(v, "{") {
		return "", e.b.fail(field, "%q: slurmbench knows the connectors nixl, lmcache, kvbm, null, or a --kv-transfer-config JSON object", v)
	}
	return v, nil
}

// vllmConnectors are srtctl's connector shorthands as Python's json.dumps
// writes them.
var vllmConnectors = map[string]string{
	"nixl":    nixlTransferConfig,
	"lmcache": `{"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}`,
	"kvbm":    `{"kv_connector": "DynamoConnector", "kv_connector_module_path": "kvbm.vllm_integration.connector", "kv_role": "kv_both"}`,
}

// stringValue is s as an engine-config string value.
func stringValue(s string) recipe.Value {
	var v recipe.Value
	_ = v.UnmarshalYAML(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	return v
}
