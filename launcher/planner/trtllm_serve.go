package planner

import "github.com/slurmbench/slurmbench/launcher/plan"

// What frontend.type: trtllm_serve changes outside its engine
// (engine/trtllm_serve.go) and its frontend (infra/trtllm_serve.go), after
// srt-slurm src/srtctl/frontends/trtllm_serve.py@3c0b8d46: no NATS, etcd
// or Dynamo install (its workers are not Dynamo processes), the health
// gate, where a TRT-LLM worker counts as started, and the worker metrics
// a custom benchmark is told about.

// checkTRTLLMServe holds a trtllm_serve recipe to the rules srtctl checks
// when it loads one (TRTLLMServeFrontend.required_backend and validate),
// before any worker is laid out: the workers are trtllm-serve servers, so
// the engine must be TRT-LLM; there is one public endpoint, so nginx and
// its routers must be off (srtctl's default turns them on: the recipe says
// enable_multiple_frontends: false); an aggregated job has one worker.
func (b *builder) checkTRTLLMServe() error {
	r := b.r
	if b.frontendType() != "trtllm_serve" {
		return nil
	}
	if bt := b.backendType(); bt != "trtllm" {
		return b.fail("frontend.type", "trtllm_serve requires backend.type: trtllm (got %q): it runs trtllm-serve workers", bt)
	}
	switch m := r.Frontend.EnableMultipleFrontends; {
	case m == nil:
		// Unset is srtctl's default, true: name the line choosing the frontend.
		return b.fail("frontend.type", "trtllm_serve uses one public endpoint; set frontend.enable_multiple_frontends: false (its default, true, stands up nginx and several routers)")
	case *m:
		return b.fail("frontend.enable_multiple_frontends", "trtllm_serve uses one public endpoint; set it to false (true stands up nginx and several routers)")
	}
	if res := r.Resources; !res.Disaggregated() && deref(res.AggWorkers, 1) != 1 {
		return b.fail("resources.agg_workers", "trtllm_serve aggregate mode requires exactly one aggregated worker, whose trtllm-serve is the public endpoint (got %d)", *res.AggWorkers)
	}
	return nil
}

// trtllmServeHealth is the gate's probe: the public endpoint (the
// aggregated worker or the orchestrator) is ready when GET /health
// answers 200, body unread (TRTLLMServeFrontend.probe_ready: the body may
// be empty, and every worker was gated before the orchestrator started).
// (The job's health package names the kind: health.HTTPOK.)
func trtllmServeHealth() (kind, path string) { return "http-ok", "/health" }

// workerReadyPort is the port a TRT-LLM worker answers GET /health on
// once it serves, which backend.sequential_node_start waits for
// (worker_ready_port): a trtllm-serve worker's own HTTP port, else the
// Dynamo system port.
func (b *builder) workerReadyPort(p *plan.Process) int {
	if b.frontendType() == "trtllm_serve" {
		return p.Ports["http"]
	}
	return p.Ports["system"]
}
