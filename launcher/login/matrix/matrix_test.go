package matrix

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func mockOptions(t *testing.T) Options {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		IO:          launch.IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
		Master:      filepath.Join(root, "examples", "mock-matrix-master.yaml"),
		Profile:     filepath.Join(root, "profiles", "testcluster.toml"),
		RecipesRoot: filepath.Join(root, "examples"),
		// The test cluster's profile limits a job to 20 minutes: a
		// setup of 6 minutes and a minute per start and concurrency fit
		// each entry's three points in one allocation.
		Startup:   6 * time.Minute,
		Estimates: Estimates{EngineStart: time.Minute, PerConc: time.Minute},
	}
}

// TestBuildGroupsByServing: six points over two server sets make two
// allocations of three, and the saved GPU-hours count every point after
// the first of each (2 × 12 GPUs + 2 × 8 GPUs, 6 minutes each).
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
	if got := m.SavedGPUHours(); math.Abs(got-4) > 1e-9 {
		t.Errorf("saved %.1f GPU-hours, want 4", got)
	}
	var out bytes.Buffer
	if err := PrintPlan(&out, m); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"6 points in 2 allocations (6 without grouping); 0 not planned", "GPU-hours saved: 4.0 of 6.0", "allocation 2 (mock-1p1d on testcluster: 2 nodes, 8 GPUs; est. 10m0s of 20m0s) runs 3 points, 0 restarts"} {
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

// TestReuseByContent: a staged point is reused only when its marker passed
// under the same content key (recipe, profile, image, version, settings);
// --rerun-failed runs the failed and missing points and keeps every passed
// one, even under another key.
func TestReuseByContent(t *testing.T) {
	o := mockOptions(t)
	o.Version = "v1"
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	stage := t.TempDir()
	tr := func() *tracker {
		return &tracker{w: &bytes.Buffer{}, state: map[*Point]int{}, started: map[*Point]time.Time{}, results: map[*Point]string{}}
	}
	// Points 0-2 share allocation 1, 3-5 allocation 2.
	finishPoint(o, stage, m.Points[0], "", nil, tr())                       // passed, same key
	finishPoint(o, stage, m.Points[1], "", errors.New("engine died"), tr()) // failed
	old := o
	old.Version = "v0"
	finishPoint(old, stage, m.Points[3], "", nil, tr()) // passed under another version
	// Points 2, 4, 5: missing.

	count := func(gs []Group) (groups, points int) {
		for _, g := range gs {
			points += len(g.Points)
		}
		return len(gs), points
	}
	g, n := count(selectWork(m, o, stage, tr()))
	if g != 2 || n != 5 {
		t.Errorf("default: %d groups, %d points to run; want 2 and 5 (only point 0 reused)", g, n)
	}
	o.RerunFailed = true
	g, n = count(selectWork(m, o, stage, tr()))
	if g != 2 || n != 4 {
		t.Errorf("--rerun-failed: %d groups, %d points to run; want 2 and 4 (points 0 and 3 kept)", g, n)
	}

	k1, _ := contentKey(m.Points[0], "v1")
	k2, _ := contentKey(m.Points[1], "v1")
	k3, parts := contentKey(m.Points[0], "v2")
	if k1 == k2 || k1 == k3 {
		t.Errorf("content keys do not tell the points or the versions apart: %s %s %s", k1, k2, k3)
	}
	for _, f := range []string{"recipe_sha256", "profile_sha256", "image"} {
		if parts[f] == "" || parts[f] == "|" {
			t.Errorf("key part %s is empty: %v", f, parts)
		}
	}
	if StageDirName(m.Points[4]) != "mock-1p1d_1_1024_128" {
		t.Errorf("stage dir name %q", StageDirName(m.Points[4]))
	}
}

// TestOlderLayoutListsWhatItSkips: an older master's single-node entry
// makes no point and is listed as not expanded, with why.
func TestOlderLayoutListsWhatItSkips(t *testing.T) {
	o := mockOptions(t)
	data, err := os.ReadFile(o.Master)
	if err != nil {
		t.Fatal(err)
	}
	single := "\nsingle:\n  image: i\n  model: m\n  model-prefix: s\n  runner: b200\n  precision: fp8\n  framework: sglang\n  scenarios:\n    fixed-seq-len:\n    - {isl: 1024, osl: 1024, search-space: [{tp: 8, conc-start: 4, conc-end: 8}]}\n"
	path := filepath.Join(t.TempDir(), "m.yaml")
	if err := os.WriteFile(path, append(data, single...), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Master = path
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Points) != 6 || len(m.Skipped) != 1 {
		t.Fatalf("%d points, %d skipped; want 6 and 1", len(m.Points), len(m.Skipped))
	}
	var out bytes.Buffer
	if err := PrintPlan(&out, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "not expanded: single (line ") || !strings.Contains(out.String(), "single-node entry") {
		t.Errorf("plan does not list the skipped entry:\n%s", out.String())
	}
}

// TestBuildOnRunnersRecords: with a profile that extends a runners.yaml,
// each point is planned on the record of the cluster its entry's runner
// label reaches (here a broad label whose runners are all in one cluster),
// and a label no record serves is that point's refusal.
func TestBuildOnRunnersRecords(t *testing.T) {
	o := mockOptions(t)
	o.Profile = filepath.Join("testdata", "extends.toml")
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Points) != 6 || len(m.Groups) != 2 {
		t.Fatalf("%d points in %d groups, want 6 in 2", len(m.Points), len(m.Groups))
	}
	for _, p := range m.Points {
		if p.Err != nil {
			t.Fatalf("%s: %v", p.Name(), p.Err)
		}
		if p.Plan.Slurm.Partition != "tc-part" || p.Plan.Slurm.Account != "tc-account" || !p.Plan.Slurm.Exclusive {
			t.Errorf("%s: slurm %+v, want the record's partition, account, exclusivity", p.Name(), p.Plan.Slurm)
		}
	}
	// A label the runners.yaml lacks refuses every point, naming it.
	dir := t.TempDir()
	for _, f := range []string{"runners.yaml", "extends.toml"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "runners.yaml" {
			data = []byte(strings.Replace(string(data), "  testcluster:\n", "  other:\n", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o.Profile = filepath.Join(dir, "extends.toml")
	m, err = Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Points {
		if p.Err == nil || !strings.Contains(p.Err.Error(), `no label "testcluster"`) {
			t.Errorf("%s: %v, want the missing label named", p.Name(), p.Err)
		}
	}
}
