package planner

import (
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
	"github.com/slurmbench/slurmbench/launcher/planner/infra"
)

// infraBuilder is the builder as the job's services see it
// (infra.Builder).
type infraBuilder struct{ b *builder }

func (i infraBuilder) Plan() *plan.Plan          { return i.b.plan }
func (i infraBuilder) Add(proc plan.Process)     { i.b.add(proc) }
func (i infraBuilder) Recipe() *recipe.Recipe    { return i.b.r }
func (i infraBuilder) Profile() *profile.Profile { return i.b.p }
func (i infraBuilder) Fail(field, format string, args ...any) error {
	return i.b.fail(field, format, args...)
}
func (i infraBuilder) BackendType() string  { return i.b.backendType() }
func (i infraBuilder) FrontendType() string { return i.b.frontendType() }
func (i infraBuilder) EngineConfig(role plan.Role) map[string]recipe.Value {
	return i.b.engineConfig(role)
}
func (i infraBuilder) RecipeEnv() map[string]string { return i.b.recipeEnv() }
func (i infraBuilder) Mounts() []string             { return i.b.mounts() }
func (i infraBuilder) LogPath(name string) string   { return i.b.logPath(name) }
func (i infraBuilder) SrunExtra() []string          { return i.b.srunExtra() }
func (i infraBuilder) PlacedNode(placement, field string) (int, error) {
	return i.b.placedNode(placement, field)
}
func (i infraBuilder) NeedsInfra() bool { return i.b.needsInfra() }
func (i infraBuilder) GPUsPerNode() int { return i.b.gpn }
func (i infraBuilder) InfraNode() int   { return i.b.infraNode }
func (i infraBuilder) HeadNode() int    { return i.b.headNode }
func (i infraBuilder) APINode() int     { return i.b.apiNode }
func (i infraBuilder) SetAPINode(n int) { i.b.apiNode = n }

func (b *builder) addFrontends(head int) error { return infra.AddFrontends(infraBuilder{b}, head) }
func (b *builder) addInfra(node int)           { infra.AddInfra(infraBuilder{b}, node) }
func (b *builder) checkInfra() error           { return infra.CheckInfra(infraBuilder{b}) }
func (b *builder) checkMooncake() error        { return infra.CheckMooncake(infraBuilder{b}) }
func (b *builder) addMooncake(node int)        { infra.AddMooncake(infraBuilder{b}, node) }
func (b *builder) mooncakeWorkerEnv(proc *plan.Process, w *engine.Worker, vllm bool) {
	infra.MooncakeWorkerEnv(infraBuilder{b}, proc, w, vllm)
}
func (b *builder) services() error         { return infra.Services(infraBuilder{b}) }
func (b *builder) prepareDynamo() error    { return infra.PrepareDynamo(infraBuilder{b}) }
func (b *builder) checkSetupScript() error { return infra.CheckSetupScript(infraBuilder{b}) }
func (b *builder) setupSteps(dynamo bool) [][]string {
	return infra.SetupSteps(infraBuilder{b}, dynamo)
}
func (b *builder) engineMounts() []string            { return infra.EngineMounts(infraBuilder{b}) }
func dynamoWheelEnv(d plan.Dynamo) map[string]string { return infra.DynamoWheelEnv(d) }
