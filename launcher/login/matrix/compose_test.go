package matrix

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// TestComposerSample composes every point of the sample's NVIDIA master
// config with the recipe reader's fragment stages (no profile: composed,
// not planned). Each composed point has its fingerprint and a bound file
// naming its model; points of one recipe differing only in concurrency
// share a fingerprint; the refusals are the reader's, by class.
func TestComposerSample(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	o := todayOptions(root)
	o.Master = filepath.Join(root, "configs", "nvidia-master.yaml")
	o.StageDir = t.TempDir()
	o.Compose = Composer(o, nil)
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	reasons, classes := map[string]int{}, map[string]int{}
	unplaced := 0
	byRecipe := map[string]map[string]bool{} // recipe and row minus conc -> fingerprints
	for _, p := range m.Points {
		reasons[ReasonOf(p.Err)]++
		switch ReasonOf(p.Err) {
		case "": // composed; without a profile, not planned
			if p.Fingerprint == "" && !p.EvalOnly { // eval jobs are fingerprinted by their benchmark row
				t.Fatalf("%s: composed without a fingerprint", p.Name())
			}
			if p.Cluster == "" {
				// A label on several clusters: bound for none, no file.
				if p.BoundRecipe != "" {
					t.Errorf("%s: runner %s names no one cluster, yet a bound file %s", p.Name(), p.Runner, p.BoundRecipe)
				}
				unplaced++
				break
			}
			data, err := os.ReadFile(p.BoundRecipe)
			if err != nil || !strings.Contains(string(data), "path: hf:"+p.Model) {
				t.Fatalf("%s: no bound file naming hf:%s (%v)", p.Name(), p.Model, err)
			}
			if p.Scenario == "fixed-seq-len" && !p.EvalOnly {
				k := p.SrtRecipe + "|" + p.Runner + "|" + p.Image
				if byRecipe[k] == nil {
					byRecipe[k] = map[string]bool{}
				}
				byRecipe[k][p.Fingerprint] = true
			}
		case ReasonCompose:
			classes[refusalClass(p.Err.Error())]++
		}
	}
	if reasons[ReasonNoRecipe] != 589 || reasons[""] != 614 || reasons[ReasonCompose] != 701 {
		t.Errorf("reasons %v, want 589 %q, 614 composed, 701 %q", reasons, ReasonNoRecipe, ReasonCompose)
	}
	want := map[string]int{"agentic-multi.yaml": 391, "model.path": 205, "TOTAL_CPU_DRAM_GB": 63, "fabric": 25, "telemetry.enabled": 13, "power-exporter-port": 4}
	for c, n := range want {
		if classes[c] != n {
			t.Errorf("refusals %v, want %v", classes, want)
			break
		}
	}
	shared := 0
	for _, fps := range byRecipe {
		if len(fps) == 1 {
			shared++
		}
	}
	if shared == 0 {
		t.Error("no recipe's fixed-seq-len points share a fingerprint")
	}
	t.Logf("reasons %v; refusals %v; %d composed on no one cluster; %d allocations", reasons, classes, unplaced, len(m.Groups))
}

// refusalClass names what a composition refusal is about.
func refusalClass(msg string) string {
	for _, c := range []string{"agentic-multi.yaml", "model.path", "TOTAL_CPU_DRAM_GB", "telemetry.enabled", "power-exporter-port"} {
		if strings.Contains(msg, c) {
			return c
		}
	}
	if strings.Contains(msg, "@fabric.") {
		return "fabric"
	}
	return msg
}
