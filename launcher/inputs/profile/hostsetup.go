package profile

import (
	"maps"

	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// HostSetup is a cluster's default host_setup: a repository hook run on
// each node's bare host before the job's steps, as InferenceX's launcher
// writes srtslurm.yaml's default_host_setup from the record's
// srt-slurm.host-setup (infx/launch/drivers/srt/config.py@eacb6075
// render): one command, the env assignments then `bash
// <workspace>/<script>`, with timeout_seconds and nodes when the record
// sets them. srtctl applies it to a recipe that has no host_setup block of
// its own (core/config.py@020fbc6c resolve_config_with_defaults: the
// recipe's block replaces it whole).
//
// A record's srt-slurm.extra may instead give srtslurm.yaml's
// default_host_setup itself (srtctl's HostSetupConfig): Commands and
// Teardown then run as a recipe's host_setup block does, and Script is "".
type HostSetup struct {
	// Script is relative to the InferenceX checkout (the workspace).
	Script string
	Env    map[string]string
	// Commands and Teardown are default_host_setup's, when Script is "".
	Commands, Teardown []string
	IgnoreFailure      bool
	// TimeoutSeconds is 0 when the record leaves srtctl's default.
	TimeoutSeconds int
	// Nodes is "" (srtctl's default, all), "all" or "workers".
	Nodes string
}

func hostSetupOf(h *runners.HostSetup) *HostSetup {
	return &HostSetup{Script: h.Script, Env: maps.Clone(h.Env), TimeoutSeconds: h.TimeoutS, Nodes: h.Nodes}
}
