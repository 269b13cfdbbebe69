package planner

import (
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
)

// engineBuilder is the builder as its engines see it (engine.Builder).
type engineBuilder struct{ b *builder }

func (e engineBuilder) Recipe() *recipe.Recipe { return e.b.r }
func (e engineBuilder) Plan() *plan.Plan       { return e.b.plan }
func (e engineBuilder) GPUsPerNode() int       { return e.b.gpn }
func (e engineBuilder) DefaultGPUType() string { return e.b.p.Defaults.GPUType }
func (e engineBuilder) HeadNode() int          { return e.b.headNode }
func (e engineBuilder) FrontendType() string   { return e.b.frontendType() }
func (e engineBuilder) EngineConfig(role plan.Role) map[string]recipe.Value {
	return e.b.engineConfig(role)
}
func (e engineBuilder) RoleEnv(role plan.Role) recipe.EnvMap { return e.b.roleEnv(role) }
func (e engineBuilder) Fail(field, format string, args ...any) error {
	return e.b.fail(field, format, args...)
}
func (e engineBuilder) MooncakeWorkerEnv(proc *plan.Process, w *engine.Worker, vllm bool) {
	e.b.mooncakeWorkerEnv(proc, w, vllm)
}
func (e engineBuilder) WorkerModelArg() string { return e.b.workerModelArg() }
func (e engineBuilder) StartSequentially(name string) {
	e.b.seqStart = append(e.b.seqStart, name)
}

// engine is the recipe's backend's worker launch.
func (b *builder) engine() (engine.Engine, error) {
	if eng, ok := engine.New(b.backendType(), engineBuilder{b}); ok {
		return eng, nil
	}
	return nil, b.fail("backend.type", "%q has no worker command", b.backendType())
}

// checkKVEvents refuses a backend.kv_events_config srtctl's schema would
// not take (engine.CheckKVEvents).
func (b *builder) checkKVEvents() error {
	return engine.CheckKVEvents(engineBuilder{b}, b.backendType())
}

// lookup returns an engine-config key's value in either spelling.
func lookup(cfg map[string]recipe.Value, key string) (recipe.Value, bool) {
	return engine.Lookup(cfg, key)
}

// newWorker is process rank of endpoint ep, on node, with system port sys.
func newWorker(ep endpoint, rank, node, leader, sys int) engine.Worker {
	return engine.Worker{Role: ep.role, Index: ep.index, Nodes: ep.nodes, EndpointGPUs: ep.gpus,
		Rank: rank, Node: node, Leader: leader, SysPort: sys}
}
