package plan

import "strings"

// Roles of the steps srt-slurm 2.x's host_setup runs on each node's bare
// host, outside the container (do_sweep.py@01aebde8 _run_host_setup,
// _run_host_teardown): RoleHostSetup before anything else of the job
// starts, RoleHostTeardown after every step has stopped, on failure and
// cancellation too.
const (
	RoleHostSetup    Role = "host_setup"
	RoleHostTeardown Role = "host_teardown"
)

// HostSetup is how the host steps run: all of one kind at once, one per
// node, each within TimeoutSeconds; a node whose setup fails or outlasts
// it fails the run unless IgnoreFailure, and a failed teardown never
// changes the run's outcome.
type HostSetup struct {
	TimeoutSeconds int  `json:"timeout_seconds"`
	IgnoreFailure  bool `json:"ignore_failure,omitempty"`
	// Nodes is the recipe's choice: "all" (head, infra and worker nodes)
	// or "workers".
	Nodes string `json:"nodes"`
	// Source is where the commands came from: the recipe's host_setup, or
	// the cluster's default (a profile's runners.yaml record).
	Source string `json:"source"`
}

// HostSteps are the plan's steps of role r, in plan order.
func (p *Plan) HostSteps(r Role) []Process {
	var out []Process
	for _, proc := range p.Processes {
		if proc.Role == r {
			out = append(out, proc)
		}
	}
	return out
}

func (p *Plan) validateHostSetup(add func(string, ...any)) {
	setup, teardown := p.HostSteps(RoleHostSetup), p.HostSteps(RoleHostTeardown)
	if p.HostSetup == nil {
		if len(setup)+len(teardown) > 0 {
			add("host steps without host_setup settings")
		}
		return
	}
	if p.HostSetup.TimeoutSeconds <= 0 {
		add("host_setup.timeout_seconds: %d is not positive", p.HostSetup.TimeoutSeconds)
	}
	if len(setup)+len(teardown) == 0 {
		add("host_setup: no host steps")
	}
	for _, proc := range append(setup, teardown...) {
		if proc.Container || len(proc.Nodes) != 1 || strings.TrimSpace(proc.Image) != "" {
			add("process %q: a host step runs on one node's bare host, in no container", proc.Name)
		}
	}
}

// writeHostSetup says when the host steps run, on which nodes, within
// what, and where they came from.
func (p *Plan) writeHostSetup(ew *errWriter) {
	hs := p.HostSetup
	if hs == nil {
		return
	}
	nodes := func(r Role) []int {
		var out []int
		for _, proc := range p.HostSteps(r) {
			out = append(out, proc.Nodes...)
		}
		return out
	}
	failure := "a node that fails or times out fails the run"
	if hs.IgnoreFailure {
		failure = "a node that fails or times out is logged (ignore_failure)"
	}
	ew.printf("\nHost setup (%s): on the bare hosts of nodes %v (%s) before anything else, at most %ds per node; %s; teardown on nodes %v after every step stopped, never changing the outcome\n",
		hs.Source, nodes(RoleHostSetup), hs.Nodes, hs.TimeoutSeconds, failure, nodes(RoleHostTeardown))
}
