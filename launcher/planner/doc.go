// Package planner is the builder: recipe + profile -> plan (Build). It
// sizes the allocation, lays out endpoints and their ports, gives every
// worker the environment they share, and plans the benchmark, the eval,
// telemetry, profiling triggers and provenance. Each engine's worker
// launch is package planner/engine's, and what the job runs around the
// engines (NATS, etcd, Mooncake, frontends, services, Dynamo's setup) is
// package planner/infra's; both read the plan being built only through
// the Builder interface each defines (engines.go and infra_builder.go
// here implement them).
package planner
