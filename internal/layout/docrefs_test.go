package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// stdPackages are the standard library packages the docs name symbols of;
// any other `pkg.Name` must be one of this module's packages.
var stdPackages = map[string]bool{
	"bytes": true, "context": true, "errors": true, "exec": true, "filepath": true, "fs": true,
	"http": true, "io": true, "json": true, "net": true, "os": true, "signal": true, "slog": true,
	"strings": true, "sync": true, "synctest": true, "syscall": true, "testing": true, "time": true,
}

// docRef is a Go symbol as the docs write it: `pkg.Name` or
// `pkg.Type.Member`, optionally called.
var docRef = regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)(?:\\.([A-Z][A-Za-z0-9_]*))?(?:\\(\\))?`")

// symbols maps each package name in the module to its exported top-level
// names and their exported members ("Type.Method", "Type.Field").
func symbols(t *testing.T, root string) map[string]map[string]bool {
	t.Helper()
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	eachSourceFile(t, root, func(_, path string) error {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := out[f.Name.Name]
		if names == nil {
			names = map[string]bool{}
			out[f.Name.Name] = names
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					names[recvName(d.Recv.List[0].Type)+"."+d.Name.Name] = true
				} else {
					names[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
						if st, ok := s.Type.(*ast.StructType); ok {
							for _, fld := range st.Fields.List {
								for _, n := range fld.Names {
									names[s.Name.Name+"."+n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	return out
}

func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvName(e.X)
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.Ident:
		return e.Name
	}
	return ""
}

// staleRefs lists "file: `ref`: why" for every symbol the markdown names
// that the module does not have.
func staleRefs(docs map[string]string, syms map[string]map[string]bool) []string {
	var out []string
	for file, text := range docs {
		for _, m := range docRef.FindAllStringSubmatch(text, -1) {
			pkg, name, member := m[1], m[2], m[3]
			if stdPackages[pkg] {
				continue
			}
			names, ok := syms[pkg]
			switch {
			case !ok:
				out = append(out, file+": "+m[0]+": no package "+pkg+" in the module")
			case !names[name]:
				out = append(out, file+": "+m[0]+": package "+pkg+" has no "+name)
			case member != "" && !names[name+"."+member]:
				out = append(out, file+": "+m[0]+": "+pkg+"."+name+" has no "+member)
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestDocsNameWhatExists: every Go symbol the README and docs/ name in
// code spans exists under that name; a move or a rename that leaves the
// docs behind fails here.
func TestDocsNameWhatExists(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "testcluster", "README.md"), filepath.Join(root, "launcher", "clients", "sabench", "README.md"))
	docs := map[string]string{}
	refs := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		docs[rel] = string(b)
		refs += len(docRef.FindAllString(string(b), -1))
	}
	if refs < 10 {
		t.Fatalf("found %d symbol references in %d files; the pattern no longer matches how the docs write them", refs, len(files))
	}
	for _, s := range staleRefs(docs, symbols(t, root)) {
		t.Error(s)
	}
}

func TestStaleRefsAreFound(t *testing.T) {
	syms := map[string]map[string]bool{"plan": {"Plan": true, "Plan.Validate": true, "ReadPlan": true}}
	docs := map[string]string{"a.md": "`plan.Plan`, `plan.Plan.Validate()`, `plan.ReadPlan`, `os.Root`, " +
		"`launcher.Plan`, `plan.Gone`, `plan.Plan.Missing`"}
	got := strings.Join(staleRefs(docs, syms), "\n")
	for _, want := range []string{"`launcher.Plan`: no package launcher", "`plan.Gone`: package plan has no Gone", "`plan.Plan.Missing`: plan.Plan has no Missing"} {
		if !strings.Contains(got, want) {
			t.Errorf("stale refs\n%s\nlack %q", got, want)
		}
	}
	if n := len(strings.Split(got, "\n")); n != 3 {
		t.Errorf("%d stale refs, want 3:\n%s", n, got)
	}
}
