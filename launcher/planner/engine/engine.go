// Package engine holds each inference engine's worker launch, srtctl's
// backends/<type>.py: the program, flags, environment, files and srun
// options of one worker process, and the profiler's wrapping of it
// (ProfileWorkers). The builder (package planner) lays out
// endpoints, ports and the environment every worker shares, then hands
// each worker's plan.Process to its Engine to complete; an engine reads
// the recipe and the plan so far only through the Builder it is given.
package engine

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// Engine is one backend's worker launch.
type Engine interface {
	// PerEndpoint reports an MPI launch: one srun spans all nodes of an
	// endpoint with one task per GPU (TRT-LLM), instead of one per node.
	PerEndpoint() bool
	// VisibleDevices reports whether a worker on part of a node gets its GPU
	// slice as CUDA_VISIBLE_DEVICES (vLLM takes --device-ids instead).
	VisibleDevices() bool
	// PerGPU reports one process per GPU for role's endpoints, each its
	// own data-parallel rank (srtctl's deprecated per_gpu vLLM layout).
	PerGPU(role plan.Role) bool
	// Complete completes proc, the process of w: the builder has set its
	// name, nodes, GPUs, ports, mounts, log and shared environment.
	Complete(w *Worker, proc *plan.Process) error
}

// Builder is what an engine reads of the plan being built and asks of
// its builder.
type Builder interface {
	// Recipe is the recipe the plan is built from.
	Recipe() *recipe.Recipe
	// Plan is the plan so far: model, binary, run id, layout and Dynamo
	// settings are final when workers are laid out; ProfileWorkers edits
	// its worker processes in place.
	Plan() *plan.Plan
	// GPUsPerNode is the cluster's GPUs per node.
	GPUsPerNode() int
	// DefaultGPUType is the cluster's resources.gpu_type for a recipe
	// without one (srtslurm.yaml's default_gpu_type), "" for none.
	DefaultGPUType() string
	// HeadNode is the node index of the head (frontend) node.
	HeadNode() int
	// FrontendType is frontend.type: dynamo, sglang or vllm.
	FrontendType() string
	// EngineConfig is role's engine config, a copy the engine may edit.
	EngineConfig(role plan.Role) map[string]recipe.Value
	// RoleEnv is the recipe's environment for role's workers.
	RoleEnv(role plan.Role) recipe.EnvMap
	// Fail is an error naming the recipe field at fault (and its line).
	Fail(field, format string, args ...any) error
	// MooncakeWorkerEnv adds the Mooncake store's worker environment
	// (nothing without one); vllm adds the store config's path.
	MooncakeWorkerEnv(proc *plan.Process, w *Worker, vllm bool)
	// WorkerModelArg is the model path a worker is started with.
	WorkerModelArg() string
	// StartSequentially adds the named process to the workers
	// backend.sequential_node_start batches, in plan order.
	StartSequentially(name string)
}

// New returns the engine of backend.type backend; false when it has none.
func New(backend string, b Builder) (Engine, bool) {
	switch backend {
	case "sglang":
		return &sglangEngine{b: b}, true
	case "vllm":
		return newVLLMEngine(b), true
	case "trtllm":
		return &trtllmEngine{b: b}, true
	case "mock":
		return &mockEngine{b: b}, true
	case "mocker":
		return &mockerEngine{b: b}, true
	}
	return nil, false
}

// Worker is one node process of an endpoint (srtctl's Process), or the
// leader's for an MPI launch, with srtctl's ports: HTTP 6100+32·k per node
// for leaders, bootstrap 7200+k per leader node for prefill endpoints,
// DYN_SYSTEM_PORT from one global counter.
type Worker struct {
	// Role and Index name the endpoint; Nodes are its node indices,
	// leader first; EndpointGPUs its GPUs over all its nodes.
	Role         plan.Role
	Index        int
	Nodes        []int
	EndpointGPUs int
	// Rank is the process's among the endpoint's; Node the node it runs
	// on; Leader the endpoint's first node.
	Rank, Node, Leader int
	// HTTPPort is 0 on followers (srtctl passes --port 0 there).
	// Bootstrap is the prefill endpoint's, on every node process of it
	// (srtctl's endpoints_to_processes allocates it once per endpoint and
	// gives it to each), on the leader only for per-GPU DP ranks.
	HTTPPort, Bootstrap, SysPort int
	// KVEvents is the KV-events port srtctl allocates the process (the
	// engine sets it), whether or not the engine publishes there.
	KVEvents int
}

// Mode is the worker's mode: prefill, decode or aggregated.
func (w *Worker) Mode() string {
	switch w.Role {
	case plan.RolePrefill:
		return "prefill"
	case plan.RoleDecode:
		return "decode"
	}
	return "aggregated"
}

// SrtctlMode is the mode as srtctl names it in files and flags ("agg").
func (w *Worker) SrtctlMode() string {
	if w.Role == plan.RoleAgg {
		return "agg"
	}
	return w.Mode()
}

// MultiNode reports an endpoint over more than one node.
func (w *Worker) MultiNode() bool { return len(w.Nodes) > 1 }

// pop removes keys (in either spelling, '-' or '_') from cfg and returns
// the first value found.
func pop(cfg map[string]recipe.Value, keys ...string) (recipe.Value, bool) {
	var found recipe.Value
	ok := false
	for _, k := range keys {
		for _, spelling := range []string{k, strings.ReplaceAll(k, "-", "_")} {
			if v, has := cfg[spelling]; has {
				if !ok {
					found, ok = v, true
				}
				delete(cfg, spelling)
			}
		}
	}
	return found, ok
}

// Lookup returns an engine-config key's value in either spelling ('-' or
// '_') without removing it; a null value is absent.
func Lookup(cfg map[string]recipe.Value, key string) (recipe.Value, bool) {
	for _, spelling := range []string{key, strings.ReplaceAll(key, "-", "_")} {
		if v, ok := cfg[spelling]; ok && !v.IsNull() {
			return v, true
		}
	}
	return recipe.Value{}, false
}

// intValue is a config value as a whole number (def when absent).
func intValue(cfg map[string]recipe.Value, key string, def int) (int, error) {
	v, ok := Lookup(cfg, key)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v.String())
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not a whole number", key, v.String())
	}
	return n, nil
}

func derefOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
