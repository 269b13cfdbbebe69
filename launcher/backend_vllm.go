package launcher

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/recipe"
	"go.yaml.in/yaml/v3"
)

// vLLM's own ports, srtctl's NodePortAllocator: KV-event publishers and
// NIXL side channels from global counters, a private get_open_port() scan
// base per process, a DP RPC port per endpoint from a per-node counter.
const (
	portVLLMKVEventsBase = 5200
	portVLLMNIXLBase     = 5400
	portVLLMScanBase     = 20000
	portVLLMScanStride   = 50
	portVLLMDPRPCBase    = 8400
)

// nixlTransferConfig is --kv-transfer-config for srtctl's default
// connector, as Python's json.dumps writes it.
const nixlTransferConfig = `{"kv_connector": "NixlConnector", "kv_role": "kv_both"}`

// vllmEngine runs vLLM: python3 -m dynamo.vllm under a Dynamo frontend,
// `vllm serve` as its own server (frontend vllm), with data parallelism
// launched one process per node (srtctl's backends/vllm.py, dp_launch_mode
// per_node).
type vllmEngine struct {
	b                     *builder
	kvEvents, nixl, scans int
	dpRPC                 map[int]int        // node → next DP RPC port
	endpoints             map[string]*vllmEP // per endpoint, set by its first process
}

type vllmEP struct{ nixl, dpRPC int }

func newVLLMEngine(b *builder) *vllmEngine {
	return &vllmEngine{b: b, kvEvents: portVLLMKVEventsBase, nixl: portVLLMNIXLBase, dpRPC: map[int]int{}, endpoints: map[string]*vllmEP{}}
}

func (e *vllmEngine) perEndpoint() bool { return false }

// visibleDevices: vLLM is given its GPUs as --device-ids (srtctl sets no
// CUDA_VISIBLE_DEVICES for it).
func (e *vllmEngine) visibleDevices() bool { return false }

func (e *vllmEngine) nextDPRPC(node int) int {
	p := portVLLMDPRPCBase + e.dpRPC[node]
	e.dpRPC[node]++
	return p
}

// vllmShape is what a role's config says about parallelism.
type vllmShape struct {
	dp, replica, local int // DP size, TP×PP GPUs per replica, GPUs per node
	dataParallel       bool
	spans              bool // one replica spans nodes
	localDP            int  // replicas per node when it does not
}

func (e *vllmEngine) shape(w *workerCtx, cfg map[string]recipe.Value) (vllmShape, error) {
	field := "backend.vllm_config." + w.mode()
	var s vllmShape
	var err error
	if s.dp, err = intValue(cfg, "data-parallel-size", 1); err != nil {
		return s, e.b.fail(field, "%v", err)
	}
	tp, err := intValue(cfg, "tensor-parallel-size", 1)
	if err != nil {
		return s, e.b.fail(field, "%v", err)
	}
	pp, err := intValue(cfg, "pipeline-parallel-size", 1)
	if err != nil {
		return s, e.b.fail(field, "%v", err)
	}
	if s.dp < 1 || tp < 1 || pp < 1 {
		return s, e.b.fail(field, "data, tensor and pipeline parallel sizes must be positive (got %d, %d, %d)", s.dp, tp, pp)
	}
	s.replica = tp * pp
	s.local = w.ep.gpus
	if s.local > e.b.gpn {
		s.local = e.b.gpn
	}
	s.dataParallel = s.dp > 1
	s.spans = s.replica > s.local
	if s.dataParallel && !s.spans {
		if s.local%s.replica != 0 {
			return s, e.b.fail(field, "%d GPUs per node are not a multiple of tensor × pipeline parallel size %d", s.local, s.replica)
		}
		s.localDP = s.local / s.replica
	}
	return s, nil
}

func (e *vllmEngine) worker(w *workerCtx, proc *Process) error {
	b := e.b
	cfg := b.engineConfig(w.ep.role)
	s, err := e.shape(w, cfg)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%s/%d", w.ep.role, w.ep.index)
	ep := e.endpoints[key]
	if ep == nil {
		ep = &vllmEP{}
		e.endpoints[key] = ep
		if s.dataParallel {
			ep.dpRPC = e.nextDPRPC(w.leader)
		}
		if s.dataParallel && !s.spans {
			// vLLM binds base + DP rank: one block for the endpoint.
			ep.nixl = e.nixl
			e.nixl += s.dp
		}
	}
	kvEvents, nixl := e.kvEvents, ep.nixl
	if s.dataParallel && !s.spans {
		e.kvEvents += s.localDP // one publisher per local DP rank
	} else {
		e.kvEvents++
		nixl = e.nixl
		e.nixl++
	}
	scan := portVLLMScanBase + portVLLMScanStride*e.scans
	e.scans++

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
	if s.dataParallel && w.rank == 0 {
		proc.Ports["dp_rpc"] = ep.dpRPC
	}

	devices := w.ep.gpuSlice(b.gpn)
	if devices == nil {
		for g := 0; g < b.gpn; g++ {
			devices = append(devices, g)
		}
	}
	conn, err := e.connector()
	if err != nil {
		return err
	}
	pop(cfg, "connector")
	leader := placeholderIP(w.leader)
	if b.frontendType() == "vllm" {
		return e.serve(w, proc, cfg, devices, leader)
	}

	argv := []string{"python3", "-m", "dynamo.vllm", "--model", b.plan.Model.Path, "--served-model-name", b.plan.Model.ServedName}
	if w.ep.role != RoleAgg {
		argv = append(argv, "--disaggregation-mode", w.mode())
	}
	argv = append(argv, "--device-ids", joinInts(devices))
	switch {
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
	if _, ok := lookup(cfg, "kv-transfer-config"); !ok && conn != "" {
		cfg["kv-transfer-config"] = stringValue(conn)
	}
	proc.Argv = append(argv, recipe.Flags(cfg)...)
	delete(proc.Ports, "http") // dynamo.vllm serves through the Dynamo runtime, not HTTP
	return nil
}

// serve is `vllm serve` as the job's server: aggregated only, the leader
// on the public port, other nodes headless.
func (e *vllmEngine) serve(w *workerCtx, proc *Process, cfg map[string]recipe.Value, devices []int, leader string) error {
	b := e.b
	if w.ep.role != RoleAgg {
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
	argv = append(argv, "--device-ids", joinInts(devices))
	proc.Argv = append(argv, recipe.Flags(cfg)...)
	return nil
}

// connector is the KV connector's --kv-transfer-config: srtctl's default
// is NIXL; `connector: null` turns it off; a JSON object passes through.
func (e *vllmEngine) connector() (string, error) {
	c := e.b.r.Backend.Connector
	if c == nil {
		if e.b.r.Line("backend.connector") > 0 {
			return "", nil // written as null
		}
		return nixlTransferConfig, nil
	}
	v := strings.TrimSpace(*c)
	switch {
	case v == "" || strings.EqualFold(v, "null") || strings.EqualFold(v, "none"):
		return "", nil
	case strings.EqualFold(v, "nixl"):
		return nixlTransferConfig, nil
	case strings.HasPrefix(v, "{"):
		return v, nil
	}
	return "", e.b.fail("backend.connector", "%q: slurmbench knows the nixl connector, null, or a --kv-transfer-config JSON object", v)
}

// stringValue is s as an engine-config string value.
func stringValue(s string) recipe.Value {
	var v recipe.Value
	_ = v.UnmarshalYAML(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
	return v
}
