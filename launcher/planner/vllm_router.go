package planner

import (
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
	"github.com/slurmbench/slurmbench/launcher/planner/infra"
)

// routerLocalDP reports whether every node process of ep, not only its
// leader, serves its own API for a vLLM Router (engine.RouterLocalDP).
func (b *builder) routerLocalDP(ep endpoint) bool {
	if b.frontendType() != engine.FrontendVLLMRouter || b.backendType() != "vllm" {
		return false
	}
	return engine.RouterLocalDP(b.engineConfig(ep.role), b.r.Backend.DPLaunchMode, len(ep.nodes), min(ep.gpus, b.gpn))
}

// vllmRouterHealth sets the gate behind a vLLM Router: its /workers
// counts (the sglang-router probe: both routers report the same stats),
// then every routed worker's /health (infra.VLLMRouterHealth).
func (b *builder) vllmRouterHealth(h *plan.Health) {
	h.Kind, h.Path = "sglang-router", "/workers"
	h.Prefill, h.Decode, h.Workers = infra.VLLMRouterHealth(infraBuilder{b})
}
