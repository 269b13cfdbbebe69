package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"go.yaml.in/yaml/v3"
)

// NIXLTransferConfig is --kv-transfer-config for srtctl's default
// connector, as Python's json.dumps writes it.
const NIXLTransferConfig = `{"kv_connector": "NixlConnector", "kv_role": "kv_both"}`

// vllmEngine runs vLLM: python3 -m dynamo.vllm under a Dynamo frontend,
// `vllm serve` as its own server (frontend vllm), with data parallelism
// launched one process per node (srtctl's backends/vllm.py, dp_launch_mode
// per_node).
type vllmEngine struct {
	b              Builder
	kvEvents, nixl int
	dpRPC          map[int]int        // node → next DP RPC port
	endpoints      map[string]*vllmEP // per endpoint, set by its first process
}

type vllmEP struct{ nixl, dpRPC int }

func newVLLMEngine(b Builder) *vllmEngine {
	return &vllmEngine{b: b, kvEvents: PortKVEventsBase, nixl: PortVLLMNIXLBase, dpRPC: map[int]int{}, endpoints: map[string]*vllmEP{}}
}

func (e *vllmEngine) PerEndpoint() bool { return false }

// visibleDevices: vLLM is given its GPUs as --device-ids and no
// CUDA_VISIBLE_DEVICES, unless backend.set_cuda_visible_devices asks for
// the mask instead (for vLLM builds without --device-ids; srtctl's
// should_set_cuda_visible_devices).
func (e *vllmEngine) VisibleDevices() bool {
	v := e.b.Recipe().Backend.SetCUDAVisibleDevices
	return v != nil && *v
}

func (e *vllmEngine) nextDPRPC(node int) int {
	p := PortVLLMDPRPCBase + e.dpRPC[node]
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
func (e *vllmEngine) PerGPU(role plan.Role) bool {
	if e.b.Recipe().Backend.DPLaunchMode != "per_gpu" || e.b.FrontendType() == "vllm" || e.b.FrontendType() == FrontendVLLMRouter {
		return false
	}
	_, dp := Lookup(e.b.EngineConfig(role), "data-parallel-size")
	return dp
}

// shape reads the role's parallelism and checks it against the worker's
// GPUs the way srtctl lays vLLM out: DP × TP × PP = the endpoint's GPUs
// whenever data-parallel-size is set, TP × PP = its GPUs otherwise.
func (e *vllmEngine) shape(w *Worker, cfg map[string]recipe.Value) (vllmShape, error) {
	field := "backend.vllm_config." + w.Mode()
	var s vllmShape
	var err error
	// srtctl's DP mode is "data-parallel-size is set", even to 1.
	_, s.dataParallel = Lookup(cfg, "data-parallel-size")
	if s.dp, err = intValue(cfg, "data-parallel-size", 1); err != nil {
		return s, e.b.Fail(field, "%v", err)
	}
	if s.tp, err = intValue(cfg, "tensor-parallel-size", 1); err != nil {
		return s, e.b.Fail(field, "%v", err)
	}
	if s.pp, err = intValue(cfg, "pipeline-parallel-size", 1); err != nil {
		return s, e.b.Fail(field, "%v", err)
	}
	if s.dp < 1 || s.tp < 1 || s.pp < 1 {
		return s, e.b.Fail(field, "data, tensor and pipeline parallel sizes must be positive (got %d, %d, %d)", s.dp, s.tp, s.pp)
	}
	s.replica = s.tp * s.pp
	s.local = w.EndpointGPUs
	if s.local > e.b.GPUsPerNode() {
		s.local = e.b.GPUsPerNode()
	}
	total := w.EndpointGPUs
	s.perGPU = e.PerGPU(w.Role)
	switch {
	case e.b.FrontendType() == "vllm":
		// vllm serve: TP × PP × DP over the worker's GPUs.
		if s.dp*s.replica != total {
			return s, e.b.Fail(field, "data-parallel-size %d × tensor-parallel-size %d × pipeline-parallel-size %d = %d GPUs, but the %s worker has %d",
				s.dp, s.tp, s.pp, s.dp*s.replica, w.Mode(), total)
		}
	case s.perGPU:
		if s.replica != 1 || s.dp != total {
			return s, e.b.Fail(field, "dp_launch_mode per_gpu runs one GPU per DP rank: data-parallel-size %d × tensor-parallel-size %d × pipeline-parallel-size %d must be the %s worker's %d GPUs with TP × PP = 1",
				s.dp, s.tp, s.pp, w.Mode(), total)
		}
	case s.dataParallel:
		if s.dp*s.replica != total {
			return s, e.b.Fail(field, "data-parallel-size %d × tensor-parallel-size %d × pipeline-parallel-size %d = %d GPUs, but the %s worker has %d",
				s.dp, s.tp, s.pp, s.dp*s.replica, w.Mode(), total)
		}
		s.spans = s.replica > s.local
		if s.spans && s.replica%s.local != 0 {
			return s, e.b.Fail(field, "a TP × PP replica of %d GPUs does not divide evenly over nodes of %d GPUs", s.replica, s.local)
		}
		if !s.spans {
			if s.local%s.replica != 0 {
				return s, e.b.Fail(field, "%d GPUs per node are not a multiple of tensor × pipeline parallel size %d", s.local, s.replica)
			}
			s.localDP = s.local / s.replica
		}
	default:
		if s.replica != total {
			return s, e.b.Fail(field, "tensor-parallel-size %d × pipeline-parallel-size %d = %d GPUs, but the %s worker has %d",
				s.tp, s.pp, s.replica, w.Mode(), total)
		}
	}
	return s, nil
}

func (e *vllmEngine) Complete(w *Worker, proc *plan.Process) error {
	b := e.b
	cfg := b.EngineConfig(w.Role)
	s, err := e.shape(w, cfg)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%s/%d", w.Role, w.Index)
	ep := e.endpoints[key]
	// `vllm serve` lays every endpoint out as srtctl's generic
	// endpoints_to_processes does, data parallel or not: one KV-event and
	// one NIXL port per node process from the global counters (node k of
	// an endpoint gets base + k), no DP RPC port of srtctl's.
	serve := b.FrontendType() == "vllm"
	dataParallel := s.dataParallel && !serve
	hybrid := dataParallel && !s.spans && !s.perGPU
	if ep == nil {
		ep = &vllmEP{}
		e.endpoints[key] = ep
		if dataParallel && (!s.spans || s.perGPU) {
			ep.dpRPC = e.nextDPRPC(w.Leader)
			// vLLM binds base + DP rank: one block for the endpoint.
			ep.nixl = e.nixl
			e.nixl += s.dp
		} else if dataParallel {
			// A replica spanning nodes gets no port of its own in srtctl:
			// the recipe's data-parallel-rpc-port, else vLLM's default.
			ep.dpRPC = PortVLLMDPRPCBase
			if n, err := intValue(cfg, "data-parallel-rpc-port", PortVLLMDPRPCBase); err == nil {
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
	scan := PortVLLMScanBase + PortVLLMScanStride*(w.SysPort-PortSystemBase)

	w.KVEvents = kvEvents
	proc.Env["DYN_VLLM_KV_EVENT_PORT"] = strconv.Itoa(kvEvents)
	proc.Env["VLLM_NIXL_SIDE_CHANNEL_PORT"] = strconv.Itoa(nixl)
	proc.Env["VLLM_NIXL_SIDE_CHANNEL_HOST"] = plan.IPPlaceholder(w.Node)
	if w.MultiNode() {
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
		proc.Ports["nixl"] = nixl + w.Rank
	}
	if dataParallel && w.Rank == 0 {
		proc.Ports["dp_rpc"] = ep.dpRPC
	}
	// srtctl allocates a bootstrap port for vLLM prefill processes but
	// never passes it: vLLM binds none.
	delete(proc.Ports, "bootstrap")
	b.MooncakeWorkerEnv(proc, w, true)

	devices := proc.GPUs
	if devices == nil {
		for g := 0; g < b.GPUsPerNode(); g++ {
			devices = append(devices, g)
		}
	}
	leader := plan.IPPlaceholder(w.Leader)
	if b.FrontendType() == "vllm" {
		pop(cfg, "connector")
		return e.serve(w, proc, cfg, devices, leader)
	}
	if b.FrontendType() == FrontendVLLMRouter {
		return e.routed(w, proc, cfg, s, ep.dpRPC, devices, leader)
	}
	conn, err := e.connector(cfg)
	if err != nil {
		return err
	}

	argv := []string{"python3", "-m", "dynamo.vllm", "--model", b.Plan().Model.Path, "--served-model-name", b.Plan().Model.ServedName}
	if w.Role != plan.RoleAgg {
		argv = append(argv, "--disaggregation-mode", w.Mode())
	}
	if conn != "" {
		argv = append(argv, "--kv-transfer-config", conn)
	}
	if !e.VisibleDevices() {
		argv = append(argv, "--device-ids", plan.JoinInts(devices))
	}
	switch {
	case s.perGPU:
		pop(cfg, "data-parallel-rpc-port")
		argv = append(argv, "--data-parallel-rank", strconv.Itoa(w.Rank),
			"--data-parallel-address", leader, "--data-parallel-rpc-port", strconv.Itoa(ep.dpRPC))
	case s.dataParallel:
		// Derived from the topology; the recipe's values give way.
		pop(cfg, "data-parallel-rpc-port", "data-parallel-size-local", "data-parallel-start-rank", "data-parallel-hybrid-lb", "headless")
		rpc := strconv.Itoa(ep.dpRPC)
		if s.spans {
			argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.Nodes)), "--node-rank", strconv.Itoa(w.Rank),
				"--data-parallel-address", leader, "--data-parallel-rpc-port", rpc)
			if w.Rank > 0 {
				argv = append(argv, "--headless")
			}
		} else {
			// Hybrid load balancing: every node's process registers with
			// the frontend itself.
			argv = append(argv, "--data-parallel-size-local", strconv.Itoa(s.localDP),
				"--data-parallel-start-rank", strconv.Itoa(w.Rank*s.localDP),
				"--data-parallel-address", leader, "--data-parallel-rpc-port", rpc, "--data-parallel-hybrid-lb")
		}
	case w.MultiNode():
		argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.Nodes)), "--node-rank", strconv.Itoa(w.Rank))
		if w.Rank > 0 {
			argv = append(argv, "--headless")
		}
	}
	// A host path in srtctl (<log dir>/<node>_config.json, shared by the
	// workers of a node); /logs is that directory in the container.
	argv = append(argv, "--request-plane", b.Plan().Dynamo.RequestPlane, "--dump-config-to", "/logs/"+configDumpName(w))
	kv, err := kvEventsFlag(b, w, kvEvents, vllmKVEventsDefaults)
	if err != nil {
		return err
	}
	proc.Argv = append(append(argv, kv...), recipe.Flags(cfg)...)
	delete(proc.Ports, "http") // dynamo.vllm serves through the Dynamo runtime, not HTTP
	return nil
}

// serve is `vllm serve` as the job's server: aggregated only, the leader
// on the public port, other nodes headless.
func (e *vllmEngine) serve(w *Worker, proc *plan.Process, cfg map[string]recipe.Value, devices []int, leader string) error {
	b := e.b
	if w.Role != plan.RoleAgg {
		return b.Fail("frontend.type", "vllm serve as the frontend runs aggregated workers only")
	}
	// srtctl owns these; the recipe's values give way.
	pop(cfg, "headless", "host", "port", "master-addr", "nnodes", "node-rank")
	if _, ok := Lookup(cfg, "served-model-name"); !ok {
		cfg["served-model-name"] = stringValue(b.Plan().Model.ServedName)
	}
	argv := []string{"vllm", "serve", b.Plan().Model.Path}
	delete(proc.Ports, "http")
	if w.Rank == 0 {
		argv = append(argv, "--host", "0.0.0.0", "--port", strconv.Itoa(plan.PortPublicFrontend))
		proc.Ports["http"] = plan.PortPublicFrontend
	}
	if w.MultiNode() {
		argv = append(argv, "--master-addr", leader, "--nnodes", strconv.Itoa(len(w.Nodes)), "--node-rank", strconv.Itoa(w.Rank))
		if w.Rank > 0 {
			argv = append(argv, "--headless")
			pop(cfg, "api-server-count") // headless ranks run no API server
		}
	}
	if !e.VisibleDevices() {
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
	c := e.b.Recipe().Backend.Connector
	if c == nil {
		if e.b.Recipe().Line("backend.connector") > 0 {
			return "", nil // written as null
		}
		return NIXLTransferConfig, nil
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
		return "", e.b.Fail(field, "%q: slurmbench knows the connectors nixl, lmcache, kvbm, null, or a --kv-transfer-config JSON object", v)
	}
	return v, nil
}

// vllmConnectors are srtctl's connector shorthands as Python's json.dumps
// writes them.
var vllmConnectors = map[string]string{
	"nixl":    NIXLTransferConfig,
	"lmcache": `{"kv_connector": "LMCacheConnectorV1", "kv_role": "kv_both"}`,
	"kvbm":    `{"kv_connector": "DynamoConnector", "kv_connector_module_path": "kvbm.vllm_integration.connector", "kv_role": "kv_both"}`,
}

// stringValue is s as an engine-config string value.
func stringValue(s string) recipe.Value {
	var v recipe.Value
	_ = v.UnmarshalYAML(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	return v
}
