package recipe

// frontend.type vllm-router, srt-slurm 2.x's official vLLM Router in front
// of direct `vllm serve` workers, is read as written; the planner checks
// and runs it (planner/infra/vllm_router.go, planner/engine/vllm_router.go).
func init() { frontendTypes["vllm-router"] = true }
