package planner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestSameServing: two runs of one recipe serve the same thing whatever
// their run ids, concurrencies or benchmark; a change to a server's
// program, placement or the health gate is another deployment.
func TestSameServing(t *testing.T) {
	base := mustBuild(t, "b200.toml", "1p1d.yaml", nil)
	tests := []struct {
		name string
		mod  func(*Inputs)
		edit func(*plan.Plan)
		same bool
	}{
		{name: "another run id", mod: func(in *Inputs) { in.RunID = "other-run" }, same: true},
		{name: "other concurrencies", mod: func(in *Inputs) { in.Concurrencies = []int{1, 2} }, same: true},
		{name: "a worker's argument", edit: func(p *plan.Plan) {
			for i := range p.Processes {
				if p.Processes[i].Role == plan.RoleDecode {
					p.Processes[i].Argv = append(p.Processes[i].Argv, "--extra")
				}
			}
		}},
		{name: "a worker's node", edit: func(p *plan.Plan) {
			for i := range p.Processes {
				if p.Processes[i].Role == plan.RolePrefill {
					p.Processes[i].Nodes = []int{7}
				}
			}
		}},
		{name: "the health gate", edit: func(p *plan.Plan) { p.Health.Decode++ }},
		{name: "the image", edit: func(p *plan.Plan) { p.Image.Squash += ".other" }},
		{name: "the benchmark step only", edit: func(p *plan.Plan) {
			for i := range p.Processes {
				if p.Processes[i].Role == plan.RoleBenchmark {
					p.Processes[i].Argv = append(p.Processes[i].Argv, "--more")
				}
			}
		}, same: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			other := mustBuild(t, "b200.toml", "1p1d.yaml", tt.mod)
			if tt.edit != nil {
				tt.edit(other)
			}
			if got := plan.SameServing(base, other); got != tt.same {
				t.Errorf("SameServing = %v, want %v", got, tt.same)
			}
		})
	}
}

// TestFits names both sides and what is short.
func TestFits(t *testing.T) {
	p := mustBuild(t, "b200.toml", "1p1d.yaml", nil)
	if err := p.Fits(p.Nodes, p.GPUsPerNode); err != nil {
		t.Errorf("a plan does not fit its own size: %v", err)
	}
	if err := p.Fits(p.Nodes+3, p.GPUsPerNode*2); err != nil {
		t.Errorf("a plan does not fit a larger allocation: %v", err)
	}
	err := p.Fits(p.Nodes-1, p.GPUsPerNode-2)
	if err == nil {
		t.Fatal("a plan fits an allocation short of a node and two GPUs per node")
	}
	for _, want := range []string{"needs 2 nodes × 8 GPUs", "the allocation has 1 nodes × 6 GPUs", "short by 1 more node(s) and 2 more GPU(s) per node"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%v: does not say %q", err, want)
		}
	}
}

// TestSameServingAcrossRuns: for every test recipe, another run of it (a
// new run id, so a new run directory, and other concurrencies) starts the
// same servers. At least one recipe's servers name their run directory
// (config files, logs), so the relative comparison is exercised.
func TestSameServingAcrossRuns(t *testing.T) {
	ents, err := os.ReadDir(filepath.Join(testdataDir(t), "recipes"))
	if err != nil {
		t.Fatal(err)
	}
	compared, named := 0, 0
	for _, e := range ents {
		for _, prof := range []string{"b200.toml", "gb300.toml", "mock4.toml"} {
			a, err := buildTestdata(t, prof, e.Name(), nil)
			if err != nil {
				continue // the recipe is for another profile
			}
			b := mustBuild(t, prof, e.Name(), func(in *Inputs) { in.RunID, in.Concurrencies = "another-run", []int{3} })
			compared++
			if !plan.SameServing(a, b) {
				t.Errorf("%s on %s: another run of the recipe starts other servers", e.Name(), prof)
			}
			for _, p := range a.Processes {
				if plan.IsServer(p.Role) && strings.Contains(strings.Join(p.Argv, " ")+fmt.Sprint(p.Env, p.Files), a.RunDir) {
					named++
					break
				}
			}
		}
	}
	if compared < 8 || named == 0 {
		t.Errorf("compared %d recipes, %d with servers naming their run directory; want at least 8 and 1", compared, named)
	}
}
