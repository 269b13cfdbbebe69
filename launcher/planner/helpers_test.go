package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// testBinary is the fixed slurmbench path tests plan with.
const testBinary = "/opt/slurmbench/bin/slurmbench"

// testResolveImage stands in for enroot's resolver with a fixed, obvious
// mapping, so plans depend only on their inputs.
func testResolveImage(ref, squashDir string) (plan.Image, error) {
	if ref == "" || strings.ContainsAny(ref, " \t") {
		return plan.Image{}, fmt.Errorf("bad image reference %q", ref)
	}
	name := strings.NewReplacer("/", "+", ":", "+", "@", "+").Replace(ref)
	return plan.Image{Ref: ref, EnrootURI: "docker://" + ref, Squash: filepath.Join(squashDir, name+".sqsh")}, nil
}

// testdataDir is planner/testdata, absolute and symlink-free.
func testdataDir(t testing.TB) string {
	t.Helper()
	dir, err := profile.Canonical("testdata")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func loadProfile(t testing.TB, path string) *profile.Profile {
	t.Helper()
	p, err := profile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func loadRecipe(t testing.TB, path string) *recipe.Recipe {
	t.Helper()
	abs, err := profile.Canonical(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := recipe.Load(abs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// inputs are the fixed run inputs every test plan starts from.
func inputs(p *profile.Profile, r *recipe.Recipe) Inputs {
	return Inputs{Profile: p, Recipe: r, RunID: r.Name + "-dryrun", Binary: testBinary, ResolveImage: testResolveImage}
}

// checkInvariants checks a plan independently of Plan.Validate: what a
// cluster would notice if the allocation math or port layout were wrong.
func checkInvariants(t testing.TB, pl *plan.Plan) {
	t.Helper()
	for _, err := range invariantErrors(pl) {
		t.Error(err)
	}
}

func invariantErrors(pl *plan.Plan) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	gpn := pl.GPUsPerNode
	owner := map[[2]int]string{}    // (node, gpu) → process
	roleGPUs := map[plan.Role]int{} // GPUs held per worker role
	ports := map[[2]int]string{}    // (node, port) → process
	for _, proc := range pl.Processes {
		if plan.IsShellString(proc.Argv) {
			bad("%s: argv runs a shell string: %q", proc.Name, proc.Argv)
		}
		for _, a := range proc.Argv {
			if strings.ContainsRune(a, 0) {
				bad("%s: argv item %q holds a NUL", proc.Name, a)
			}
		}
		if !filepath.IsAbs(proc.Log) || filepath.Dir(proc.Log) != pl.Layout.Logs {
			bad("%s: log %q is not in %s", proc.Name, proc.Log, pl.Layout.Logs)
		}
		worker := proc.Role == plan.RolePrefill || proc.Role == plan.RoleDecode || proc.Role == plan.RoleAgg
		for _, n := range proc.Nodes {
			if n < 0 || n >= pl.Nodes {
				bad("%s: node %d outside 0..%d", proc.Name, n, pl.Nodes-1)
			}
			for kind, port := range proc.Ports {
				if port <= 0 || port > 65535 {
					if !(port == 0 && kind != "http") {
						bad("%s: %s port %d out of range", proc.Name, kind, port)
					}
					continue
				}
				k := [2]int{n, port}
				if other, dup := ports[k]; dup {
					bad("node %d port %d: %s and %s", n, port, other, proc.Name)
				}
				ports[k] = proc.Name + "/" + kind
			}
			if !worker {
				if len(proc.GPUs) > 0 {
					bad("%s (%s) holds GPUs %v", proc.Name, proc.Role, proc.GPUs)
				}
				continue
			}
			// A worker without a slice holds the whole node.
			gpus := proc.GPUs
			if len(gpus) == 0 {
				for g := 0; g < gpn; g++ {
					gpus = append(gpus, g)
				}
			}
			for _, g := range gpus {
				if g < 0 || g >= gpn {
					bad("%s: GPU %d outside 0..%d", proc.Name, g, gpn-1)
				}
				k := [2]int{n, g}
				if other, dup := owner[k]; dup {
					bad("node %d GPU %d: %s and %s", n, g, other, proc.Name)
				}
				owner[k] = proc.Name
				roleGPUs[proc.Role]++
			}
			if pl.Backend == "vllm" {
				// vLLM takes its GPUs as --device-ids and no CUDA_VISIBLE_DEVICES
				// (srt-slurm #253: a mask breaks DeepGEMM MegaMoE), or, with
				// backend.set_cuda_visible_devices, the mask alone on part of
				// a node and nothing on a whole one.
				cvd, masked := proc.Env["CUDA_VISIBLE_DEVICES"]
				i := indexOf(proc.Argv, "--device-ids")
				partial := len(gpus) < gpn
				if i >= 0 && (masked || proc.Argv[i+1] != plan.JoinInts(gpus)) || i < 0 && (partial && cvd != plan.JoinInts(gpus) || !partial && masked) {
					bad("%s: --device-ids in %q (mask %q) does not match GPUs %v", proc.Name, proc.Argv, cvd, gpus)
				}
			} else if cvd, ok := proc.Env["CUDA_VISIBLE_DEVICES"]; ok != (len(proc.GPUs) > 0) || ok && cvd != plan.JoinInts(proc.GPUs) {
				bad("%s: CUDA_VISIBLE_DEVICES %q (set %v) does not match GPUs %v", proc.Name, cvd, ok, proc.GPUs)
			}
		}
	}
	g := pl.GPUs
	if roleGPUs[plan.RolePrefill] != g.Prefill || roleGPUs[plan.RoleDecode] != g.Decode || roleGPUs[plan.RoleAgg] != g.Agg {
		bad("GPUs held: prefill %d decode %d agg %d; plan says %+v", roleGPUs[plan.RolePrefill], roleGPUs[plan.RoleDecode], roleGPUs[plan.RoleAgg], g)
	}
	if g.Total != g.Prefill+g.Decode+g.Agg {
		bad("gpus.total %d != %d + %d + %d", g.Total, g.Prefill, g.Decode, g.Agg)
	}
	if g.Total > pl.Nodes*gpn {
		bad("gpus.total %d > %d nodes × %d", g.Total, pl.Nodes, gpn)
	}
	if pl.Slurm.Nodes != pl.Nodes || len(pl.NodeMap) != pl.Nodes {
		bad("slurm.nodes %d, node_map %d entries, nodes %d", pl.Slurm.Nodes, len(pl.NodeMap), pl.Nodes)
	}
	// A node without a role is a node srtctl's packing leaves idle; the
	// plan must say so (noteIdleNodes).
	idleWarned := slices.ContainsFunc(pl.Recipe.Warnings, func(w string) bool { return strings.Contains(w, "stay idle") })
	for i, n := range pl.NodeMap {
		if len(n.Roles) == 0 && !idleWarned {
			bad("node %d has no role: an allocated node that does nothing, and no warning says so", i)
		}
	}
	for _, pt := range pl.Points {
		if pt.NumPrompts != pl.Benchmark.PromptsMult*pt.Concurrency || pt.WarmupPrompts != pl.Benchmark.WarmupMult*pt.Concurrency {
			bad("point c%d: %d prompts, %d warmup", pt.Concurrency, pt.NumPrompts, pt.WarmupPrompts)
		}
		if name, err := pl.ResultFile(pt.Concurrency); err != nil || pt.ResultFile != name {
			bad("point c%d: result file %s", pt.Concurrency, pt.ResultFile)
		}
	}
	sort.Strings(errs)
	return errs
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
