package planner

import (
	"fmt"
	"slices"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// endpoint is one logical worker (srtctl's Endpoint): a role, an index and
// the GPUs it spans, possibly across several whole nodes.
type endpoint struct {
	role   plan.Role
	index  int
	gpus   int
	nodes  []int // node indices, leader first
	offset int   // first GPU on a partially used node
}

// partial reports whether the endpoint uses part of one node.
func (e endpoint) partial(gpn int) bool { return e.gpus < gpn }

// gpuSlice is the CUDA_VISIBLE_DEVICES list of a partial endpoint.
func (e endpoint) gpuSlice(gpn int) []int {
	if !e.partial(gpn) {
		return nil
	}
	s := make([]int, e.gpus)
	for i := range s {
		s[i] = e.offset + i
	}
	return s
}

// gpuList is every GPU the endpoint uses on each of its nodes.
func (e endpoint) gpuList(gpn int) []int {
	if s := e.gpuSlice(gpn); s != nil {
		return s
	}
	all := make([]int, gpn)
	for i := range all {
		all[i] = i
	}
	return all
}

type roleSpec struct {
	role    plan.Role
	workers int
	gpus    int // per worker
}

// allocate places endpoints on worker nodes the way srtctl's
// allocate_endpoints does: roles in order, workers of at
// least a node take whole nodes, smaller ones pack onto the current node,
// and a new role starts on a fresh node when one is left, so prefill and
// decode never share a node unless they must, or colocate allows it (vLLM's
// allow_prefill_decode_colocation: roles packed contiguously).
func allocate(workerNodes []int, gpn int, spread, colocate bool, specs []roleSpec) ([]endpoint, error) {
	var eps []endpoint
	next := 0 // index into workerNodes of the current node
	used := 0 // GPUs used on the current node
	for si, spec := range specs {
		if si > 0 && !colocate && used > 0 && next+1 < len(workerNodes) {
			next++
			used = 0
		}
		for w := 0; w < spec.workers; w++ {
			if spec.gpus >= gpn {
				if used > 0 {
					next++
					used = 0
				}
				n := (spec.gpus + gpn - 1) / gpn
				if next+n > len(workerNodes) {
					return nil, fmt.Errorf("%s worker %d needs %d whole nodes from node %d, but only %d worker nodes exist", spec.role, w, n, next, len(workerNodes))
				}
				ep := endpoint{role: spec.role, index: w, gpus: spec.gpus}
				ep.nodes = append(ep.nodes, workerNodes[next:next+n]...)
				eps = append(eps, ep)
				next += n
				continue
			}
			if used+spec.gpus > gpn {
				next++
				used = 0
			}
			if next >= len(workerNodes) {
				return nil, fmt.Errorf("%s worker %d (%d GPUs) does not fit: the %d worker nodes are full", spec.role, w, spec.gpus, len(workerNodes))
			}
			eps = append(eps, endpoint{role: spec.role, index: w, gpus: spec.gpus, nodes: []int{workerNodes[next]}, offset: used})
			used += spec.gpus
			if spread || used == gpn {
				next++
				used = 0
			}
		}
	}
	return eps, nil
}

// colocate is srtctl's should_colocate_prefill_decode: vLLM packs prefill
// and decode contiguously when allow_prefill_decode_colocation is set and
// all workers fit one node, or anywhere with ..._across_nodes.
func (b *builder) colocate(totalGPUs int) bool {
	be := b.r.Backend
	if b.backendType() != "vllm" || be.AllowPDColoc == nil || !*be.AllowPDColoc {
		return false
	}
	return totalGPUs <= b.gpn || be.AllowPDColocX != nil && *be.AllowPDColocX
}

// checkBackendFields refuses backend fields that only some of srtctl's
// backend schemas have, or values outside srtctl's choices.
func (b *builder) checkBackendFields() error {
	be, bt := b.r.Backend, b.backendType()
	vllmOnly := []struct {
		field string
		set   bool
	}{
		{"backend.allow_prefill_decode_colocation", be.AllowPDColoc != nil},
		{"backend.allow_prefill_decode_colocation_across_nodes", be.AllowPDColocX != nil},
		{"backend.dp_launch_mode", be.DPLaunchMode != ""},
		{"backend.set_cuda_visible_devices", be.SetCUDAVisibleDevices != nil},
	}
	for _, f := range vllmOnly {
		if f.set && bt != "vllm" {
			return b.fail(f.field, "a vllm backend field; srtctl's %s backend has none", bt)
		}
	}
	switch be.DPLaunchMode {
	case "", "per_node", "per_gpu":
	default:
		return b.fail("backend.dp_launch_mode", "%q is not per_node or per_gpu", be.DPLaunchMode)
	}
	if be.DPLaunchMode == "per_node" || be.DPLaunchMode == "" {
		// srtctl derives these from the topology and refuses a recipe that
		// sets headless in a DP mode.
		for _, role := range []plan.Role{plan.RolePrefill, plan.RoleDecode, plan.RoleAgg} {
			cfg := b.engineConfig(role)
			if _, dp := lookup(cfg, "data-parallel-size"); dp && bt == "vllm" {
				if _, ok := cfg["headless"]; ok {
					return b.fail("backend.vllm_config."+roleMode(role)+".headless", "cannot be set when dp_launch_mode is per_node: the headless ranks follow from DP × TP × PP")
				}
			}
		}
	}
	return nil
}

func roleMode(r plan.Role) string {
	switch r {
	case plan.RolePrefill:
		return "prefill"
	case plan.RoleDecode:
		return "decode"
	}
	return "aggregated"
}

// placedNode resolves srtctl's node placements (frontend.orchestrator_placement,
// benchmark.client_placement): "head" (or unset) is the head node,
// "first_decode" and "last_decode" the first and last distinct node that
// leads a decode worker, by worker index. Workers must be planned first.
func (b *builder) placedNode(placement, field string) (int, error) {
	switch placement {
	case "", "head":
		return b.headNode, nil
	case "first_decode", "last_decode":
	default:
		return 0, b.fail(field, "%q is not head, first_decode or last_decode", placement)
	}
	var leaders []int
	for w := 0; ; w++ {
		found := false
		for _, p := range b.plan.Processes {
			if p.Role == plan.RoleDecode && p.Worker == w && p.Rank == 0 {
				found = true
				if len(leaders) == 0 || !containsInt(leaders, p.Nodes[0]) {
					leaders = append(leaders, p.Nodes[0])
				}
			}
		}
		if !found {
			break
		}
	}
	if len(leaders) == 0 {
		return 0, b.fail(field, "%q, but the recipe has no decode workers", placement)
	}
	if placement == "first_decode" {
		return leaders[0], nil
	}
	return leaders[len(leaders)-1], nil
}

func containsInt(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// noteIdleNodes records, as a warning on the plan, the worker nodes the
// allocation leaves without a worker, and plans them as srtctl does: it
// asks Slurm for prefill_nodes + decode_nodes (or agg_nodes) nodes
// (schema.py Topology.total_nodes) and packs the workers onto them in
// order (topology.py allocate_endpoints: partial-node workers share a node
// unless resources.spread_workers), so a recipe whose workers' GPUs fill
// fewer nodes than it reserves holds the rest idle for the job's time. No
// srtctl check refuses that (docs/topology.md@1a367815 "Set it explicitly
// when a role should not fill its nodes"; RoleConfig and ResourceConfig in
// schema.py of the v2.43 era validate node counts only as positive or
// colocate).
func (b *builder) noteIdleNodes(workers []int, eps []endpoint) {
	used := map[int]bool{}
	for _, ep := range eps {
		for _, n := range ep.nodes {
			used[n] = true
		}
	}
	var idle []int
	for _, n := range workers {
		if !used[n] {
			idle = append(idle, n)
		}
	}
	if len(idle) == 0 {
		return
	}
	res := b.r.Resources
	field, nodes := "resources.agg_nodes", fmt.Sprintf("agg_nodes %d", deref(res.AggNodes, 1))
	if res.Disaggregated() {
		field = "resources.prefill_nodes"
		nodes = fmt.Sprintf("prefill_nodes %d + decode_nodes %d", deref(res.PrefillNodes, 0), deref(res.DecodeNodes, 0))
	}
	gpus := 0
	for _, ep := range eps {
		gpus += ep.gpus
	}
	// The warning names the file, line and field as an error would.
	w := b.fail(field, "%s = %d worker nodes, but the workers' %d GPUs fill only %d of them (%d GPUs per node): node(s) %s stay idle for the whole job, as srtctl allocates them (resources.spread_workers, the roles' gpus or their node counts would use them)",
		nodes, len(workers), gpus, len(workers)-len(idle), b.gpn, plan.JoinInts(idle))
	b.plan.Recipe.Warnings = append(slices.Clip(b.plan.Recipe.Warnings), w.Error())
}
