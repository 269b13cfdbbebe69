package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestPlanErrorNamesTheFragment: the planner's refusal of a generated
// bound recipe is told at the fragment's file, line and variant (or the
// shared block's), the bound file after it; an error that names no place
// in the bound file stays as it is.
func TestPlanErrorNamesTheFragment(t *testing.T) {
	dir := t.TempDir()
	frag := filepath.Join(dir, "disagg-variants.yaml")
	boundFile := filepath.Join(dir, "bound", "x-1234.yaml")
	write := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(frag, "schema: 2\nbase:\n  frontend:\n    type: sglang\n  roles:\n    prefill: {nodes: 2}\noverride_a:\n  host_setup:\n    commands: [x]\n")
	write(boundFile, "schema: 2\nname: x\nfrontend:\n  type: sglang\nhost_setup:\n  commands:\n  - x\nhealth_check:\n  max_attempts: 720\n")
	var sharedDoc yaml.Node
	if err := yaml.Unmarshal([]byte("health_check:\n  max_attempts: 720\n"), &sharedDoc); err != nil {
		t.Fatal(err)
	}
	blocks := fragment.Blocks{Shared: &sharedDoc, SharedFile: "/tree/configs/srt-recipes/fixed-sequence-multi.yaml"}
	in := ComposeInput{Recipe: frag, Selector: "override_a"}
	bound := &recipe.Bound{Selector: "override_a"}
	for _, c := range []struct {
		name string
		err  error
		want string // the whole message; "" : the error unchanged
	}{
		{"a field of base, named in the variant", &recipe.UnsupportedError{Err: recipe.Error{File: boundFile, Line: 4, Field: "frontend.type", Msg: "direct SGLang is not supported"}},
			frag + ":4: base.frontend.type (variant override_a): direct SGLang is not supported [bound recipe " + boundFile + ":4]"},
		{"a field of the variant's section", &schema2.Error{Err: yamltree.Error{File: boundFile, Line: 6, Field: "host_setup.commands", Msg: "not supported"}},
			frag + ":9: override_a.host_setup.commands: not supported [bound recipe " + boundFile + ":6]"},
		{"a line only: the field on it", &yamltree.Error{File: boundFile, Line: 9, Msg: "too few"},
			"/tree/configs/srt-recipes/fixed-sequence-multi.yaml:2: health_check.max_attempts (the lane's shared block): too few [bound recipe " + boundFile + ":9]"},
		{"a derived field: its written parent", &yamltree.Error{File: boundFile, Line: 6, Field: "roles.prefill.gpus", Msg: "idle"},
			frag + ":6: base.roles.prefill (variant override_a): idle [roles.prefill.gpus of bound recipe " + boundFile + ":6]"},
		{"a field a telemetry-free shared block sets, the block named", &yamltree.Error{File: boundFile, Line: 9, Field: "health_check.max_attempts", Msg: "low"},
			"/tree/configs/srt-recipes/fixed-sequence-multi.yaml:2: health_check.max_attempts (the lane's shared block): low [bound recipe " + boundFile + ":9]"},
		{"another file", &yamltree.Error{File: "/elsewhere.toml", Line: 3, Field: "paths.runs_dir", Msg: "required"}, ""},
		{"no place at all", errors.New(`--eval-conc (EVAL_CONC) "x": not a number`), ""},
	} {
		got := locatePlanError(context.Background(), in, blocks, bound, boundFile, c.err)
		want := c.want
		if want == "" {
			if got != c.err { //nolint:errorlint // the very error, not one wrapping it
				t.Errorf("%s: %v, want the error unchanged", c.name, got)
			}
			continue
		}
		if got.Error() != want || !errors.Is(got, c.err) {
			t.Errorf("%s:\n got %v\nwant %s", c.name, got, want)
		}
	}
}

// TestPrintRefusals: every unplanned point on one line, the tree's paths
// relative; then the count by reason, by cause, by recipe file.
func TestPrintRefusals(t *testing.T) {
	root := "/x/inferencex-e2e"
	pt := func(key string, line int, recipe string, err, noPlan error) *Point {
		return &Point{MatrixPoint: master.MatrixPoint{Key: key, Line: line, SrtRecipe: recipe, Row: map[string]any{}}, Err: err, NoPlan: noPlan}
	}
	missing := &fragment.MissingBlockError{Root: root, Block: fragment.AgenticMulti, What: "the agentic multi-node lane's shared block"}
	pe := func(line int, sel string) error {
		return &PlanError{Place: fragment.Place{File: root + "/benchmarks/multi_node/srt-slurm-recipes/a/v.yaml", Line: line, Field: "base.frontend.type"},
			Selector: sel, Field: "frontend.type", Msg: "not supported", Bound: "/tmp/b/a-" + sel + ".yaml", BoundLine: 11}
	}
	m := &Matrix{Root: root, Points: []*Point{
		pt("a", 10, "benchmarks/multi_node/srt-slurm-recipes/a/v.yaml:override_x", nil, pe(4, "override_x")),
		pt("a", 12, "benchmarks/multi_node/srt-slurm-recipes/a/v.yaml:override_y", nil, pe(4, "override_y")),
		pt("b", 20, "benchmarks/multi_node/srt-slurm-recipes/b/agentx/w.yaml", nil, nil),
		pt("c", 30, "benchmarks/single_node/srt-slurm-recipes/c/gone.yaml", nil, nil),
		{MatrixPoint: master.MatrixPoint{Key: "d", Line: 40, Row: map[string]any{}}, Plan: &plan.Plan{}},
		pt("e", 50, "benchmarks/single_node/srt-slurm-recipes/e/agentic.yaml", nil, nil),
	}}
	// As refuse() writes them: the point's name and master line first.
	b, c := m.Points[2], m.Points[3]
	b.Err = &PointError{Reason: ReasonNoBlock, Err: fmt.Errorf("%s (line 20): %w", b.Name(), missing)}
	c.Err = &PointError{Reason: ReasonNoRecipe, Err: fmt.Errorf("%s (line 30): recipe benchmarks/single_node/srt-slurm-recipes/c/gone.yaml is not in this tree (%s)", c.Name(), root)}
	e := m.Points[5]
	bound := &fragment.BoundKeyError{File: root + "/benchmarks/single_node/srt-slurm-recipes/e/agentic.yaml", Keys: []fragment.Located{
		{Field: "base.model.path", Line: 5, Value: "hf:org/m"}, {Field: "override_a.benchmark.env.TOTAL_CPU_DRAM_GB", Line: 40, Value: "599"}}}
	e.Err = &PointError{Reason: ReasonCompose, Err: fmt.Errorf("%s (line 50): %w", e.Name(), bound)}
	var out bytes.Buffer
	printRefusals(&out, m)
	want := strings.NewReplacer("a (line 10)", m.Points[0].Name()+" (line 10)", "a (line 12)", m.Points[1].Name()+" (line 12)",
		"b (line 20)", m.Points[2].Name()+" (line 20)", "c (line 30)", m.Points[3].Name()+" (line 30)", "e (line 50)", m.Points[5].Name()+" (line 50)").Replace(`not planned [composed, no plan]: a (line 10): benchmarks/multi_node/srt-slurm-recipes/a/v.yaml:4: base.frontend.type (variant override_x): not supported [bound recipe a-override_x.yaml:11]
not planned [composed, no plan]: a (line 12): benchmarks/multi_node/srt-slurm-recipes/a/v.yaml:4: base.frontend.type (variant override_y): not supported [bound recipe a-override_y.yaml:11]
not planned [shared block not in this tree]: b (line 20): the agentic multi-node lane's shared block: configs/srt-recipes/agentic-multi.yaml is not in this tree
not planned [recipe not in this tree]: c (line 30): recipe benchmarks/single_node/srt-slurm-recipes/c/gone.yaml is not in this tree
not planned [composition refused]: e (line 50): benchmarks/single_node/srt-slurm-recipes/e/agentic.yaml:5: base.model.path: the launcher binds this key from the matrix point (= "hf:org/m" here); remove it from the fragment (and 1 more such keys)

not planned by reason: 5 of 6 points (points, then each cause and the recipe files it names)
      2  composed, no plan
             2  frontend.type: not supported
                    2  benchmarks/multi_node/srt-slurm-recipes/a/v.yaml
      1  composition refused
             1  the fragment sets keys the launcher binds from the matrix point: model.path, benchmark.env.TOTAL_CPU_DRAM_GB
                    1  benchmarks/single_node/srt-slurm-recipes/e/agentic.yaml
      1  recipe not in this tree
             1  benchmarks/single_node/srt-slurm-recipes/c/gone.yaml
      1  shared block not in this tree
             1  the agentic multi-node lane's shared block: configs/srt-recipes/agentic-multi.yaml is not in this tree
                    1  benchmarks/multi_node/srt-slurm-recipes/b/agentx/w.yaml
`)
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}

// TestLabelClusters: a point is planned on each cluster its runner label
// schedules on; a label that is none of runners.yaml's, or no runners.yaml,
// is why it is planned on none.
func TestLabelClusters(t *testing.T) {
	file, err := filepath.Abs(filepath.Join("..", "..", "inputs", "runners", "testdata", "fixture.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := runners.Load(context.Background(), file, runners.Options{Home: "/h"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		inv     *runners.Inventory
		label   string
		want    string
		wantErr string
	}{
		{inv: inv, label: "gpu-a", want: "alpha beta"},
		{inv: inv, label: "gb300-nv", wantErr: "runner label gb300-nv is no label of " + file + ": composed and fingerprinted, planned on no cluster"},
		{inv: nil, label: "gpu-a", wantErr: "runner label gpu-a names no one cluster"},
	} {
		ids, err := labelClusters(c.inv, c.label)
		if c.wantErr != "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want %q…", c.label, err, c.wantErr)
			}
			continue
		}
		if err != nil || strings.Join(ids, " ") != c.want {
			t.Errorf("%s: %v, %v; want %s", c.label, ids, err, c.want)
		}
	}
}
