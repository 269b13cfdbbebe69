package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// cardTop is the design card's top level (launcher, slurm, enroot,
// results) plus cmd and internal, and mockengine: the engine stand-in is a
// shipped tool (`slurmbench mock-engine`, the test cluster's image, the
// README's laptop loop) used beside the launcher, not a stage of it
// (docs/architecture.md).
var cardTop = []string{"cmd", "enroot", "internal", "launcher", "mockengine", "results", "slurm"}

// goTopLevel returns the top-level folders of root that hold Go files at
// any depth (testdata and dot folders aside), and "." when the root
// itself holds one.
func goTopLevel(t *testing.T, root string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		if top == filepath.Base(rel) && !strings.Contains(rel, "/") {
			top = "."
		}
		seen[top] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestTopLevelIsTheCards: the Go folders at the root are exactly the
// card's, so a new package lands under launcher/ (or another card folder)
// instead of growing the root back.
func TestTopLevelIsTheCards(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if got := goTopLevel(t, root); !slices.Equal(got, cardTop) {
		t.Errorf("Go folders at the root: %v, want %v (the design card's top level; see docs/architecture.md)", got, cardTop)
	}
}

// TestTopLevelSeesStrayFolders holds goTopLevel itself: a package at the
// root, a new top folder and a deep file are all seen; testdata is not.
func TestTopLevelSeesStrayFolders(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"main.go", "planner/x.go", "launcher/job/driver/d.go", "launcher/testdata/t.go", "docs/readme.md"} {
		writeFile(t, filepath.Join(root, f))
	}
	want := []string{".", "launcher", "planner"}
	if got := goTopLevel(t, root); !slices.Equal(got, want) {
		t.Errorf("goTopLevel = %v, want %v", got, want)
	}
}

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("package x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
