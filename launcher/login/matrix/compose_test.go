package matrix

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// TestComposerSample composes every point of the sample's NVIDIA master
// config with the recipe reader's fragment stages. A point is bound for
// each cluster its runner label schedules on, written, and planned with
// that cluster's runners.yaml record; a label runners.yaml lacks composes
// with no cluster (fingerprinted, no bound file). The refusals are the
// reader's, by class.
func TestComposerSample(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	o := todayOptions(root)
	o.Master = filepath.Join(root, "configs", "nvidia-master.yaml")
	o.StageDir = t.TempDir()
	o.PlanOnly = true // matrix --plan's figures; a run would stage /configs in the tree
	o.Compose = Composer(o)
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	reasons, classes := map[string]int{}, map[string]int{}
	unplaced, planned := 0, 0
	byRecipe := map[string]map[string]bool{} // recipe and row minus conc -> fingerprints
	for _, p := range m.Points {
		reasons[ReasonOf(p.Err)]++
		switch ReasonOf(p.Err) {
		case "": // composed on no one cluster
			if p.Fingerprint == "" && !p.EvalOnly { // eval jobs are fingerprinted by their benchmark row
				t.Fatalf("%s: composed without a fingerprint", p.Name())
			}
			if p.BoundRecipe != "" { // bound for its cluster; planned where its record can
				if p.Plan != nil {
					planned++
				}
				data, err := os.ReadFile(p.BoundRecipe)
				if err != nil || !strings.Contains(string(data), "path: hf:"+p.Model) {
					t.Fatalf("%s: a bound file not naming hf:%s (%v)", p.Name(), p.Model, err)
				}
				break
			}
			if p.Cluster != "" || p.BoundRecipe != "" {
				t.Errorf("%s: runner %s names cluster %q, bound file %q: want neither", p.Name(), p.Runner, p.Cluster, p.BoundRecipe)
			}
			unplaced++
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
	// The sample stores no agentic-multi.yaml: its lane's 391 points lack
	// an input, like the 589 whose recipe is not stored; the 310 left are
	// the reader's refusals.
	if reasons[ReasonNoRecipe] != 589 || reasons[ReasonNoBlock] != 391 || reasons[""]+reasons[ReasonNoPlan] != 614 || reasons[ReasonCompose] != 310 || planned == 0 {
		t.Errorf("reasons %v (%d planned), want 589 %q, 391 %q, 614 composed (planned, or %q), 310 %q", reasons, planned, ReasonNoRecipe, ReasonNoBlock, ReasonNoPlan, ReasonCompose)
	}
	// Of the 614 composed, every one plans but the 24 whose runner label
	// (gb300-nv) is no label of the sample's runners.yaml: a label on two
	// clusters (h200: h200-cw, h200-dgxc) is planned on each.
	noLabel := 0
	for _, p := range m.Points {
		if p.Err == nil && p.NoPlan != nil {
			if !strings.Contains(p.NoPlan.Error(), "runner label gb300-nv is no label of") {
				t.Errorf("%s: composed, not planned: %v", p.Name(), p.NoPlan)
			}
			noLabel++
		}
	}
	// A point planned on several clusters has a bound file per cluster.
	perCluster := 0
	for _, p := range m.Points {
		if p.Runner == "h200" && p.BoundRecipe != "" {
			if filepath.Base(filepath.Dir(p.BoundRecipe)) != "h200-cw" {
				t.Errorf("%s: bound file %s, want it under h200-cw/", p.Name(), p.BoundRecipe)
			}
			other := filepath.Join(filepath.Dir(filepath.Dir(p.BoundRecipe)), "h200-dgxc", filepath.Base(p.BoundRecipe))
			if _, err := os.Stat(other); err != nil {
				t.Errorf("%s: no bound file for h200-dgxc: %v", p.Name(), err)
			}
			perCluster++
		}
	}
	if perCluster != 29 {
		t.Errorf("%d points of label h200 bound per cluster, want 29", perCluster)
	}
	if planned != 590 || noLabel != 24 {
		t.Errorf("%d planned, %d on no label; want 590 and 24", planned, noLabel)
	}
	// Every composed point without a plan says why on the point, not on
	// stderr; where the planner refused the bound recipe, the why names the
	// fragment file and line, the bound file only after it.
	located := 0
	for _, p := range m.Points {
		if p.Err != nil || p.Plan != nil {
			continue
		}
		if p.NoPlan == nil {
			t.Fatalf("%s: composed, no plan, and no word why", p.Name())
		}
		msg := p.NoPlan.Error()
		// The rows of the round: nginx_container: nginx and
		// eval-only rows without eval-conc now plan.
		if strings.Contains(msg, "nginx_container") || strings.Contains(msg, "EVAL_CONC") {
			t.Errorf("%s: %v", p.Name(), msg)
		}
		var pe *PlanError
		if errors.As(p.NoPlan, &pe) && pe.Place.File != "" {
			located++
			if !strings.HasPrefix(msg, pe.Place.File+":") || strings.HasPrefix(pe.Place.File, os.TempDir()) || !strings.Contains(msg, p.BoundRecipe) {
				t.Errorf("%s: %q does not lead with the fragment %s and end with the bound file %s", p.Name(), msg, pe.Place.File, p.BoundRecipe)
			}
		}
	}
	t.Logf("%d planner refusals traced back to their fragment", located)
	if o.Stderr.(*bytes.Buffer).Len() != 0 {
		t.Errorf("stderr: %s", o.Stderr.(*bytes.Buffer))
	}
	want := map[string]int{"model.path": 205, "TOTAL_CPU_DRAM_GB": 63, "fabric": 25, "telemetry.enabled": 13, "power-exporter-port": 4}
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
	t.Logf("reasons %v; refusals %v; %d planned, %d composed on no one cluster; %d allocations", reasons, classes, planned, unplaced, len(m.Groups))
}

// refusalClass names what a composition refusal is about.
func refusalClass(msg string) string {
	for _, c := range []string{"model.path", "TOTAL_CPU_DRAM_GB", "telemetry.enabled", "power-exporter-port"} {
		if strings.Contains(msg, c) {
			return c
		}
	}
	if strings.Contains(msg, "@fabric.") {
		return "fabric"
	}
	return msg
}

// TestComposerStagesConfigs: a matrix run (not --plan) of today's points
// stages /configs once from the tree into the workspace and plans every
// point with it, so a recipe's setup_script is looked for where its jobs
// will run it: a script in neither configs/ leaves the point composed but
// not planned, naming setup_script; once the mirror holds it, the workers
// run it from /configs. --plan stages nothing (TestComposerSample).
func TestComposerStagesConfigs(t *testing.T) {
	sample := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	root := filepath.Join(t.TempDir(), "inferencex-e2e")
	if err := os.CopyFS(root, os.DirFS(sample)); err != nil {
		t.Fatal(err)
	}
	build := func() *Matrix {
		t.Helper()
		o := todayOptions(root)
		o.Selection.Keys = []string{"dsv41flash-fp4-b300-vllm-agentic-dspark"} // its fragment's setup_script: vllm-router.sh
		o.Workspace, o.StageDir = root, t.TempDir()
		o.Compose = Composer(o)
		m, err := Build(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Points) == 0 {
			t.Fatal("no points")
		}
		return m
	}
	staged := filepath.Join(root, ".slurmbench", "configs")
	refused := 0
	for _, p := range build().Points {
		// Only its zip_override_dep2 group names the script.
		if p.Plan == nil {
			if p.NoPlan == nil || !strings.Contains(p.NoPlan.Error(), "setup_script: vllm-router.sh is in neither "+staged) {
				t.Fatalf("%s: not planned (%v); want refused only for its setup_script", p.Name(), p.NoPlan)
			}
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no point refused for its missing setup_script")
	}
	script := filepath.Join(root, "benchmarks", "multi_node", "srt-slurm-recipes", "configs", "vllm-router.sh")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("pip install vllm-router==$ROUTER_VERSION\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range build().Points {
		if p.Plan == nil || p.Configs != staged {
			t.Fatalf("%s: plan %v (%v), configs %q; want planned with %s", p.Name(), p.Plan != nil, p.NoPlan, p.Configs, staged)
		}
		ran := 0
		for _, proc := range p.Plan.Processes {
			if len(proc.Setup) > 0 && strings.Join(proc.Setup[0], " ") == "bash /configs/vllm-router.sh" {
				ran++
				if !slices.Contains(proc.Mounts, staged+":/configs") {
					t.Errorf("%s: %s runs the script without %s mounted: %q", p.Name(), proc.Name, staged, proc.Mounts)
				}
			}
		}
		if ran > 0 {
			refused--
		}
	}
	if refused != 0 {
		t.Errorf("%d more points refused for the script than run it once it is there", refused)
	}
	if b, err := os.ReadFile(filepath.Join(staged, "vllm-router.sh")); err != nil || !bytes.Contains(b, []byte("vllm-router")) {
		t.Errorf("staged vllm-router.sh: %q, %v", b, err)
	}
}
