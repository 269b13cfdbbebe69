package recipe

// validateTRTLLMServe holds a frontend.type: trtllm_serve recipe to the
// rules srtctl checks when it loads one (srt-slurm
// src/srtctl/frontends/trtllm_serve.py@3c0b8d46, TRTLLMServeFrontend:
// required_backend and validate): the workers are trtllm-serve servers,
// so the engine must be TRT-LLM; there is one public endpoint, the single
// aggregated worker or the disaggregated orchestrator, so nginx and its
// routers must be off (srtctl's default turns them on, so the recipe says
// enable_multiple_frontends: false); and an aggregated job has exactly one
// worker. srtctl refuses each at load time, before anything starts.
func (r *Recipe) validateTRTLLMServe(add func(field, format string, args ...any)) {
	if r.Frontend.Type != "trtllm_serve" {
		return
	}
	if t := r.Backend.Type; t != "trtllm" {
		add("frontend.type", "trtllm_serve requires backend.type: trtllm (got %q): it runs trtllm-serve workers", t)
	}
	switch m := r.Frontend.EnableMultipleFrontends; {
	case m == nil:
		// Unset is srtctl's default, true: name the line that chose the frontend.
		add("frontend.type", "trtllm_serve uses one public endpoint; set frontend.enable_multiple_frontends: false (its default, true, stands up nginx and several routers)")
	case *m:
		add("frontend.enable_multiple_frontends", "trtllm_serve uses one public endpoint; set it to false (true stands up nginx and several routers)")
	}
	if res := r.Resources; !res.Disaggregated() && res.AggWorkers != nil && *res.AggWorkers != 1 {
		add("resources.agg_workers", "trtllm_serve aggregate mode requires exactly one aggregated worker (its trtllm-serve is the public endpoint), got %d", *res.AggWorkers)
	}
}
