// Package layout holds the test that keeps the repository's folders
// honest: they show the flow recipe + profile -> plan -> login-node runner
// -> job driver -> results (docs/architecture.md), and imports may only run
// along it.
package layout

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/slurmbench/slurmbench/"

// rules: a package under the first prefix imports no package under any of
// the others. Prefixes are module-relative and match whole path elements.
// A package may import within the tree it lies in, unless its rule forbids
// that tree: then only within its own (planner/engine sits under planner,
// which calls it, and must not call back but through its Builder).
var rules = []struct {
	from   string
	not    []string
	reason string
}{
	{"launcher/job", []string{"launcher/login", "cmd", "launcher/planner"}, "code in the allocation never reaches back to the login node's runner, nor plans"},
	{"launcher/login", []string{"launcher/job", "cmd"}, "the login node submits and follows; the driver runs only in the job"},
	{"launcher/plan", []string{"launcher/planner", "launcher/login", "launcher/job", "launcher/clients", "mockengine", "cmd"}, "the plan is the bottom: every stage reads it"},
	{"launcher/inputs", []string{"launcher/plan", "launcher/planner", "launcher/login", "launcher/job", "launcher/clients", "cmd"}, "readers of recipes and profiles know nothing of what is made of them"},
	{"launcher/planner", []string{"launcher/login", "launcher/job", "launcher/clients", "cmd"}, "planning is pure: recipe + profile -> plan"},
	{"launcher/planner/engine", []string{"launcher/planner", "launcher/login", "launcher/job", "launcher/clients", "cmd"}, "an engine sees the builder only through engine.Builder"},
	{"launcher/planner/infra", []string{"launcher/planner", "launcher/login", "launcher/job", "launcher/clients", "cmd"}, "the job's services see the builder only through infra.Builder"},
	{"launcher/planner/benchargs", []string{"launcher/planner", "launcher/login", "launcher/job", "launcher/clients", "cmd"}, "the benchmark's arguments are the recipe's: the builder places the step and hands them what it placed"},
	{"launcher/clients", []string{"launcher/login", "launcher/job", "launcher/planner", "cmd"}, "the benchmark clients run anywhere (bench --url, the job)"},
	{"launcher/inputs/recipe/schema2", []string{"launcher/inputs/recipe"}, "the recipe's node transforms edit YAML nodes; the recipe model is their reader's"},
	{"launcher/inputs/recipe/variants", []string{"launcher/inputs/recipe"}, "the recipe's node transforms edit YAML nodes; the recipe model is their reader's"},
	{"launcher/inputs/recipe/yamldoc", []string{"launcher/inputs/recipe"}, "the recipe's node transforms edit YAML nodes; the recipe model is their reader's"},
	{"launcher/inputs/recipe/fragment", []string{"launcher/inputs/recipe"}, "the recipe's node transforms edit YAML nodes; the recipe model is their reader's"},
	{"launcher/inputs/recipe/values", []string{"launcher/inputs/recipe"}, "the recipe's leaf values render YAML as srtctl does; the recipe model is their reader's"},
	{"launcher/inputs/recipe/telemetry", []string{"launcher/inputs/recipe"}, "the telemetry block is read and checked on its own; the recipe hands it what of the rest its checks read"},
	{"launcher/clients/sabench/numpy", []string{"launcher/clients/sabench"}, "NumPy's numerics are reproduced on their own; the client is their user"},
	{"slurm/wire", []string{"slurm"}, "slurmrestd's encodings decode into plain values; the client and its records are slurm's"},
	{"", []string{"cmd"}, "cmd only parses flags: nothing imports it"},
}

// allowed are edges a rule's forbidden trees would catch but the layout
// means: the job's services take an engine's Worker; the recipe's node
// transforms share yamltree's node edits.
var allowed = map[string][]string{
	"launcher/planner/infra":          {"launcher/planner/engine"},
	"launcher/inputs/recipe/schema2":  {"launcher/inputs/recipe/yamltree"},
	"launcher/inputs/recipe/variants": {"launcher/inputs/recipe/yamltree"},
	"launcher/inputs/recipe/yamldoc":  {"launcher/inputs/recipe/yamltree"},
	"launcher/inputs/recipe/fragment": {"launcher/inputs/recipe/yamltree", "launcher/inputs/recipe/yamldoc", "launcher/inputs/recipe/variants"},
	"launcher/inputs/recipe/values":   {"launcher/inputs/recipe/yamltree"},
}

func under(path, prefix string) bool {
	return prefix == "" || path == prefix || strings.HasPrefix(path, prefix+"/")
}

// violations lists "pkg imports dep: reason" for every import against rules.
func violations(imports map[string][]string) []string {
	var out []string
	for pkg, deps := range imports {
		for _, r := range rules {
			if !under(pkg, r.from) {
				continue
			}
			for _, dep := range deps {
				if slices.ContainsFunc(allowed[r.from], func(a string) bool { return under(dep, a) }) {
					continue
				}
				for _, not := range r.not {
					inside := under(pkg, not) && !(r.from != "" && under(r.from, not) && !under(dep, r.from))
					if under(dep, not) && !inside {
						out = append(out, pkg+" imports "+dep+": "+r.reason)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// eachSourceFile calls fn with the package directory (module-relative,
// slash-separated) and path of every non-test Go file under root, skipping
// testdata and dot directories.
func eachSourceFile(t *testing.T, root string, fn func(pkg, path string) error) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		return fn(filepath.ToSlash(rel), path)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// moduleImports reads the non-test Go files of the repository and returns,
// per package directory, the module packages it imports.
func moduleImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	eachSourceFile(t, root, func(pkg, path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, is := range f.Imports {
			p, _ := strconv.Unquote(is.Path.Value)
			if strings.HasPrefix(p, module) {
				out[pkg] = append(out[pkg], strings.TrimPrefix(p, module))
			}
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		return nil
	})
	return out
}

func TestImportsRunAlongTheFlow(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found: %v", err)
	}
	imports := moduleImports(t, root)
	for _, must := range []string{"launcher/plan", "launcher/planner", "launcher/planner/engine", "launcher/planner/infra", "launcher/login/runner", "launcher/job/driver", "cmd/slurmbench"} {
		if _, ok := imports[must]; !ok {
			t.Errorf("package %s not found: the layout this test guards has changed", must)
		}
	}
	for _, v := range violations(imports) {
		t.Error(v)
	}
}

// TestViolationsAreFound holds the rules themselves: each forbidden edge
// is reported, an allowed one is not.
func TestViolationsAreFound(t *testing.T) {
	got := violations(map[string][]string{
		"launcher/job/driver":            {"launcher/login/runner", "launcher/plan", "launcher/rundir"},
		"launcher/login/runner":          {"launcher/job/steps", "launcher/planner"},
		"launcher/plan":                  {"launcher/planner", "launcher/inputs/profile"},
		"launcher/inputs/recipe":         {"launcher/plan"},
		"results":                        {"cmd/slurmbench"},
		"cmd/slurmbench":                 {"launcher/login/runner", "launcher/job/driver"},
		"launcher/planner":               {"launcher/planner/engine", "launcher/plan"},
		"launcher/planner/engine":        {"launcher/planner", "launcher/planner/engine", "launcher/plan", "launcher/inputs/recipe"},
		"launcher/planner/infra":         {"launcher/planner/engine", "launcher/planner", "launcher/plan"},
		"launcher/inputs/recipe/schema2": {"launcher/inputs/recipe", "launcher/inputs/recipe/yamltree"},
	})
	want := []string{
		"launcher/inputs/recipe imports launcher/plan: readers of recipes and profiles know nothing of what is made of them",
		"launcher/inputs/recipe/schema2 imports launcher/inputs/recipe: the recipe's node transforms edit YAML nodes; the recipe model is their reader's",
		"launcher/job/driver imports launcher/login/runner: code in the allocation never reaches back to the login node's runner, nor plans",
		"launcher/login/runner imports launcher/job/steps: the login node submits and follows; the driver runs only in the job",
		"launcher/plan imports launcher/planner: the plan is the bottom: every stage reads it",
		"launcher/planner/engine imports launcher/planner: an engine sees the builder only through engine.Builder",
		"launcher/planner/infra imports launcher/planner: the job's services see the builder only through infra.Builder",
		"results imports cmd/slurmbench: cmd only parses flags: nothing imports it",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
