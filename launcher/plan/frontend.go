package plan

// Registrations is how many generate instances each role's workers
// register with a Dynamo frontend, what the health gate must count
// (srtctl's _get_health_expectations): one per endpoint, except vLLM
// data-parallel workers launched per node, which register once per node.
func (p *Plan) Registrations() (prefill, decode int) {
	for _, proc := range p.Processes {
		// vLLM's data-parallel processes each register: one per node with
		// hybrid load balancing, one per DP rank in the per-GPU layout.
		dpProcess := p.Backend == "vllm" && p.Frontend == "dynamo" && (hasArg(proc.Argv, "--data-parallel-hybrid-lb") || hasArg(proc.Argv, "--data-parallel-rank"))
		if proc.Rank != 0 && !dpProcess {
			continue
		}
		switch proc.Role {
		case RolePrefill:
			prefill++
		case RoleDecode, RoleAgg:
			decode++
		}
	}
	return prefill, decode
}

func hasArg(argv []string, a string) bool {
	for _, x := range argv {
		if x == a {
			return true
		}
	}
	return false
}
