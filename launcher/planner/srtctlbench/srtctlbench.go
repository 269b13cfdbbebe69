// Package srtctlbench carries srtctl's benchmark scripts for the benchmark
// types it registers beside sa-bench and custom (mmlu, gpqa, longbenchv2,
// gsm8k, lm-eval, router, sglang-bench, trace-replay, mooncake-router),
// copied unchanged from NVIDIA/srt-slurm at c88ef731
// (src/srtctl/benchmarks/scripts, Apache-2.0: scripts/LICENSE). srtctl
// mounts that directory at /srtctl-benchmarks in the benchmark's container
// and runs "bash /srtctl-benchmarks/<type>/bench.sh <args>"; slurmbench
// writes the same files into the run directory and mounts them there, so
// the benchmark runs the same script with the same arguments.
package srtctlbench

import (
	"embed"
	"io/fs"
	"path"
	"sort"
)

// Mount is where srtctl mounts its scripts in the benchmark container.
const Mount = "/srtctl-benchmarks"

//go:embed scripts
var scripts embed.FS

// Files returns every script, relative path (e.g. "mmlu/bench.sh") →
// content, LICENSE included.
func Files() map[string]string {
	out := map[string]string{}
	err := fs.WalkDir(scripts, "scripts", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := scripts.ReadFile(p)
		if err != nil {
			return err
		}
		out[p[len("scripts/"):]] = string(b)
		return nil
	})
	if err != nil {
		panic("srtctlbench: embedded scripts unreadable: " + err.Error()) // built into the binary: cannot fail
	}
	return out
}

// Has reports whether rel (e.g. "mmlu/bench.sh") is one of the scripts.
func Has(rel string) bool {
	_, err := fs.Stat(scripts, path.Join("scripts", rel))
	return err == nil
}

// Names lists the scripts' relative paths, sorted.
func Names() []string {
	var out []string
	for k := range Files() {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
