package planner

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// hostSetupTimeout is srtctl's default host_setup.timeout_seconds
// (schema.py HostSetupConfig; docs/schema-reference.md HostSetupConfig).
const hostSetupTimeout = 300

// hostCommandsScript runs a host_setup list in one bash on the node, each
// argument one of the recipe's commands, in order, the first that fails
// ending it with that command's status: what srtctl's `bash -c "c1 && c2"`
// does (do_sweep.py@01aebde8 _run_host_commands joins them with &&), with
// the commands passed as arguments rather than spliced into one string.
const hostCommandsScript = `#!/bin/bash
# slurmbench: a recipe's host_setup commands (or teardown), one per
# argument, run in this shell in order; the first to fail ends it.
for command in "$@"; do
	eval "$command" || exit
done
`

// hostSetupScript is the script's name in the run directory.
const hostSetupScript = "host_setup.sh"

// hostSetup plans srt-slurm 2.x's host_setup (do_sweep.py@01aebde8
// _run_host_setup, _run_host_teardown, _host_setup_nodes): the recipe's
// block, else the cluster's default (a runners.yaml record's
// srt-slurm.host-setup, as srtslurm.yaml's default_host_setup), the
// recipe's block replacing the default whole (so `host_setup: {commands:
// []}` opts a recipe out). Its commands run on each targeted node's bare
// host, one step per node and all at once, before anything of the job
// starts; the teardown after every step has stopped. The nodes are the
// head, the infra node and the worker nodes ("all", the default) or the
// worker nodes only ("workers"). The steps run as the job's user with the
// cluster's environment (env.set), as srtctl's sruns inherit its job's;
// their output is logs/host_setup_<node>.log and
// logs/host_teardown_<node>.log.
func (b *builder) hostSetup() error {
	var setup, teardown []string // argv, nil for none
	env := map[string]string{}
	hs := &plan.HostSetup{TimeoutSeconds: hostSetupTimeout, Nodes: "all"}
	files := map[string]string{}
	commands := func(list []string) []string {
		script := filepath.Join(b.plan.RunDir, hostSetupScript)
		files[script] = hostCommandsScript
		return append([]string{"bash", script}, list...)
	}
	switch h, d := b.r.HostSetup, b.p.HostSetup; {
	case h != nil:
		if len(h.Commands)+len(h.Teardown) == 0 {
			return nil
		}
		if len(h.Commands) > 0 {
			setup = commands(h.Commands)
		}
		if len(h.Teardown) > 0 {
			teardown = commands(h.Teardown)
		}
		hs.Nodes = cmp.Or(h.Nodes, hs.Nodes)
		hs.IgnoreFailure = h.IgnoreFailure
		if h.TimeoutSeconds != nil {
			hs.TimeoutSeconds = *h.TimeoutSeconds
		}
		hs.Source = "recipe host_setup"
	case d != nil:
		ws := b.workspace()
		if ws == "" {
			return fmt.Errorf("profile %s: host_setup (%s) runs %s from the InferenceX checkout: set paths.workspace (or --workspace / GITHUB_WORKSPACE)",
				b.p.Path, b.sourceOf("host_setup"), d.Script)
		}
		setup = []string{"bash", filepath.Join(ws, d.Script)}
		maps.Copy(env, d.Env)
		hs.Nodes = cmp.Or(d.Nodes, hs.Nodes)
		if d.TimeoutSeconds > 0 {
			hs.TimeoutSeconds = d.TimeoutSeconds
		}
		hs.Source = "the cluster's default host_setup: " + b.sourceOf("host_setup")
	default:
		return nil
	}
	nodes := b.hostSetupNodes(hs.Nodes)
	for _, step := range []struct {
		role plan.Role
		argv []string
	}{{plan.RoleHostSetup, setup}, {plan.RoleHostTeardown, teardown}} {
		if step.argv == nil {
			continue
		}
		for _, n := range nodes {
			name := fmt.Sprintf("%s_%d", step.role, n)
			proc := plan.Process{Name: name, Role: step.role, Nodes: []int{n}, Argv: slices.Clone(step.argv),
				Env: maps.Clone(env), Log: b.logPath(name)}
			for k, v := range b.p.Env.Set {
				if _, own := proc.Env[k]; !own {
					proc.Env[k] = v
				}
			}
			if len(files) > 0 {
				proc.Files = maps.Clone(files)
			}
			b.add(proc)
		}
	}
	b.plan.HostSetup = hs
	return nil
}

// hostSetupNodes are srtctl's host_setup targets in its order: head, infra,
// then the worker nodes ("all"), or the worker nodes ("workers"), each once.
func (b *builder) hostSetupNodes(which string) []int {
	var workers []int
	for _, p := range b.plan.Processes {
		if plan.IsWorker(p.Role) {
			workers = append(workers, p.Nodes...)
		}
	}
	slices.Sort(workers)
	nodes := workers
	if which != "workers" {
		nodes = append([]int{b.headNode, b.infraNode}, workers...)
	}
	var out []int
	for _, n := range nodes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// sourceOf names where a profile value came from, or the profile file.
func (b *builder) sourceOf(key string) string {
	if s, ok := b.p.SourceOf(key); ok {
		return s.String()
	}
	return b.p.Path
}
