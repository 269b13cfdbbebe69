package matrix

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/inputs/master"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/launch"
)

func mockOptions(t *testing.T) Options {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		IO:          launch.IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
		Master:      filepath.Join(root, "examples", "mock-matrix-master.yaml"),
		Profile:     filepath.Join(root, "profiles", "testcluster.toml"),
		RecipesRoot: filepath.Join(root, "examples"),
		Startup:     time.Hour,
	}
}

// TestBuildGroupsByServing: six points over two server sets make two
// allocations of three, and the saved GPU-hours count every point after
// the first of each (2 × 12 GPUs + 2 × 8 GPUs, one hour each).
func TestBuildGroupsByServing(t *testing.T) {
	m, err := Build(context.Background(), mockOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Points) != 6 || len(m.Groups) != 2 {
		t.Fatalf("%d points in %d groups, want 6 in 2", len(m.Points), len(m.Groups))
	}
	for gi, g := range m.Groups {
		if len(g.Points) != 3 {
			t.Errorf("group %d has %d points, want 3", gi, len(g.Points))
		}
		for _, p := range g.Points {
			if p.Key != g.Points[0].Key {
				t.Errorf("group %d mixes %s and %s", gi, p.Key, g.Points[0].Key)
			}
		}
	}
	if g := m.Groups[0]; g.Nodes() != 3 || g.GPUs() != 12 {
		t.Errorf("first allocation: %d nodes %d GPUs, want 3 and 12", g.Nodes(), g.GPUs())
	}
	if got := m.SavedGPUHours(); got != 40 {
		t.Errorf("saved %.1f GPU-hours, want 40", got)
	}
	var out bytes.Buffer
	if err := PrintPlan(&out, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"6 points in 2 allocations (6 without grouping); 0 not planned", "GPU-hours saved: 40.0 of 60.0", "allocation 2 (2 nodes, 8 GPUs) runs 3 points"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}

// TestBuildSelectsAndRefuses: the selection narrows the points; a point
// without its recipe is kept with its error for --plan and refused (exit 2,
// nothing submitted) for a run; an empty selection is a config error.
func TestBuildSelectsAndRefuses(t *testing.T) {
	o := mockOptions(t)
	o.Selection = master.Selection{Keys: []string{"mock-1p1d"}}
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Points) != 3 || len(m.Groups) != 1 {
		t.Errorf("--key mock-1p1d: %d points in %d groups, want 3 in 1", len(m.Points), len(m.Groups))
	}

	o = mockOptions(t)
	o.Selection = master.Selection{Filter: "key=nothing"}
	if _, err := Build(context.Background(), o); exitcode.Of(err) != exitcode.Config || !strings.Contains(fmtErr(err), "no multi-node point matches") {
		t.Errorf("empty selection: %v", err)
	}

	dir := t.TempDir()
	data, err := os.ReadFile(o.Master)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "m.yaml")
	if err := os.WriteFile(bad, bytes.Replace(data, []byte("recipes/mock-1p1d.yaml"), []byte("recipes/gone.yaml"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	o = mockOptions(t)
	o.Master = bad
	m, err = Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if m.Unplanned() != 1 || len(m.Groups) != 3 {
		t.Errorf("one recipe missing: %d unplanned in %d groups, want 1 in 3", m.Unplanned(), len(m.Groups))
	}
	err = Run(context.Background(), o)
	if exitcode.Of(err) != exitcode.Config || !strings.Contains(fmtErr(err), "1 of 6 points cannot be planned") {
		t.Errorf("run with an unplannable point: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
