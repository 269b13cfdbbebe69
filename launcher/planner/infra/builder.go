// Package infra plans what a job runs around its engines: NATS and etcd,
// the Mooncake master, the frontends (Dynamo's, the SGLang router, nginx
// in front of several), the recipe's own services, and Dynamo's install
// and setup steps in the engine containers. The builder (package planner)
// calls its entry points; it reads the plan being built only through the
// Builder it is given.
package infra

import (
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/engine"
)

// Fixed ports, srtctl's (docs/plan-format.md).
const (
	PortInternalFrontend = 8180 // a frontend behind nginx
	PortNATS             = 4222
	PortEtcd             = 2379
	PortEtcdPeer         = 2380
)

// The names the planning code here uses.
const (
	portPublicFrontend   = plan.PortPublicFrontend
	portInternalFrontend = PortInternalFrontend
	portNATS             = PortNATS
	portEtcd             = PortEtcd
	portEtcdPeer         = PortEtcdPeer
)

// Builder is what the job's services read of the plan being built and ask
// of its builder.
type Builder interface {
	// Plan is the plan so far; Add appends a process to it.
	Plan() *plan.Plan
	Add(proc plan.Process)
	Recipe() *recipe.Recipe
	Profile() *profile.Profile
	// Fail is an error naming the recipe field at fault (and its line).
	Fail(field, format string, args ...any) error
	BackendType() string
	FrontendType() string
	// EngineConfig is role's engine config (a copy).
	EngineConfig(role plan.Role) map[string]recipe.Value
	// RecipeEnv is the recipe's top-level environment as written.
	RecipeEnv() map[string]string
	// Mounts are the container mounts every containerised step gets;
	// LogPath is a step's log; SrunExtra the profile's extra srun options.
	Mounts() []string
	LogPath(name string) string
	SrunExtra() []string
	// PlacedNode is the node a placement keyword names (field in errors).
	PlacedNode(placement, field string) (int, error)
	NeedsInfra() bool
	GPUsPerNode() int
	InfraNode() int
	HeadNode() int
	// APINode is the node serving the public endpoint, which the
	// frontends decide (SetAPINode).
	APINode() int
	SetAPINode(n int)
}

// builder carries the entry points' Builder through the planning code.
type builder struct{ Builder }

// AddFrontends adds the frontends from node head: one, or nginx on head in
// front of several (addFrontends).
func AddFrontends(b Builder, head int) error { return (&builder{b}).addFrontends(head) }

// AddInfra adds NATS and etcd on node, each its own step with a readiness
// probe.
func AddInfra(b Builder, node int) { (&builder{b}).addInfra(node) }

// CheckInfra refuses infra settings NATS would not start with.
func CheckInfra(b Builder) error { return (&builder{b}).checkInfra() }

// CheckMooncake refuses a mooncake_kv_store srtctl would not run.
func CheckMooncake(b Builder) error { return (&builder{b}).checkMooncake() }

// AddMooncake adds mooncake_master on node (the infra node).
func AddMooncake(b Builder, node int) { (&builder{b}).addMooncake(node) }

// MooncakeWorkerEnv adds the Mooncake store's environment to a worker.
func MooncakeWorkerEnv(b Builder, proc *plan.Process, w *engine.Worker, vllm bool) {
	(&builder{b}).mooncakeWorkerEnv(proc, w, vllm)
}

// Services adds the recipe's services, one step per node each runs on.
func Services(b Builder) error { return (&builder{b}).services() }

// PrepareDynamo settles where the install step caches Dynamo and checks
// its source, once, before any process names it.
func PrepareDynamo(b Builder) error { return (&builder{b}).prepareDynamo() }

// CheckSetupScript refuses a setup_script that would leave /configs.
func CheckSetupScript(b Builder) error { return (&builder{b}).checkSetupScript() }

// SetupSteps run in a worker's or Dynamo frontend's container before its
// program: the recipe's setup script, then the Dynamo install when dynamo.
func SetupSteps(b Builder, dynamo bool) [][]string { return (&builder{b}).setupSteps(dynamo) }

// EngineMounts are the mounts of a process in the engine image.
func EngineMounts(b Builder) []string { return (&builder{b}).engineMounts() }

// DynamoWheelEnv is what srtctl exports for a dynamo.wheel install.
func DynamoWheelEnv(d plan.Dynamo) map[string]string { return dynamoWheelEnv(d) }

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}
