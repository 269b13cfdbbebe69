package launcher

import "fmt"

// endpoint is one logical worker (srtctl's Endpoint): a role, an index and
// the GPUs it spans, possibly across several whole nodes.
type endpoint struct {
	role   Role
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

type roleSpec struct {
	role    Role
	workers int
	gpus    int // per worker
}

// allocate places endpoints on worker nodes the way srtctl's
// allocate_endpoints does (srt-slurm.md §3.3): roles in order, workers of at
// least a node take whole nodes, smaller ones pack onto the current node,
// and a new role starts on a fresh node when one is left, so prefill and
// decode never share a node unless they must.
func allocate(workerNodes []int, gpn int, spread bool, specs []roleSpec) ([]endpoint, error) {
	var eps []endpoint
	next := 0 // index into workerNodes of the current node
	used := 0 // GPUs used on the current node
	for si, spec := range specs {
		if si > 0 && used > 0 && next+1 < len(workerNodes) {
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
