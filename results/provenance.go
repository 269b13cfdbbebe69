package results

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/internal/fingerprint"
)

// Runtime is what a run's steps ran, folded from the fingerprints their
// `slurmbench exec` shims wrote inside each container: the facts srtctl's
// fingerprint step gathers (packages, GPUs, driver, environment), without
// Python in the image.
type Runtime struct {
	Processes []RuntimeProcess `json:"processes"`
	// Software are the distinct package sets, each listed once; a
	// process names its set by ID.
	Software []Software `json:"software,omitempty"`
	// Nodes are what each host reported: GPUs and driver, CPU, OS.
	Nodes []Node `json:"nodes,omitempty"`
	// Missing are the plan's steps that left no fingerprint (the step never
	// started, or an older binary ran it).
	Missing []string `json:"missing,omitempty"`
	// Problems are fingerprint files that could not be read.
	Problems []string `json:"problems,omitempty"`
}

// RuntimeProcess is one task of a step: what it exec'd, with which
// environment variable names (never values), against which packages.
type RuntimeProcess struct {
	Step     string   `json:"step"`
	Host     string   `json:"host"`
	Task     string   `json:"task,omitempty"`
	Argv     []string `json:"argv"`
	EnvNames []string `json:"env_names"`
	Software string   `json:"software,omitempty"`
	// Notes say what the probe could not read (no nvidia-smi, no packages).
	Notes []string `json:"notes,omitempty"`
}

// Software is one package set as `pip freeze` would print it
// (name==version), with the engines and libraries a reader looks for first.
type Software struct {
	ID           string            `json:"id"`
	SitePackages []string          `json:"site_packages,omitempty"`
	Packages     []string          `json:"packages"`
	Engines      map[string]string `json:"engines,omitempty"`
}

// Node is one host as its first fingerprinted step saw it: its GPUs as
// nvidia-smi reported them (none without nvidia-smi), CPU and OS.
type Node struct {
	Host    string            `json:"host"`
	GPUs    []fingerprint.GPU `json:"gpus"`
	Drivers []string          `json:"drivers,omitempty"`
	Models  []string          `json:"models,omitempty"`
	Arch    string            `json:"arch,omitempty"`
	CPU     string            `json:"cpu,omitempty"`
	CPUs    int               `json:"cpus,omitempty"`
	OS      string            `json:"os,omitempty"`
	CUDA    string            `json:"cuda,omitempty"`
}

// EnginePackages are the distributions Engines picks out: the serving
// engines and the libraries their results depend on. Names are compared
// as pip normalises them (case, '-', '_' and '.' alike).
var EnginePackages = []string{
	"sglang", "vllm", "tensorrt-llm", "ai-dynamo", "ai-dynamo-runtime", "torch", "transformers",
	"flashinfer-python", "nixl", "deep-ep", "mooncake-transfer-engine", "lmcache", "triton",
}

func normPkg(name string) string {
	return strings.NewReplacer("_", "-", ".", "-").Replace(strings.ToLower(name))
}

// RuntimeOf folds fingerprint records (and the plan's step names, to list
// the ones without a record) into a Runtime.
func RuntimeOf(recs []fingerprint.Record, steps []string, problems []string) *Runtime {
	rt := &Runtime{Processes: []RuntimeProcess{}, Problems: problems}
	softIdx := map[string]int{}
	nodeIdx := map[string]int{}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[r.Step] = true
		p := RuntimeProcess{Step: r.Step, Host: r.Host, Task: r.Task, Argv: r.Argv, EnvNames: r.EnvNames, Notes: r.Notes}
		if len(r.Packages) > 0 {
			pkgs := make([]string, len(r.Packages))
			for i, pk := range r.Packages {
				pkgs[i] = pk.Name + "==" + pk.Version
			}
			sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
			id := hex.EncodeToString(sum[:6])
			if _, ok := softIdx[id]; !ok {
				softIdx[id] = len(rt.Software)
				sw := Software{ID: id, SitePackages: r.SitePackages, Packages: pkgs, Engines: map[string]string{}}
				for _, pk := range r.Packages {
					if slices.Contains(EnginePackages, normPkg(pk.Name)) {
						sw.Engines[normPkg(pk.Name)] = pk.Version
					}
				}
				if len(sw.Engines) == 0 {
					sw.Engines = nil
				}
				rt.Software = append(rt.Software, sw)
			}
			p.Software = id
		}
		rt.Processes = append(rt.Processes, p)
		if r.Host != "" {
			i, ok := nodeIdx[r.Host]
			if ok && len(rt.Nodes[i].GPUs) == 0 && len(r.GPUs) > 0 {
				// A container step sees the GPUs a host-side step did not.
				rt.Nodes = slices.Delete(rt.Nodes, i, i+1)
				delete(nodeIdx, r.Host)
				for h, j := range nodeIdx {
					if j > i {
						nodeIdx[h] = j - 1
					}
				}
				ok = false
			}
			if !ok {
				n := Node{Host: r.Host, GPUs: r.GPUs, Arch: r.Arch, CPU: r.CPU.Model, CPUs: r.CPU.LogicalCPUs, OS: r.OS, CUDA: r.CUDA}
				if n.GPUs == nil {
					n.GPUs = []fingerprint.GPU{}
				}
				for _, g := range r.GPUs {
					if !slices.Contains(n.Drivers, g.Driver) {
						n.Drivers = append(n.Drivers, g.Driver)
					}
					if !slices.Contains(n.Models, g.Name) {
						n.Models = append(n.Models, g.Name)
					}
				}
				nodeIdx[r.Host] = len(rt.Nodes)
				rt.Nodes = append(rt.Nodes, n)
			}
		}
	}
	sort.Slice(rt.Nodes, func(i, j int) bool { return rt.Nodes[i].Host < rt.Nodes[j].Host })
	for _, s := range steps {
		if !seen[s] {
			rt.Missing = append(rt.Missing, s)
		}
	}
	return rt
}
