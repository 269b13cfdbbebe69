package planner

import "github.com/slurmbench/slurmbench/launcher/plan"

// sequentialStart applies TRT-LLM's backend.sequential_node_start N
// (srtctl's start_all_workers): the endpoints led from one node start N
// at a time, each batch once every endpoint of the one before serves,
// so endpoints sharing a node do not load the model at once; endpoints
// led from different nodes start independently. An endpoint serves when
// its Dynamo system port answers GET /health with 200 (srtctl's
// wait_for_health on the leader's DYN_SYSTEM_PORT, bounded by the health
// check's attempts and interval, whose failure fails the job).
func (b *builder) sequentialStart() error {
	n := b.r.Backend.SequentialNode
	if n == nil || *n == 0 {
		return nil
	}
	const field = "backend.sequential_node_start"
	if bt := b.backendType(); bt != "trtllm" {
		return b.fail(field, "a trtllm backend field; srtctl's %s backend has none", bt)
	}
	if *n < 0 {
		return b.fail(field, "must be 0 (all at once) or the number of workers per node to start at a time, got %d", *n)
	}
	// Worker processes by leader node, in plan order (one per endpoint:
	// TRT-LLM launches each endpoint as one MPI step).
	byNode := map[int][]int{}
	var nodes []int
	for i, p := range b.plan.Processes {
		if !plan.IsWorker(p.Role) {
			continue
		}
		leader := p.Nodes[0]
		if _, ok := byNode[leader]; !ok {
			nodes = append(nodes, leader)
		}
		byNode[leader] = append(byNode[leader], i)
	}
	for _, node := range nodes {
		procs := byNode[node]
		if len(procs) == 1 {
			continue
		}
		for start := *n; start < len(procs); start += *n {
			prev := procs[start-*n : start]
			var names []string
			for _, i := range prev {
				p := &b.plan.Processes[i]
				port := b.workerReadyPort(p)
				if port == 0 {
					return b.fail(field, "worker %s has no Dynamo system port to wait on", p.Name)
				}
				p.Ready = &plan.Probe{Node: p.Nodes[0], Port: port, Path: "/health"}
				names = append(names, p.Name)
			}
			for _, i := range procs[start:min(start+*n, len(procs))] {
				b.plan.Processes[i].After = append([]string(nil), names...)
			}
		}
	}
	return nil
}
