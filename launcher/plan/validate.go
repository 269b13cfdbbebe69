package plan

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
)

// Validate checks the plan's invariants. Build calls it; the driver calls it
// again on the plan file it is handed, so a hand-edited plan cannot start a
// half-valid job.
func (p *Plan) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if p.Version != PlanVersion {
		add("plan version %d: this slurmbench reads version %d", p.Version, PlanVersion)
	}
	if m := p.Slurm.TimeLimitMinutes; m < 0 || m > profile.MaxTimeLimitMinutes {
		add("slurm.time_limit_minutes: %d is outside 0..%d", m, profile.MaxTimeLimitMinutes)
	}
	for _, path := range []struct{ name, value string }{
		{"run_dir", p.RunDir}, {"plan_file", p.PlanFile}, {"binary", p.Binary}, {"layout.logs", p.Layout.Logs},
	} {
		if !filepath.IsAbs(path.value) {
			add("%s: %q is not absolute", path.name, path.value)
		}
	}
	if p.Nodes <= 0 {
		add("nodes: %d", p.Nodes)
	}

	if p.GPUs.Total <= 0 || p.GPUs.Total > p.Nodes*p.GPUsPerNode {
		add("gpus: %d total on %d nodes × %d", p.GPUs.Total, p.Nodes, p.GPUsPerNode)
	}
	names := map[string]bool{}
	ready := map[string]bool{}
	logs := map[string]bool{}
	type nodePort struct{ node, port int }
	ports := map[nodePort]string{}
	gpus := map[[2]int]string{}
	for _, proc := range p.Processes {
		if proc.Name == "" || strings.ContainsAny(proc.Name, "/ \x00") {
			add("process %q: bad name", proc.Name)
		}
		if names[proc.Name] {
			add("process %q: name used twice", proc.Name)
		}
		names[proc.Name] = true
		if proc.Ready != nil {
			ready[proc.Name] = true
		}
		if logs[proc.Log] {
			add("process %q: log %s shared with another process", proc.Name, proc.Log)
		}
		logs[proc.Log] = true
		if len(proc.Argv) == 0 {
			add("process %q: empty argv", proc.Name)
		}
		if IsShellString(proc.Argv) {
			add("process %q: argv runs a shell string (%q); plans hold argv only", proc.Name, strings.Join(proc.Argv, " "))
		}
		for i, step := range proc.Setup {
			if len(step) == 0 || IsShellString(step) {
				add("process %q: setup step %d is empty or a shell string", proc.Name, i+1)
			}
		}
		for path := range proc.Files {
			if !filepath.IsAbs(path) || !strings.HasPrefix(filepath.Clean(path)+"/", p.RunDir+"/") {
				add("process %q: file %s is not inside the run directory", proc.Name, path)
			}
		}
		if len(proc.Nodes) == 0 {
			add("process %q: no node", proc.Name)
		}
		for _, n := range proc.Nodes {
			if n < 0 || n >= p.Nodes {
				add("process %q: node %d outside the allocation of %d", proc.Name, n, p.Nodes)
			}
			for kind, port := range proc.Ports {
				if port == 0 {
					continue
				}
				k := nodePort{n, port}
				if other, dup := ports[k]; dup {
					add("process %q: port %d (%s) on node %d already used by %s", proc.Name, port, kind, n, other)
				}
				ports[k] = proc.Name
			}
			for _, g := range proc.GPUs {
				if g < 0 || g >= p.GPUsPerNode {
					add("process %q: GPU %d outside 0..%d", proc.Name, g, p.GPUsPerNode-1)
				}
				k := [2]int{n, g}
				if other, dup := gpus[k]; dup {
					add("process %q: GPU %d on node %d already given to %s", proc.Name, g, n, other)
				}
				gpus[k] = proc.Name
			}
		}
	}
	// A worker (or a frontend: trtllm-serve's disaggregated orchestrator)
	// waits only for earlier workers that have an HTTP probe, so the
	// driver's start order exists and every wait can end.
	seen := map[string]Process{}
	for _, proc := range p.Processes {
		for _, a := range proc.After {
			q, ok := seen[a]
			switch {
			case !IsWorker(proc.Role) && proc.Role != RoleFrontend:
				add("process %q: only workers and frontends wait for others (after %q)", proc.Name, a)
			case !ok || !IsWorker(q.Role):
				add("process %q: waits for %q, which is no earlier worker", proc.Name, a)
			case q.Ready == nil || q.Ready.Path == "":
				add("process %q: waits for %q, which has no HTTP readiness probe", proc.Name, a)
			}
		}
		seen[proc.Name] = proc
	}
	for _, pt := range p.Points {
		if pt.Concurrency <= 0 || pt.NumPrompts <= 0 {
			add("point concurrency %d: %d prompts", pt.Concurrency, pt.NumPrompts)
		}
	}
	p.validateServices(add)
	p.validateHostSetup(add)
	if p.Benchmark.Type == "" && !p.Eval.Enabled {
		add("nothing to run: no benchmark points and no eval")
	}
	return errors.Join(errs...)
}

// isShellString reports an argv that hands a string to a shell: the one
// shape slurmbench never builds (srtctl's `bash -c "export ... && ..."`).
func IsShellString(argv []string) bool {
	for i := 0; i+1 < len(argv); i++ {
		base := filepath.Base(argv[i])
		if (base == "bash" || base == "sh" || base == "dash" || base == "zsh") && argv[i+1] == "-c" {
			return true
		}
	}
	return false
}
