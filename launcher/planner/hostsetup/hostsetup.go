// Package hostsetup plans srt-slurm 2.x's host_setup: the commands a
// recipe (or the cluster's default) runs on each node's bare host before
// anything of the job starts, and its teardown after everything stopped
// (do_sweep.py@01aebde8 _run_host_setup, _run_host_commands,
// _run_host_teardown, _host_setup_nodes). The builder hands it the nodes
// and paths it decided; it returns the host steps.
package hostsetup

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// DefaultTimeout is srtctl's default host_setup.timeout_seconds
// (schema.py HostSetupConfig; docs/schema-reference.md HostSetupConfig).
const DefaultTimeout = 300

// CommandsScript runs a host_setup list in one bash on the node, each
// argument one of the recipe's commands, in order, the first that fails
// ending it with that command's status: what srtctl's `bash -c "c1 && c2"`
// does (do_sweep.py@01aebde8 _run_host_commands joins them with &&), with
// the commands passed as arguments rather than spliced into one string.
const CommandsScript = `#!/bin/bash
# slurmbench: a recipe's host_setup commands (or teardown), one per
# argument, run in this shell in order; the first to fail ends it.
for command in "$@"; do
	eval "$command" || exit
done
`

// ScriptName is the script's name in the run directory.
const ScriptName = "host_setup.sh"

// Input is what planning host_setup takes from the builder.
type Input struct {
	// Recipe is the recipe's host_setup block (nil: none), Default the
	// cluster's (a profile's runners.yaml record) and DefaultSource where
	// that came from.
	Recipe        *recipe.HostSetup
	Default       *profile.HostSetup
	DefaultSource string
	// Workspace is the InferenceX checkout a default's script is under;
	// ProfilePath names the profile in errors.
	Workspace, ProfilePath string
	// RunDir holds the commands script; Env is the cluster's environment
	// (env.set), which the host steps get as srtctl's sruns inherit their
	// job's.
	RunDir string
	Env    map[string]string
	// Head, Infra and Workers are the allocation's node indices by role.
	Head, Infra int
	Workers     []int
	// LogPath is a step's log by its name.
	LogPath func(name string) string
}

// Plan is host_setup's steps: one per targeted node and kind (RoleHostSetup,
// RoleHostTeardown), and how they run; nil, nil when there is nothing to
// run. The recipe's block replaces the cluster's default whole (srtctl
// core/config.py@020fbc6c resolve_config_with_defaults), so `host_setup:
// {commands: []}` opts a recipe out; a block is enabled when it has
// commands or a teardown (schema.py HostSetupConfig.enabled). The default
// runs `bash <workspace>/<script>` with its env, as InferenceX's launcher
// writes default_host_setup (infx/launch/drivers/srt/config.py@eacb6075).
// The nodes are the head, the infra node and the worker nodes ("all", the
// default) or the worker nodes only ("workers"), in that order, each once.
func Plan(in Input) ([]plan.Process, *plan.HostSetup, error) {
	var setup, teardown []string // argv, nil for none
	env := map[string]string{}
	hs := &plan.HostSetup{TimeoutSeconds: DefaultTimeout, Nodes: "all"}
	files := map[string]string{}
	commands := func(list []string) []string {
		script := filepath.Join(in.RunDir, ScriptName)
		files[script] = CommandsScript
		return append([]string{"bash", script}, list...)
	}
	h, d, source := in.Recipe, in.Default, "recipe host_setup"
	if h == nil && d != nil && d.Script == "" {
		// srtslurm.yaml's default_host_setup as a record's extra writes
		// it: the same block a recipe's host_setup is.
		h = &recipe.HostSetup{Commands: d.Commands, Teardown: d.Teardown, Nodes: d.Nodes, IgnoreFailure: d.IgnoreFailure}
		if d.TimeoutSeconds > 0 {
			h.TimeoutSeconds = &d.TimeoutSeconds
		}
		source = "the cluster's default host_setup: " + in.DefaultSource
	}
	switch {
	case h != nil:
		if len(h.Commands)+len(h.Teardown) == 0 {
			return nil, nil, nil
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
		hs.Source = source
	case d != nil:
		if in.Workspace == "" {
			return nil, nil, fmt.Errorf("profile %s: host_setup (%s) runs %s from the InferenceX checkout: set paths.workspace (or --workspace / GITHUB_WORKSPACE)",
				in.ProfilePath, in.DefaultSource, d.Script)
		}
		setup = []string{"bash", filepath.Join(in.Workspace, d.Script)}
		maps.Copy(env, d.Env)
		hs.Nodes = cmp.Or(d.Nodes, hs.Nodes)
		if d.TimeoutSeconds > 0 {
			hs.TimeoutSeconds = d.TimeoutSeconds
		}
		hs.Source = "the cluster's default host_setup: " + in.DefaultSource
	default:
		return nil, nil, nil
	}
	var procs []plan.Process
	for _, step := range []struct {
		role plan.Role
		argv []string
	}{{plan.RoleHostSetup, setup}, {plan.RoleHostTeardown, teardown}} {
		if step.argv == nil {
			continue
		}
		for _, n := range Nodes(hs.Nodes, in.Head, in.Infra, in.Workers) {
			name := fmt.Sprintf("%s_%d", step.role, n)
			proc := plan.Process{Name: name, Role: step.role, Nodes: []int{n}, Argv: slices.Clone(step.argv),
				Env: maps.Clone(env), Log: in.LogPath(name)}
			for k, v := range in.Env {
				if _, own := proc.Env[k]; !own {
					proc.Env[k] = v
				}
			}
			if len(files) > 0 {
				proc.Files = maps.Clone(files)
			}
			procs = append(procs, proc)
		}
	}
	return procs, hs, nil
}

// Nodes are srtctl's host_setup targets in its order: head, infra, then
// the worker nodes in allocation order ("all"), or the worker nodes
// ("workers"), each once.
func Nodes(which string, head, infra int, workers []int) []int {
	ws := slices.Clone(workers)
	slices.Sort(ws)
	nodes := ws
	if which != "workers" {
		nodes = append([]int{head, infra}, ws...)
	}
	var out []int
	for _, n := range nodes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Add plans host_setup into pl, whose worker processes are placed: the
// recipe's block rec, else profile p's default; head and infra are the
// builder's node indices, workspace the InferenceX checkout. Each host step
// gets its log under pl's logs, one task on its node.
func Add(pl *plan.Plan, rec *recipe.HostSetup, p *profile.Profile, workspace string, head, infra int) error {
	var workers []int
	for _, proc := range pl.Processes {
		if plan.IsWorker(proc.Role) {
			workers = append(workers, proc.Nodes...)
		}
	}
	src := p.Path
	if s, ok := p.SourceOf("host_setup"); ok {
		src = s.String()
	}
	procs, hs, err := Plan(Input{Recipe: rec, Default: p.HostSetup, DefaultSource: src, Workspace: workspace, ProfilePath: p.Path,
		RunDir: pl.RunDir, Env: p.Env.Set, Head: head, Infra: infra, Workers: workers,
		LogPath: func(name string) string { return filepath.Join(pl.Layout.Logs, name+".log") }})
	if err != nil || hs == nil {
		return err
	}
	for _, proc := range procs {
		proc.Srun.NTasks = 1
		pl.Processes = append(pl.Processes, proc)
	}
	pl.HostSetup = hs
	return nil
}
