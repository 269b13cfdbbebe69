package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// A built InferenceX tree: configs/ with a master and runners.yaml, and
// the recipes it names (some missing on purpose).
const builtMaster = `sn:
  image: sglang:1
  model: org/sn
  model-prefix: dsr1
  runner: cluster:b200-x
  precision: fp8
  framework: sglang
  multinode: false
  srt-recipe-dir: dsr1/sglang
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {tp: 8, conc-start: 4, conc-end: 16, srt-recipe: 1k1k.yaml}
      - {tp: 4, conc-list: [8], srt-recipe: gone.yaml}
    agentic-coding:
    - dram-utilization: 0.5
      search-space:
      - {tp: 8, kv-offloading: dram, kv-offload-backend: {name: hicache}, conc-list: [2, 4], srt-recipe: agentic.yaml}
mn:
  image: dynamo:1
  model: org/mn
  model-prefix: dsr1
  runner: cluster:b200-x
  precision: fp8
  framework: dynamo-sglang
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  srt-recipe-dir: dsr1/sglang/8k1k
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [8]
        srt-recipe: bundle.yaml:override_a
        power: true
        prefill: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
      - conc-list: [16, 32]
        srt-recipe: bundle.yaml:override_a
        power: true
        prefill: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
      - conc-list: [64]
        srt-recipe: bundle.yaml:zip_override_z[2]
        prefill: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
`

const builtRunners = `labels:
  cluster:b200-x: [b200-x_00]
clusters:
  b200-x:
    gpus-per-node: 8
    available-cpu-dram-mib: 1000000
`

func builtTree(t *testing.T, runners bool) (root string) {
	t.Helper()
	root = t.TempDir()
	files := map[string]string{
		"configs/nvidia-master.yaml":                                        builtMaster,
		"benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/1k1k.yaml":    "schema: 2\nroles: {agg: {nodes: 1, args: {tp-size: 8}}}\n",
		"benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/agentic.yaml": "schema: 2\nroles: {agg: {nodes: 1}}\n",
		"benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/8k1k/bundle.yaml": "schema: 2\nbase: {roles: {prefill: {nodes: 1}, decode: {nodes: 1}}}\n" +
			"override_a: {roles: {decode: {args: {x: 1}}}}\nzip_override_z: {roles: {decode: {args: {x: [1, 2]}}}}\n",
	}
	if runners {
		files["configs/runners.yaml"] = builtRunners
	}
	for p, body := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// standIn composes a point for the plumbing tests: the selected variant of
// the recipe file, decoded; a recipe that sets a key the binder writes
// (model, identity.model.repo, identity.container.image; at the top or
// under base) is refused naming it. It stands in for package recipe's
// composer, whose rules are tested there.
func standIn(calls *int) ComposeFunc {
	bound := func(m map[string]any) string {
		if _, ok := m["model"]; ok {
			return "model"
		}
		id, _ := m["identity"].(map[string]any)
		if mm, _ := id["model"].(map[string]any); mm["repo"] != nil {
			return "identity.model.repo"
		}
		if c, _ := id["container"].(map[string]any); c["image"] != nil {
			return "identity.container.image"
		}
		return ""
	}
	return func(_ context.Context, in ComposeInput) (*Composed, error) {
		*calls++
		data, err := os.ReadFile(in.Recipe)
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		if base, ok := doc["base"].(map[string]any); ok {
			if k := bound(base); k != "" {
				return nil, fmt.Errorf("%s: base.%s: the binder writes it", in.Recipe, k)
			}
			v := map[string]any{"base": base}
			if in.Selector != "" {
				v["variant"] = doc[strings.Split(in.Selector, "[")[0]]
			}
			return &Composed{Recipe: v, File: in.Recipe + ".bound.yaml"}, nil
		}
		if k := bound(doc); k != "" {
			return nil, fmt.Errorf("%s: %s: the binder writes it", in.Recipe, k)
		}
		return &Composed{Recipe: doc, File: in.Recipe + ".bound.yaml"}, nil
	}
}

func todayOptions(root string) Options {
	return Options{
		IO:      launch.IO{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}},
		Master:  filepath.Join(root, "configs", "nvidia-master.yaml"),
		Startup: time.Hour,
	}
}

// TestTodayBuiltTree: every point is listed; the ones that cannot be
// planned say why; fixed-seq-len points of one recipe share an allocation
// and a fingerprint, agentic points do not.
func TestTodayBuiltTree(t *testing.T) {
	root := builtTree(t, true)
	o := todayOptions(root)
	calls := 0
	o.Compose = standIn(&calls)
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range m.Points {
		got = append(got, fmt.Sprintf("%s %v %s", p.Name(), p.Conc, ReasonOf(p.Err)))
	}
	want := []string{
		"sn#0(1k1k) [4] ", "sn#1(1k1k) [8] ", "sn#2(1k1k) [16] ",
		"sn#3(1k1k) [8] " + ReasonNoRecipe,
		"sn#4(agentic) [2] ", "sn#5(agentic) [4] ",
		"mn#6(8k1k) [8] ", "mn#7(8k1k) [16 32] ",
		"mn#8(8k1k) [64] " + ReasonNoVariant,
		// The eval jobs, after the benchmarks: GSM8K of the agentic
		// deployment at its highest concurrency, the 8k1k group at 32, the
		// zip variant's (refused like its benchmark).
		"sn#9(agentic,eval-only) [4] ",
		"mn#10(8k1k,eval-only) [16 32] ",
		"mn#11(8k1k,eval-only) [64] " + ReasonNoVariant,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("points:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if calls != 9 {
		t.Errorf("composed %d points, want the 9 whose recipe and variant exist", calls)
	}
	if m.Points[10].Fingerprint != "" {
		t.Error("an eval-only point has a recipe fingerprint (the planner gives benchmark rows one)")
	}
	fp := func(i int) string { return m.Points[i].Fingerprint }
	if fp(0) == "" || fp(0) != fp(1) || fp(1) != fp(2) {
		t.Errorf("one recipe at three concurrencies: fingerprints %q %q %q", fp(0), fp(1), fp(2))
	}
	// Benchmark rows that differ only in concurrency share one.
	if fp(6) == "" || fp(6) != fp(7) || fp(6) == fp(0) || fp(4) != fp(5) || fp(4) == fp(0) {
		t.Errorf("fingerprints: mn %q %q, sn %q, agentic %q %q", fp(6), fp(7), fp(0), fp(4), fp(5))
	}
	// A composed point runs its bound recipe file, not a CONFIG_FILE.
	po := planOptions(o, m.Points[6])
	if !strings.HasSuffix(po.Recipe, "bundle.yaml.bound.yaml") || po.ConfigFile != "" || po.Image != "dynamo:1" || po.Conc != "8" {
		t.Errorf("plan options of a composed point: recipe %q config-file %q image %q conc %q", po.Recipe, po.ConfigFile, po.Image, po.Conc)
	}
	if po := planOptions(o, m.Points[10]); po.EvalOnly != "true" || po.RunEval != "true" || po.EvalConc != "32" {
		t.Errorf("eval job's plan options: eval-only %q run-eval %q eval-conc %q", po.EvalOnly, po.RunEval, po.EvalConc)
	}
	if po := planOptions(o, m.Points[7]); po.EvalOnly != "" || po.RunEval != "false" {
		t.Errorf("benchmark's plan options: eval-only %q run-eval %q", po.EvalOnly, po.RunEval)
	}
	// Allocations by topology (entry, nodes, GPUs), packed under the
	// default 4-hour limit with a setup of an hour: sn 0-2 (one server),
	// then the agentic 4 and 5 (a restart each) make 1:00 + 0:10 + 0:30 +
	// 2 × 1:10 = 4:00; the agentic eval 9 (0:30 with its restart) does not
	// fit and opens a second; 3 alone (no recipe); mn 6-7 and the eval
	// job 10 on one server; 8 and 11 alone (no variant).
	var sizes, restarts []int
	for _, g := range m.Groups {
		sizes = append(sizes, len(g.Points))
		n, _ := g.Restarts()
		restarts = append(restarts, n)
	}
	if fmt.Sprint(sizes) != "[5 1 1 3 1 1]" || fmt.Sprint(restarts) != "[2 0 0 0 0 0]" {
		t.Errorf("allocation sizes %v with restarts %v, want [5 1 1 3 1 1] and [2 0 0 0 0 0]", sizes, restarts)
	}
	if g := m.Groups[0]; g.Estimate != 4*time.Hour || g.TimeLimit != 4*time.Hour {
		t.Errorf("first allocation estimated %s of %s, want 4h of 4h", g.Estimate, g.TimeLimit)
	}
	// Saved: four setups of the 8-GPU single-node server, two of the
	// 2-node, 16-GPU multi-node one (an hour each).
	if got := m.SavedGPUHours(); got != 4*8+2*16 {
		t.Errorf("saved %.1f GPU-hours, want 64", got)
	}
	if r := m.Points[4].Row["total-cpu-dram-gb"]; r != 524 {
		// 1,000,000 MiB × 0.5 × 8/8 GPUs = 524.288 GB.
		t.Errorf("DRAM budget %v, want 524", r)
	}
	var out bytes.Buffer
	if err := PrintPlan(&out, m); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"12 points (9 benchmark: 3 mn-fixed, 4 sn-fixed, 0 mn-agentic, 2 sn-agentic; 3 eval-only) in 6 allocations (12 without grouping); 12 not planned",
		"1: " + ReasonNoRecipe, "2: " + ReasonNoVariant, "9: " + ReasonNoPlan,
		"not planned [" + ReasonNoRecipe + "]: sn#3(1k1k) (line 16): recipe benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/gone.yaml is not in this tree",
		"not planned [" + ReasonNoVariant + "]: mn#8(8k1k) (line 47): benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/8k1k/bundle.yaml:zip_override_z[2]: no variant zip_override_z[2]",
		"allocation 1 (sn on b200-x: 1 nodes, 8 GPUs; est. 4h0m0s of 4h0m0s) runs 5 points, 2 restarts (0 change the split): sn#0(1k1k), sn#1(1k1k), sn#2(1k1k), sn#4(agentic) [restart], sn#5(agentic) [restart]",
		"allocation 4 (mn on b200-x: 2 nodes, 16 GPUs; est. 2h0m0s of 4h0m0s) runs 3 points, 0 restarts (0 change the split): mn#6(8k1k), mn#7(8k1k), mn#10(8k1k,eval-only)",
		"mn-fixed+power+eval-only",
		"GPU-hours saved: 64.0",
	} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("plan lacks %q:\n%s", s, out.String())
		}
	}
	j, err := json.Marshal(m.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"recipe_fingerprint":"`+fp(0)+`"`) || !strings.Contains(string(j), `"refused":{"composed, no plan":9,"recipe not in this tree":1,"selector names no variant":2}`) {
		t.Errorf("plan JSON lacks the fingerprint or the refusals: %s", j)
	}
	if !strings.Contains(string(j), `"row":{"conc":[8],"decode":{`) || !strings.Contains(string(j), `"power":true`) {
		t.Errorf("plan JSON lacks the points' rows: %s", j)
	}
}

// TestTodayRefusals: a composer refusal is named on its point; without
// runners.yaml the DRAM points are refused; without a composer every
// point whose recipe exists is listed as not composed and a run submits
// nothing (exit 2).
func TestTodayRefusals(t *testing.T) {
	root := builtTree(t, false)
	o := todayOptions(root)
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]int{}
	for _, p := range m.Points {
		reasons[ReasonOf(p.Err)]++
	}
	if reasons[ReasonRefused] != 3 || reasons[ReasonNotComposed] != 6 || reasons[ReasonNoRecipe] != 1 || reasons[ReasonNoVariant] != 2 {
		t.Errorf("reasons %v", reasons)
	}
	if err := m.Points[4].Err; err == nil || !strings.Contains(err.Error(), "runners.yaml") {
		t.Errorf("DRAM point without runners.yaml: %v", err)
	}
	err = Run(context.Background(), o)
	if exitcode.Of(err) != exitcode.Config || !strings.Contains(fmtErr(err), "12 of 12 points cannot be planned") {
		t.Errorf("run: %v", err)
	}

	o.Runners = filepath.Join(root, "nowhere.yaml")
	if _, err := Build(context.Background(), o); exitcode.Of(err) != exitcode.Config || !strings.Contains(fmtErr(err), "--runners") {
		t.Errorf("a named runners.yaml that is missing: %v", err)
	}

	root = builtTree(t, true)
	o = todayOptions(root)
	o.Compose = func(context.Context, ComposeInput) (*Composed, error) {
		return nil, errors.New("model.path: the binder writes model")
	}
	m, err = Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Points[0].Err; ReasonOf(err) != ReasonCompose || !strings.Contains(err.Error(), "sn#0(1k1k) (line 15): model.path") {
		t.Errorf("composer refusal: %v", err)
	}
}

// TestTodayInvalidMaster: an unknown field is exit 2 naming file:line and
// the rule, before anything is planned.
func TestTodayInvalidMaster(t *testing.T) {
	root := builtTree(t, true)
	path := filepath.Join(root, "configs", "nvidia-master.yaml")
	bad := strings.Replace(builtMaster, "  multinode: true\n", "  multinode: true\n  nodes: 3\n", 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := 0
	o := todayOptions(root)
	o.Compose = standIn(&calls)
	_, err := Build(context.Background(), o)
	if exitcode.Of(err) != exitcode.Config || !strings.Contains(fmtErr(err), path+":29: mn: nodes: unknown field: MultiNodeMasterConfigEntry forbids extra fields") {
		t.Errorf("err = %v", err)
	}
	if calls != 0 {
		t.Errorf("%d points composed before the master was refused", calls)
	}
}

// TestTodaySamplePlan plans InferenceX's NVIDIA master of the sample
// (../shared/data/inferencex-v3): every row listed, the recipes the sample
// lacks refused by name; with a stand-in composer, the 53 stored recipe
// versions that predate the fragment layout (they still set model:, the
// sample's README says) are the composer refusals and the 76 fragments
// compose (49: the README's 53 counts 4 identity-only fragments too).
func TestTodaySamplePlan(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	o := todayOptions(root)
	o.Master = filepath.Join(root, "configs", "nvidia-master.yaml")
	m, err := Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	kinds, reasons := map[string]int{}, map[string]int{}
	for _, p := range m.Points {
		kinds[kindOf(p)]++
		reasons[ReasonOf(p.Err)]++
	}
	// Benchmark rows: 233 multi-node fixed-seq-len (one per search-space
	// entry, the measured count), 244 single-node fixed-seq-len,
	// 312 and 495 agentic (one per concurrency): 1284; then 620 eval jobs.
	bench := 0
	for _, p := range m.Points {
		if !p.EvalOnly {
			bench++
		}
	}
	if len(m.Points) != 1904 || bench != 1284 {
		t.Errorf("%d points (%d benchmark rows), want 1904 (1284)", len(m.Points), bench)
	}
	if reasons[ReasonNoRecipe] != 589 || reasons[ReasonNotComposed] != 1315 || len(reasons) != 2 {
		t.Errorf("reasons %v, want 589 %q and 1315 %q", reasons, ReasonNoRecipe, ReasonNotComposed)
	}
	t.Logf("kinds %v; %d allocations; saved %.1f of %.1f GPU-hours", kinds, len(m.Groups), m.SavedGPUHours(), m.SetupGPUHours())

	calls := 0
	o.Compose = standIn(&calls)
	m, err = Build(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	refusedFiles, composedFiles := map[string]bool{}, map[string]bool{}
	for _, p := range m.Points {
		f := p.RecipeFile()
		if p.EvalOnly && p.EvalSrtRecipe != "" {
			f, _, _ = strings.Cut(p.EvalSrtRecipe, ":")
		}
		switch ReasonOf(p.Err) {
		case ReasonCompose:
			refusedFiles[f] = true
		case "":
			composedFiles[f] = true
			if (p.Fingerprint == "") != p.EvalOnly {
				t.Errorf("%s (eval-only %v) composed with fingerprint %q: benchmark rows have one, eval rows none", p.Name(), p.EvalOnly, p.Fingerprint)
			}
		}
	}
	// The stored versions that set model: at the top or under base (49 of
	// the 129; the README's 53 also counts the 4 fragments whose identity
	// block names model.revision without model.repo, which the binder fills
	// and does not refuse) are exactly the refused ones.
	setsModel := 0
	for f := range refusedFiles {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		base, _ := doc["base"].(map[string]any)
		if _, top := doc["model"]; top || base["model"] != nil {
			setsModel++
		}
	}
	if setsModel != len(refusedFiles) || len(refusedFiles) != 49 || len(refusedFiles)+len(composedFiles) != 129 {
		t.Errorf("%d recipe files refused (%d set model:), %d composed; want 49 of 129 refused, all setting model:", len(refusedFiles), setsModel, len(composedFiles))
	}
	var out bytes.Buffer
	if err := PrintPlan(&out, m); err != nil {
		t.Fatal(err)
	}
	const totals = "\n1904 points (1284 benchmark: 233 mn-fixed, 244 sn-fixed, 312 mn-agentic, 495 sn-agentic; 620 eval-only)"
	i := strings.LastIndex(out.String(), totals)
	if i < 0 {
		t.Fatalf("plan lacks %q", totals)
	}
	t.Logf("%s", out.String()[i:])
}

// TestComposeErrorReasons: a composer error is counted by what it is: a
// lane's shared block (or the telemetry block) missing from the tree is
// missing input, anything else a refusal of the composition.
func TestComposeErrorReasons(t *testing.T) {
	missing := &fragment.MissingBlockError{Root: "/tree", Block: fragment.AgenticSingle, What: "the agentic single-node lane's shared block", Err: os.ErrNotExist}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"a missing shared block", missing, ReasonNoBlock},
		{"a missing block, wrapped", fmt.Errorf("binding: %w", missing), ReasonNoBlock},
		{"a bound key", errors.New("x.yaml:3: model.path: the launcher binds this key"), ReasonCompose},
		{"some other file missing", fmt.Errorf("reading x: %w", os.ErrNotExist), ReasonCompose},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := builtTree(t, true)
			o := todayOptions(root)
			o.Compose = func(context.Context, ComposeInput) (*Composed, error) { return nil, c.err }
			m, err := Build(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			p := m.Points[0]
			if got := ReasonOf(p.Err); got != c.want || !strings.Contains(p.Err.Error(), c.err.Error()) {
				t.Errorf("reason %q (%v), want %q", got, p.Err, c.want)
			}
			var out bytes.Buffer
			if err := PrintPlan(&out, m); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), ": "+c.want) {
				t.Errorf("the summary does not count %q:\n%s", c.want, out.String())
			}
		})
	}
}

// TestEvalConc: EVAL_CONC is the row's eval-conc, else the largest of the
// point's concurrencies (the workflow's fallback, and a single-node
// point's own concurrency); never "0".
func TestEvalConc(t *testing.T) {
	for _, c := range []struct {
		name string
		mp   master.MatrixPoint
		want string
	}{
		{"multi-node row with eval-conc", master.MatrixPoint{Multinode: true, Conc: []int{16, 32, 64}, EvalConc: 32}, "32"},
		{"multi-node row without", master.MatrixPoint{Multinode: true, Conc: []int{64, 8, 256, 16}}, "256"},
		{"single-node agentic eval job", master.MatrixPoint{Conc: []int{12}}, "12"},
		{"no concurrency at all", master.MatrixPoint{}, ""},
	} {
		if got := EvalConc(c.mp); got != c.want {
			t.Errorf("%s: EvalConc = %q, want %q", c.name, got, c.want)
		}
		mp := c.mp
		mp.RunEval, mp.EvalOnly = true, true
		if po := PointPlanOptions(Options{}, mp); po.EvalConc != c.want {
			t.Errorf("%s: plan options EVAL_CONC %q, want %q", c.name, po.EvalConc, c.want)
		}
		if _, err := launch.ParseEvalConcs(c.want); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestPointPlanOptionsLane: a matrix point's plan takes the record's
// single-node facts and agentic mounts exactly where the workflow's
// launch step does (workflow.Resolve).
func TestPointPlanOptionsLane(t *testing.T) {
	for _, c := range []struct {
		name                string
		mp                  master.MatrixPoint
		single, agenticMult bool
	}{
		{"single-node fixed", master.MatrixPoint{Scenario: master.FixedSeqLen}, true, false},
		{"single-node agentic", master.MatrixPoint{Scenario: master.AgenticCoding}, true, false},
		{"multi-node fixed", master.MatrixPoint{Multinode: true, Scenario: master.FixedSeqLen}, false, false},
		{"multi-node agentic", master.MatrixPoint{Multinode: true, Scenario: master.AgenticCoding}, false, true},
	} {
		po := PointPlanOptions(Options{}, c.mp)
		if po.SingleNode != c.single || po.AgenticMultiNode != c.agenticMult {
			t.Errorf("%s: SingleNode %v, AgenticMultiNode %v; want %v, %v", c.name, po.SingleNode, po.AgenticMultiNode, c.single, c.agenticMult)
		}
	}
}
