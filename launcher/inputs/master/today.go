package master

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/internal/readlimit"
	"go.yaml.in/yaml/v3"
)

// This file expands today's master config (srt-recipe rows) into matrix
// rows as InferenceX's generator does: inferencex-e2e/infx/matrix/
// generate.py@0f3de2c3 (_expand_configs, _fixed_sequence_entries,
// _agentic_entries, multinode_worker_pair, add_multinode_node_count,
// agentic_dram_offload_gb, mark_eval_entries, drop_app_colliding_evals),
// and as its planner dispatches them (plan.py@07db303e): the benchmark
// rows without evals, then the eval-only rows (evalRows).
// Per entry: its fixed-seq-len rows (multi-node: one row per search-space
// entry with the whole concurrency list; single-node: one row per
// concurrency), then its agentic-coding rows (one per concurrency; a
// multi-node one keeps a one-element list). Rows carry the recipe path from
// the project root (validation.py's srt_recipe_path; CONFIGS.md: "Generated
// rows carry the path from inferencex-e2e/"), and `power: true` on a
// multi-node row that sets it (validation.py's matrix entries define
// power; the stored generator predates it, so the field appears only when
// true, as require-power does).

// Scenario types.
const (
	FixedSeqLen   = "fixed-seq-len"
	AgenticCoding = "agentic-coding"
)

// Generator constants (generate.py).
const (
	defaultEvalFramework = "lm-eval"
	agenticDuration      = 3600      // validation.py's DEFAULT_AGENTIC_DURATION_SECONDS
	maxAgenticDRAMMiB    = 2_861_022 // 3 TB decimal, in MiB
	bytesPerMiB          = 1024 * 1024
	bytesPerGB           = 1_000_000_000
)

// vendorEvals are generate.py's AUTOMATIC_AGENTIC_VENDOR_EVALS: agentic
// rows of these model prefixes run their vendor suite at every
// concurrency.
var vendorEvals = map[string][2]string{
	"kimik3":    {"kimi-vendor", "kimi_tool_call_schema_full"},
	"minimaxm3": {"minimax-vendor", "minimax_m3_full"},
}

// RunnerFacts are the runners.yaml facts the generator reads: labels and
// each cluster's gpus-per-node and available-cpu-dram-mib.
type RunnerFacts struct {
	Labels   map[string][]string
	Clusters map[string]ClusterFacts // by cluster id
}

// ClusterFacts are one cluster's node facts; DRAMMiB is 0 when the record
// leaves available-cpu-dram-mib unmeasured.
type ClusterFacts struct {
	GPUsPerNode int
	DRAMMiB     int
}

// ReadRunnerFacts reads only the generator's facts from a runners.yaml
// (labels, clusters.<id>.gpus-per-node, available-cpu-dram-mib). It does
// not validate the file: the strict reader of runners.yaml is package
// runners'.
func ReadRunnerFacts(name string, data []byte) (*RunnerFacts, error) {
	var doc struct {
		Labels   map[string][]string `yaml:"labels"`
		Clusters map[string]struct {
			GPUsPerNode int `yaml:"gpus-per-node"`
			DRAMMiB     int `yaml:"available-cpu-dram-mib"`
		} `yaml:"clusters"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("runners file %s: %w", name, err)
	}
	f := &RunnerFacts{Labels: doc.Labels, Clusters: map[string]ClusterFacts{}}
	for id, c := range doc.Clusters {
		f.Clusters[id] = ClusterFacts{GPUsPerNode: c.GPUsPerNode, DRAMMiB: c.DRAMMiB}
	}
	return f, nil
}

// ClusterOf is the one cluster a runner label schedules on: the id of a
// "cluster:<id>" label, else the cluster whose label holds every runner
// of the label; "" when the label spans several clusters or is unknown
// (RECIPES.md: generate's manifest names that cluster, null otherwise).
func (f *RunnerFacts) ClusterOf(label string) string {
	if id, ok := strings.CutPrefix(label, clusterPrefix); ok {
		if _, known := f.exact(label); known || f == nil {
			return id
		}
		return ""
	}
	if f == nil {
		return ""
	}
	of := map[string]string{} // runner name -> cluster id
	for l, names := range f.Labels {
		if id, ok := strings.CutPrefix(l, clusterPrefix); ok {
			for _, n := range names {
				of[n] = id
			}
		}
	}
	found := ""
	for _, n := range f.Labels[label] {
		id := of[n]
		if id == "" || (found != "" && id != found) {
			return ""
		}
		found = id
	}
	return found
}

// exact is the facts of a "cluster:<id>" label.
func (f *RunnerFacts) exact(label string) (ClusterFacts, bool) {
	if f == nil {
		return ClusterFacts{}, false
	}
	id, ok := strings.CutPrefix(label, clusterPrefix)
	if !ok {
		return ClusterFacts{}, false
	}
	c, ok := f.Clusters[id]
	return c, ok
}

// gpusPerNode is generate.py's scheduling_gpus_per_node: the exact
// cluster label's, else the one value the clusters of the label's GPU
// family (its text before the first '-') agree on.
func (f *RunnerFacts) gpusPerNode(label string) (int, error) {
	if f == nil {
		return 0, fmt.Errorf("gpus-per-node for %q needs runners.yaml (--runners)", label)
	}
	if c, ok := f.exact(label); ok && c.GPUsPerNode > 0 {
		return c.GPUsPerNode, nil
	}
	family := func(l string) string {
		l = strings.TrimPrefix(l, clusterPrefix)
		fam, _, _ := strings.Cut(l, "-")
		return fam
	}
	want := family(label)
	vals := map[int]bool{}
	for id, c := range f.Clusters {
		if family(id) == want && c.GPUsPerNode > 0 {
			vals[c.GPUsPerNode] = true
		}
	}
	switch len(vals) {
	case 1:
		for v := range vals {
			return v, nil
		}
	case 0:
		return 0, fmt.Errorf("cannot resolve gpus-per-node for '%s'", label)
	}
	var vs []int
	for v := range vals {
		vs = append(vs, v)
	}
	sort.Ints(vs)
	return 0, fmt.Errorf("ambiguous gpus-per-node for '%s': %v", label, vs)
}

// ExpandOptions are what the generator reads beside the master config.
type ExpandOptions struct {
	// Runners are the runners.yaml facts (node counts, DRAM budgets); nil:
	// points that need them say so in Refusal.
	Runners *RunnerFacts
	// Root is the InferenceX project root (inferencex-e2e/): recipe node
	// counts and recipe checks read recipes under it. "": not read.
	Root string

	// docs are the recipes read for node counts, by path: one read each.
	docs map[string]recipeDoc
}

type recipeDoc struct {
	doc     map[string]any
	missing bool
	err     error
}

// expandToday expands a today's-layout master config.
func expandToday(name string, root *yaml.Node, order []string, nodes map[string]*yaml.Node, o ExpandOptions) ([]MatrixPoint, error) {
	o.docs = map[string]recipeDoc{}
	issues := ValidateKeys(name, root)
	for _, key := range order {
		issues = append(issues, ValidateEntry(name, key, nodes[key])...)
	}
	if len(issues) > 0 {
		return nil, &ValidationError{Issues: issues}
	}
	var out []MatrixPoint
	for _, key := range order {
		pts, err := expandTodayEntry(name, key, nodes[key], o)
		if err != nil {
			return nil, err
		}
		out = append(out, pts...)
	}
	out = append(out, evalRows(out)...)
	for i := range out {
		out[i].Index = i
		out[i].syncFromRow()
	}
	return out, nil
}

// evalRows are the eval jobs of the benchmark rows as InferenceX's planner
// dispatches them (infx/matrix/plan.py@07db303e build_plan: benchmarks are
// generated with eval mode "none", evals with "subset" —
// generate.py@0f3de2c3 select_matrix_evals: mark_eval_entries on fresh
// rows, only the rows that run an eval kept, each made eval-only and
// without require-power).
func evalRows(bench []MatrixPoint) []MatrixPoint {
	pts := make([]MatrixPoint, len(bench))
	for i, p := range bench {
		p.Row = deepCopy(p.Row).(map[string]any)
		pts[i] = p
	}
	var out []MatrixPoint
	for _, p := range markTodayEvals(pts) {
		if p.Row["run-eval"] != true {
			continue
		}
		p.Row["eval-only"] = true
		delete(p.Row, "require-power")
		out = append(out, p)
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

func expandTodayEntry(file, key string, n *yaml.Node, o ExpandOptions) ([]MatrixPoint, error) {
	var e map[string]any
	if err := n.Decode(&e); err != nil {
		return nil, fmt.Errorf("master config %s:%d: %s: %w", file, n.Line, key, err)
	}
	multinode, _ := e["multinode"].(bool)
	disagg, _ := e["disagg"].(bool)
	dir, _ := e["srt-recipe-dir"].(string)
	base := MatrixPoint{
		Key: key, Multinode: multinode, Disagg: disagg, RecipeDir: dir,
		Image: str(e["image"]), Model: str(e["model"]), ModelPrefix: str(e["model-prefix"]),
		Precision: str(e["precision"]), Framework: str(e["framework"]), Runner: str(e["runner"]),
	}
	if gpn, err := o.Runners.gpusPerNode(base.Runner); err == nil {
		base.GPUsPerNode = gpn
	}
	base.Cluster = o.Runners.ClusterOf(base.Runner)
	scenNode := child(n, "scenarios")
	scen, _ := e["scenarios"].(map[string]any)
	var out []MatrixPoint
	fixed, _ := scen[FixedSeqLen].([]any)
	fixedNodes := child(scenNode, FixedSeqLen)
	for si, s := range fixed {
		seq := s.(map[string]any)
		ssNode := child(fixedNodes.Content[si], "search-space")
		for bi, b := range seq["search-space"].([]any) {
			pts, err := fixedRows(file, base, e, seq, b.(map[string]any), ssNode.Content[bi].Line, o)
			if err != nil {
				return nil, err
			}
			out = append(out, pts...)
		}
	}
	agentic, _ := scen[AgenticCoding].([]any)
	agNodes := child(scenNode, AgenticCoding)
	for si, s := range agentic {
		sc := s.(map[string]any)
		ssNode := child(agNodes.Content[si], "search-space")
		for bi, b := range sc["search-space"].([]any) {
			out = append(out, agenticRows(base, e, sc, b.(map[string]any), ssNode.Content[bi].Line, o)...)
		}
	}
	return out, nil
}

func str(v any) string { s, _ := v.(string); return s }

// concList is the generator's concurrency rule for a full sweep at step 2:
// conc-list when non-empty, else conc-start doubling to conc-end, which is
// always included.
func concList(b map[string]any) []int {
	if l, ok := b["conc-list"].([]any); ok && len(l) > 0 {
		out := make([]int, len(l))
		for i, v := range l {
			out[i], _ = v.(int)
		}
		return out
	}
	start, _ := b["conc-start"].(int)
	end, _ := b["conc-end"].(int)
	var out []int
	for c := start; c > 0 && c <= end; {
		out = append(out, c)
		if c == end {
			break
		}
		c = min(c*2, end)
	}
	return out
}

func intsAny(c []int) []any {
	out := make([]any, len(c))
	for i, v := range c {
		out[i] = v
	}
	return out
}

// componentMeta is generate.py's component_metadata: router and
// kv-p2p-transfer from the row, else the entry.
func componentMeta(row, b, e map[string]any) {
	for _, f := range []string{"router", "kv-p2p-transfer"} {
		if v, ok := b[f]; ok && v != nil {
			row[f] = v
		} else if v, ok := e[f]; ok && v != nil {
			row[f] = v
		}
	}
}

func identity(e map[string]any, runner string) map[string]any {
	return map[string]any{
		"image": e["image"], "model": e["model"], "model-prefix": e["model-prefix"],
		"precision": e["precision"], "framework": e["framework"], "runner": runner,
	}
}

// recipeFields copies the row's recipe references as paths from the
// project root, and records them on the point.
func recipeFields(row, b map[string]any, pt *MatrixPoint) {
	for _, f := range []string{"srt-recipe", "eval-srt-recipe"} {
		ref, ok := b[f].(string)
		if !ok || ref == "" {
			continue
		}
		row[f] = SrtRecipePath(pt.Multinode, pt.RecipeDir, ref)
	}
}

func fixedRows(file string, base MatrixPoint, e, seq, b map[string]any, line int, o ExpandOptions) ([]MatrixPoint, error) {
	isl, osl := seq["isl"].(int), seq["osl"].(int)
	requirePower, _ := seq["require-power"].(bool)
	if _, alias := seq["require-power"]; !alias {
		// The Python name, as generate.py reads it when the alias is absent.
		requirePower, _ = seq["require_power"].(bool)
	}
	if requirePower && (isl != evalISL || osl != evalOSL) {
		return nil, fmt.Errorf("master config %s:%d: %s: require-power rollout supports only fixed-sequence 8192/1024", file, line, base.Key)
	}
	spec := "none"
	if s, ok := b["spec-decoding"].(string); ok {
		spec = s
	}
	concs := concList(b)
	var out []MatrixPoint
	mk := func(conc any) MatrixPoint {
		pt := base
		pt.Line, pt.Scenario = line, FixedSeqLen
		row := identity(e, base.Runner)
		row["isl"], row["osl"] = isl, osl
		if requirePower {
			row["require-power"] = true
		}
		if base.Multinode {
			prefill, decode, _ := workerPair(b, base.Disagg)
			row["spec-decoding"], row["prefill"], row["decode"], row["conc"] = spec, prefill, decode, conc
			row["max-model-len"] = isl + osl + maxModelLenPad
			if p, _ := b["power"].(bool); p {
				row["power"] = true
			}
		} else {
			row["tp"] = b["tp"]
			row["pp"], row["dcp-size"], row["pcp-size"] = intOr(b["pp"], 1), intOr(b["dcp-size"], 1), intOr(b["pcp-size"], 1)
			row["conc"], row["max-model-len"] = conc, isl+osl+maxModelLenPad
			row["ep"], row["dp-attn"], row["spec-decoding"] = intOr(b["ep"], 1), boolOr(b["dp-attn"]), spec
		}
		recipeFields(row, b, &pt)
		row["exp-name"] = base.ModelPrefix + "_" + seqLenName(isl, osl)
		row["disagg"], row["run-eval"] = base.Disagg, false
		componentMeta(row, b, e)
		if base.Multinode {
			pt.nodeCount(row, b, o)
		}
		pt.Row = row
		return pt
	}
	if base.Multinode {
		return []MatrixPoint{mk(intsAny(concs))}, nil
	}
	for _, c := range concs {
		out = append(out, mk(c))
	}
	return out, nil
}

func agenticRows(base MatrixPoint, e, sc, b map[string]any, line int, o ExpandOptions) []MatrixPoint {
	spec := "none"
	if s, ok := b["spec-decoding"].(string); ok {
		spec = s
	}
	kv := "none"
	if s, ok := b["kv-offloading"].(string); ok {
		kv = s
	}
	backend, _ := b["kv-offload-backend"].(map[string]any)
	pt0 := base
	pt0.Line, pt0.Scenario = line, AgenticCoding
	var prefill, decode map[string]any
	if base.Multinode {
		prefill, decode, _ = workerPair(b, base.Disagg)
	}
	dram, dramErr := dramBudgetGB(sc, b, base.Runner, o.Runners)
	var out []MatrixPoint
	for _, c := range concList(b) {
		pt := pt0
		row := identity(e, base.Runner)
		var exp string
		if base.Multinode {
			row["spec-decoding"], row["prefill"], row["decode"], row["conc"] = spec, prefill, decode, []any{c}
			suffix := ""
			if kv != "none" {
				suffix = "_" + kvSuffix(kv, backend)
			}
			exp = fmt.Sprintf("%s_%s_%s_conc%d%s", base.ModelPrefix, workerTag(prefill, "p"), workerTag(decode, "d"), c, suffix)
			if p, _ := b["power"].(bool); p {
				row["power"] = true
			}
		} else {
			tp := b["tp"]
			row["tp"], row["pp"], row["dcp-size"], row["pcp-size"] = tp, intOr(b["pp"], 1), intOr(b["dcp-size"], 1), intOr(b["pcp-size"], 1)
			row["ep"], row["dp-attn"], row["spec-decoding"], row["conc"] = intOr(b["ep"], 1), boolOr(b["dp-attn"]), spec, c
			exp = fmt.Sprintf("%s_tp%v_conc%d_%s", base.ModelPrefix, tp, c, kvSuffix(kv, backend))
			if spec != "none" {
				exp += "_spec-" + spec
			}
		}
		recipeFields(row, b, &pt)
		row["kv-offloading"], row["total-cpu-dram-gb"], row["duration"], row["exp-name"] = kv, dram, agenticDuration, exp
		if base.Multinode {
			row["disagg"] = base.Disagg
		}
		row["scenario-type"] = AgenticCoding
		if backend != nil {
			row["kv-offload-backend"] = backend
		}
		componentMeta(row, b, e)
		if dramErr != nil {
			pt.Refusal = dramErr.Error()
		}
		if base.Multinode {
			pt.nodeCount(row, b, o)
		}
		pt.Row = row
		out = append(out, pt)
	}
	return out
}

func intOr(v any, d int) any {
	if v == nil {
		return d
	}
	return v
}

func boolOr(v any) any {
	if v == nil {
		return false
	}
	return v
}

// kvSuffix is generate.py's agentic_kv_offload_suffix.
func kvSuffix(kv string, backend map[string]any) string {
	if kv == "none" {
		return "kvnone"
	}
	return fmt.Sprintf("kv%s-%v", kv, backend["name"])
}

// workerTag is multinode_agentic_exp_name's per-role tag.
func workerTag(w map[string]any, role string) string {
	tag := fmt.Sprintf("%s%vx%v", role, w["num-worker"], w["tp"])
	if ep := intOf(w["ep"], 1); ep != 1 {
		tag += fmt.Sprintf("ep%d", ep)
	}
	if dp, _ := w["dp-attn"].(bool); dp {
		tag += "dpa"
	}
	return tag
}

// dramBudgetGB is generate.py's agentic_dram_offload_gb: 0 unless the
// point offloads to DRAM; else the runner cluster's available DRAM (capped
// at 3 TB) × dram-utilization × the share of a node's GPUs the server (or
// the prefill worker) uses, in whole decimal GB.
func dramBudgetGB(sc, b map[string]any, runner string, f *RunnerFacts) (int, error) {
	if kv, _ := b["kv-offloading"].(string); kv != "dram" {
		return 0, nil
	}
	c, ok := f.exact(runner)
	if !ok || c.DRAMMiB == 0 || c.GPUsPerNode == 0 {
		if f == nil {
			return 0, fmt.Errorf("the DRAM budget of runner %q needs runners.yaml (--runners)", runner)
		}
		return 0, fmt.Errorf("runner '%s' requires 'available-cpu-dram-mib' and 'gpus-per-node' in runner hardware metadata", runner)
	}
	gpn := c.GPUsPerNode
	var used int
	if w, ok := b["worker"].(map[string]any); ok {
		u, err := replicaGPUs(w, gpn)
		if err != nil {
			return 0, err
		}
		used = u
	} else if w, ok := b["prefill"].(map[string]any); ok {
		u, err := replicaGPUs(w, gpn)
		if err != nil {
			return 0, err
		}
		used = u
	} else {
		used = intOf(b["tp"], 0) * intOf(b["pp"], 1) * intOf(b["pcp-size"], 1)
		if used > gpn {
			return 0, fmt.Errorf("tp=%v with pp=%d and pcp-size=%d requires %d GPUs and exceeds gpus-per-node=%d for runner '%s'",
				b["tp"], intOf(b["pp"], 1), intOf(b["pcp-size"], 1), used, gpn, runner)
		}
	}
	util, _ := new(big.Rat).SetString(pyfloat.Repr(floatOf(sc["dram-utilization"])))
	if util == nil {
		return 0, fmt.Errorf("dram-utilization %v is not a number", sc["dram-utilization"])
	}
	avail := min(c.DRAMMiB, maxAgenticDRAMMiB)
	x := new(big.Rat).SetInt64(int64(avail) * bytesPerMiB)
	x.Mul(x, util)
	x.Mul(x, big.NewRat(int64(used), int64(gpn)))
	x.Quo(x, big.NewRat(bytesPerGB, 1))
	q := new(big.Int).Quo(x.Num(), x.Denom()) // truncation, as int() of a positive Decimal
	return int(q.Int64()), nil
}

func floatOf(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	}
	return math.NaN()
}

// replicaGPUs is generate.py's worker_gpus_per_node.
func replicaGPUs(w map[string]any, gpn int) (int, error) {
	per := intOf(w["tp"], 0) * intOf(w["pp"], 1) * intOf(w["pcp-size"], 1)
	if per > gpn {
		if per%gpn != 0 {
			return 0, fmt.Errorf("worker tp*pp*pcp-size=%d spans multiple nodes but is not a multiple of gpus-per-node=%d", per, gpn)
		}
		return gpn, nil
	}
	if per <= 0 || gpn%per != 0 {
		return 0, fmt.Errorf("worker tp*pp*pcp-size=%d does not divide gpus-per-node=%d evenly", per, gpn)
	}
	return per, nil
}

// nodeCount is generate.py's add_multinode_node_count: num-nodes for an
// aggregated entry; else the recipe's own count when the recipe is read
// (recipe_node_count), else each role's workers over the GPUs per node of
// its hardware (or the runner). What cannot be counted leaves node-count
// out and says why in NodeCountNote.
func (pt *MatrixPoint) nodeCount(row, b map[string]any, o ExpandOptions) {
	if n, ok := b["num-nodes"].(int); ok && !pt.Disagg {
		row["node-count"] = n
		return
	}
	if ref, _ := row["srt-recipe"].(string); ref != "" && o.Root != "" {
		n, ok, err := recipeNodeCount(o.Root, ref, o.docs)
		if err != nil {
			pt.NodeCountNote = err.Error()
			return
		}
		if ok {
			row["node-count"] = n
			return
		}
	}
	total := 0
	for _, role := range []string{"prefill", "decode"} {
		w := row[role].(map[string]any)
		n, err := roleNodes(w, role, pt.Runner, o.Runners)
		if err != nil {
			pt.NodeCountNote = err.Error()
			return
		}
		total += n
	}
	row["node-count"] = total
}

var nodesSetting = map[string]*regexp.Regexp{
	"prefill": regexp.MustCompile(`^PREFILL_NODES=(\d+)$`),
	"decode":  regexp.MustCompile(`^DECODE_NODES=(\d+)$`),
}

// roleNodes is generate.py's worker_node_count.
func roleNodes(w map[string]any, role, runner string, f *RunnerFacts) (int, error) {
	var vals []int
	list, _ := w["additional-settings"].([]any)
	for _, s := range list {
		if m := nodesSetting[role].FindStringSubmatch(str(s)); m != nil {
			v, _ := strconv.Atoi(m[1])
			vals = append(vals, v)
		}
	}
	if len(vals) > 0 {
		for _, v := range vals {
			if v != vals[0] || v <= 0 {
				return 0, fmt.Errorf("conflicting or invalid %s_NODES settings: %v", strings.ToUpper(role), vals)
			}
		}
		return vals[0], nil
	}
	label := runner
	if h, _ := w["hardware"].(string); h != "" {
		label = h
	}
	gpn, err := f.gpusPerNode(label)
	if err != nil {
		return 0, err
	}
	gpus := intOf(w["num-worker"], 0) * intOf(w["tp"], 0) * intOf(w["pp"], 1) * intOf(w["pcp-size"], 1)
	return (gpus + gpn - 1) / gpn, nil
}

// maxRecipeBytes bounds a recipe read for its node count.
const maxRecipeBytes = 4 << 20

// recipeNodeCount is generate.py's recipe_node_count over a row's
// srt-recipe (a path from the project root, selector kept): false when the
// recipe has no authoritative count (missing file, a zip selector, a
// variant that is not schema 2).
func recipeNodeCount(root, ref string, docs map[string]recipeDoc) (int, bool, error) {
	file, selector, _ := strings.Cut(ref, ":")
	p := filepath.Join(root, filepath.FromSlash(file))
	rd, seen := docs[p]
	if !seen {
		rd = readRecipeDoc(p, file)
		if docs != nil {
			docs[p] = rd
		}
	}
	if rd.missing {
		return 0, false, nil
	}
	if rd.err != nil {
		return 0, false, rd.err
	}
	doc := rd.doc
	if b, ok := doc["base"].(map[string]any); ok {
		// srtctl merges a named variant over base; zip groups and
		// non-schema-2 variants have no authoritative count here.
		if _, has := doc[selector]; selector != "base" && (!strings.HasPrefix(selector, "override_") || !has) {
			return 0, false, nil
		}
		var variant map[string]any
		if selector != "base" {
			variant, _ = doc[selector].(map[string]any)
		}
		merged := mergeRecipe(b, variant)
		if _, ok := merged["schema"]; !ok {
			merged["schema"] = doc["schema"]
		}
		if merged["schema"] != 2 {
			return 0, false, nil
		}
		doc = merged
	}
	if doc["schema"] != 2 {
		return 0, false, fmt.Errorf("srt-slurm recipes must declare schema: 2: %s", file)
	}
	roles, _ := doc["roles"].(map[string]any)
	if len(roles) == 0 {
		return 0, false, fmt.Errorf("recipe has no worker roles: %s", file)
	}
	nodes := 0
	for name, r := range roles {
		rm, _ := r.(map[string]any)
		v, ok := rm["nodes"]
		if !ok {
			return 0, false, fmt.Errorf("recipe role %q must specify nodes: %s", name, file)
		}
		switch x := v.(type) {
		case int:
			nodes += x
		case string:
			if x != "colocate" {
				n, err := strconv.Atoi(x)
				if err != nil {
					return 0, false, fmt.Errorf("recipe role %q: nodes %q: %s", name, x, file)
				}
				nodes += n
			}
		default:
			return 0, false, fmt.Errorf("recipe role %q: nodes %v: %s", name, v, file)
		}
	}
	aux, err := auxiliaryNodes(doc)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %w", file, err)
	}
	return nodes + aux, true, nil
}

func readRecipeDoc(p, file string) recipeDoc {
	if _, err := os.Stat(p); err != nil {
		return recipeDoc{missing: true}
	}
	data, err := readlimit.ReadFile(p, maxRecipeBytes)
	if err != nil {
		return recipeDoc{err: fmt.Errorf("reading %s for its node count: %w", file, err)}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return recipeDoc{err: fmt.Errorf("%s: %w", file, err)}
	}
	return recipeDoc{doc: doc}
}

// mergeRecipe is generate.py's _merge_recipe (srtctl's variant merge: a
// null deletes, mappings merge, anything else replaces).
func mergeRecipe(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		switch {
		case v == nil:
			delete(out, k)
		default:
			vm, ok1 := v.(map[string]any)
			bm, ok2 := out[k].(map[string]any)
			if ok1 && ok2 {
				out[k] = mergeRecipe(bm, vm)
			} else {
				out[k] = v
			}
		}
	}
	return out
}

// auxiliaryNodes is generate.py's recipe_auxiliary_node_count.
func auxiliaryNodes(r map[string]any) (int, error) {
	m := func(v any) map[string]any { x, _ := v.(map[string]any); return x }
	services, _ := r["services"].([]any)
	pool := 0
	var discovery []map[string]any
	for _, s := range services {
		sm := m(s)
		if en, ok := sm["enabled"].(bool); ok && !en {
			continue
		}
		pool += intOf(sm["nodes"], 0)
		if t := str(sm["type"]); t == "etcd" || t == "nats" {
			discovery = append(discovery, sm)
		}
	}
	infra, _ := m(r["infra"])["etcd_nats_dedicated_node"].(bool)
	if len(discovery) > 0 {
		seen := map[bool]bool{}
		for _, d := range discovery {
			seen[str(m(d["placement"])["node"]) == "dedicated"] = true
		}
		if len(seen) != 1 {
			return 0, fmt.Errorf("recipe etcd and nats must agree on dedicated placement")
		}
		for v := range seen {
			infra = v
		}
	}
	dedicated := 0
	if infra {
		dedicated = 1
	}
	for _, s := range [][2]string{{"frontend", "dedicated_node"}, {"benchmark", "client_dedicated_node"}} {
		sec := m(r[s[0]])
		legacy, _ := sec[s[1]].(bool)
		if str(m(sec["placement"])["node"]) == "dedicated" || legacy {
			dedicated++
		}
	}
	colocate := true
	if v, ok := m(r["benchmark"])["colocate_with_frontend"].(bool); ok {
		colocate = v
	}
	if dedicated > 0 && colocate {
		dedicated = 1
	}
	return pool + dedicated, nil
}

// markTodayEvals is generate.py's mark_eval_entries (the default eval
// policy) followed by drop_app_colliding_evals, over today's rows:
//   - agentic rows of kimik3 and minimaxm3 run their vendor suite (a
//     multi-node one at its highest concurrency);
//   - single-node 8k1k rows evaluate at the highest and the median of the
//     eligible (>= 16) concurrencies of their group (model, runner,
//     framework, precision, isl, osl, spec-decoding, dp-attn);
//   - multi-node 8k1k rows at the highest eligible concurrency per
//     parallelism group (every field but concurrency, eval fields and
//     exp-name), the first on a tie;
//   - agentic rows run GSM8K: single-node at the highest concurrency per
//     (model, runner, framework, precision, spec-decoding, dp-attn, image),
//     multi-node at the highest eligible concurrency per parallelism group,
//     with one fallback at the highest concurrency for a deployment that
//     has none; a vendor-suite row picked for GSM8K gets an extra
//     eval-only GSM8K row at the end;
//   - then one eval per InferenceX-app identity: rows without KV
//     offloading first, later ones lose the concurrencies already claimed.
func markTodayEvals(pts []MatrixPoint) []MatrixPoint {
	rows := make([]map[string]any, len(pts))
	for i := range pts {
		rows[i] = pts[i].Row
	}
	evalIdx := map[int]bool{}
	mnConc := map[int]int{}
	vendor := map[int][2]string{}
	agentic := func(r map[string]any) bool { return r["scenario-type"] == AgenticCoding }
	for i, r := range rows {
		if !agentic(r) {
			continue
		}
		if spec, ok := vendorEvals[str(r["model-prefix"])]; ok {
			vendor[i] = spec
			evalIdx[i] = true
			if _, mn := r["prefill"]; mn {
				mnConc[i] = maxInt(concsOf(r["conc"]))
			}
		}
	}
	eligible := func(r map[string]any) []int {
		var out []int
		for _, c := range concsOf(r["conc"]) {
			if c >= MinEvalConc {
				out = append(out, c)
			}
		}
		sort.Ints(out)
		return out
	}
	is8k1k := func(r map[string]any) bool { return r["isl"] == evalISL && r["osl"] == evalOSL }

	// Single-node fixed-sequence groups.
	type member struct{ idx, conc int }
	var snOrder []string
	sn := map[string][]member{}
	for i, r := range rows {
		if _, ok := r["tp"]; !ok || !is8k1k(r) || len(eligible(r)) == 0 {
			continue
		}
		k := canonical([]any{r["model"], r["runner"], r["framework"], r["precision"], r["isl"], r["osl"], r["spec-decoding"], r["dp-attn"]})
		if _, seen := sn[k]; !seen {
			snOrder = append(snOrder, k)
		}
		sn[k] = append(sn[k], member{i, intOf(r["conc"], 0)})
	}
	for _, k := range snOrder {
		set := map[int]bool{}
		for _, m := range sn[k] {
			set[m.conc] = true
		}
		var vals []int
		for c := range set {
			vals = append(vals, c)
		}
		sort.Ints(vals)
		targets := map[int]bool{vals[len(vals)-1]: true, vals[len(vals)/2]: true}
		for _, m := range sn[k] {
			if targets[m.conc] {
				evalIdx[m.idx] = true
			}
		}
	}
	// Multi-node fixed-sequence groups.
	// best is each group's member with the highest concurrency (the first
	// on a tie, as Python's max), in group order.
	best := func(groups map[string][]member, order []string) []member {
		var out []member
		for _, k := range order {
			b := groups[k][0]
			for _, m := range groups[k][1:] {
				if m.conc > b.conc {
					b = m
				}
			}
			out = append(out, b)
		}
		return out
	}
	var mnOrder []string
	mn := map[string][]member{}
	for i, r := range rows {
		if _, ok := r["tp"]; ok {
			continue
		}
		if _, ok := r["prefill"]; !ok || !is8k1k(r) {
			continue
		}
		el := eligible(r)
		if len(el) == 0 {
			continue
		}
		k := parallelismKeyRow(r)
		if _, seen := mn[k]; !seen {
			mnOrder = append(mnOrder, k)
		}
		mn[k] = append(mn[k], member{i, el[len(el)-1]})
	}
	for _, b := range best(mn, mnOrder) {
		evalIdx[b.idx] = true
		mnConc[b.idx] = b.conc
	}
	// Agentic GSM8K.
	var agSnOrder, agMnOrder, depOrder []string
	agSn, agMn := map[string][]member{}, map[string][]member{}
	fallback := map[string]member{}
	for i, r := range rows {
		if !agentic(r) {
			continue
		}
		if _, ok := r["prefill"]; ok {
			top := maxInt(concsOf(r["conc"]))
			dep := canonical([]any{r["model"], r["runner"], r["framework"], r["precision"]})
			if f, ok := fallback[dep]; !ok || top > f.conc {
				if !ok {
					depOrder = append(depOrder, dep)
				}
				fallback[dep] = member{i, top}
			}
			if el := eligible(r); len(el) > 0 {
				k := parallelismKeyRow(r)
				if _, seen := agMn[k]; !seen {
					agMnOrder = append(agMnOrder, k)
				}
				agMn[k] = append(agMn[k], member{i, el[len(el)-1]})
			}
			continue
		}
		k := canonical([]any{r["model"], r["runner"], r["framework"], r["precision"], r["spec-decoding"], r["dp-attn"], r["image"]})
		if _, seen := agSn[k]; !seen {
			agSnOrder = append(agSnOrder, k)
		}
		agSn[k] = append(agSn[k], member{i, maxInt(concsOf(r["conc"]))})
	}
	type pick struct {
		idx, conc int
		hasConc   bool
	}
	var picks []pick
	for _, b := range best(agSn, agSnOrder) {
		picks = append(picks, pick{idx: b.idx})
	}
	covered := map[string]bool{}
	for _, b := range best(agMn, agMnOrder) {
		picks = append(picks, pick{b.idx, b.conc, true})
		covered[canonical([]any{rows[b.idx]["model"], rows[b.idx]["runner"], rows[b.idx]["framework"], rows[b.idx]["precision"]})] = true
	}
	for _, dep := range depOrder {
		if !covered[dep] {
			f := fallback[dep]
			picks = append(picks, pick{f.idx, f.conc, true})
		}
	}
	var extra []pick
	for _, p := range picks {
		if _, ok := vendor[p.idx]; ok {
			extra = append(extra, p)
			continue
		}
		evalIdx[p.idx] = true
		if p.hasConc {
			mnConc[p.idx] = p.conc
		}
	}
	for i, r := range rows {
		r["run-eval"] = evalIdx[i]
		if evalIdx[i] {
			fw, suite := defaultEvalFramework, ""
			if v, ok := vendor[i]; ok {
				fw, suite = v[0], v[1]
			}
			r["eval-framework"], r["eval-suite"] = fw, suite
		}
		if c, ok := mnConc[i]; ok {
			r["eval-conc"] = c
		}
	}
	for _, p := range extra {
		r := copyRow(rows[p.idx])
		r["run-eval"], r["eval-only"], r["eval-framework"], r["eval-suite"] = true, true, defaultEvalFramework, ""
		delete(r, "require-power")
		if p.hasConc {
			r["eval-conc"] = p.conc
		}
		pt := pts[p.idx]
		pt.Row = r
		pts = append(pts, pt)
		rows = append(rows, r)
	}
	dropCollidingEvals(rows)
	out := pts[:0:0]
	for i, r := range rows {
		if eo, _ := r["eval-only"].(bool); eo && r["run-eval"] != true {
			continue
		}
		out = append(out, pts[i])
	}
	return out
}

func copyRow(r map[string]any) map[string]any {
	out := make(map[string]any, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

func concsOf(v any) []int {
	switch x := v.(type) {
	case int:
		return []int{x}
	case []any:
		out := make([]int, 0, len(x))
		for _, c := range x {
			out = append(out, intOf(c, 0))
		}
		return out
	case []int:
		return x
	}
	return nil
}

func maxInt(v []int) int {
	m := 0
	for i, x := range v {
		if i == 0 || x > m {
			m = x
		}
	}
	return m
}

// parallelismKeyRow is generate.py's _multinode_parallelism_key.
func parallelismKeyRow(r map[string]any) string {
	c := copyRow(r)
	for _, f := range []string{"conc", "run-eval", "eval-only", "eval-conc", "eval-all-concs", "exp-name", "eval-framework", "eval-suite"} {
		delete(c, f)
	}
	return canonical(c)
}

// dropCollidingEvals is generate.py's drop_app_colliding_evals.
func dropCollidingEvals(rows []map[string]any) {
	var cand []map[string]any
	for _, r := range rows {
		if r["run-eval"] == true {
			cand = append(cand, r)
		}
	}
	sort.SliceStable(cand, func(a, b int) bool {
		return offloads(cand[a]) < offloads(cand[b])
	})
	claimed := map[string]bool{}
	for _, r := range cand {
		concs := evalConcs(r)
		var free []int
		for _, c := range concs {
			if id := appIdentity(r, c); !claimed[id] {
				free = append(free, c)
			}
		}
		for _, c := range free {
			claimed[appIdentity(r, c)] = true
		}
		if len(free) == len(concs) {
			continue
		}
		if len(free) > 0 {
			r["conc"] = intsAny(free)
			continue
		}
		r["run-eval"] = false
		for _, f := range []string{"eval-framework", "eval-suite", "eval-conc", "eval-all-concs"} {
			delete(r, f)
		}
	}
}

func offloads(r map[string]any) int {
	if kv, ok := r["kv-offloading"].(string); ok && kv != "none" {
		return 1
	}
	return 0
}

func evalConcs(r map[string]any) []int {
	if _, mn := r["prefill"]; mn && r["eval-all-concs"] != true {
		return []int{intOf(r["eval-conc"], 0)}
	}
	set := map[int]bool{}
	var out []int
	for _, c := range concsOf(r["conc"]) {
		if !set[c] {
			set[c] = true
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out
}

// appIdentity is generate.py's app_eval_identity.
func appIdentity(r map[string]any, conc int) string {
	var topo []any
	if _, mn := r["prefill"]; mn {
		for _, role := range []string{"prefill", "decode"} {
			w, _ := r[role].(map[string]any)
			topo = append(topo, []any{w["tp"], w["ep"], w["dp-attn"], w["num-worker"]})
		}
	} else {
		topo = []any{r["tp"], r["ep"], r["dp-attn"]}
	}
	spec := r["spec-decoding"]
	if spec == nil {
		spec = "none"
	}
	disagg := r["disagg"]
	if disagg == nil {
		disagg = false
	}
	return canonical([]any{r["model"], r["model-prefix"], r["runner"], r["framework"], r["precision"], spec, disagg, topo,
		r["eval-framework"], r["eval-suite"], r["isl"], r["osl"], conc})
}

// rowOrder is the order generate.py@0f3de2c3 inserts a row's keys in
// (the dict order its JSON keeps), by row kind; keys a row lacks are
// skipped. power's place is assumed beside the recipe references (the
// stored generator predates it).
var rowOrder = map[[2]bool][]string{
	// {agentic, multinode}
	{false, true}: {"image", "model", "model-prefix", "precision", "framework", "runner", "isl", "osl", "require-power",
		"spec-decoding", "prefill", "decode", "conc", "max-model-len", "srt-recipe", "eval-srt-recipe", "power",
		"exp-name", "disagg", "run-eval", "router", "kv-p2p-transfer", "node-count",
		"eval-framework", "eval-suite", "eval-conc", "eval-only"},
	{false, false}: {"image", "model", "model-prefix", "precision", "framework", "runner", "isl", "osl", "require-power",
		"tp", "pp", "dcp-size", "pcp-size", "conc", "max-model-len", "ep", "dp-attn", "spec-decoding",
		"srt-recipe", "eval-srt-recipe", "exp-name", "disagg", "run-eval", "router",
		"eval-framework", "eval-suite", "eval-only"},
	{true, true}: {"image", "model", "model-prefix", "precision", "framework", "runner",
		"spec-decoding", "prefill", "decode", "conc", "srt-recipe", "eval-srt-recipe", "power",
		"kv-offloading", "total-cpu-dram-gb", "duration", "exp-name", "disagg", "scenario-type", "kv-offload-backend",
		"router", "kv-p2p-transfer", "node-count", "run-eval", "eval-framework", "eval-suite", "eval-conc", "eval-only"},
	{true, false}: {"image", "model", "model-prefix", "precision", "framework", "runner",
		"tp", "pp", "dcp-size", "pcp-size", "ep", "dp-attn", "spec-decoding", "conc", "srt-recipe", "eval-srt-recipe",
		"kv-offloading", "total-cpu-dram-gb", "duration", "exp-name", "scenario-type", "kv-offload-backend",
		"router", "run-eval", "eval-framework", "eval-suite", "eval-only"},
}

// RowJSON is a today's point's row as the generator prints it: a JSON
// object, its keys in the generator's order (the manifest's "matrix" of
// `generate`), nested mappings' keys in their master-config order being
// unknown here and so sorted.
func (p MatrixPoint) RowJSON() ([]byte, error) {
	if p.Row == nil {
		return nil, fmt.Errorf("%s: not a today's-layout point", p.Name())
	}
	order := rowOrder[[2]bool{p.Scenario == AgenticCoding, p.Multinode}]
	seen := map[string]bool{}
	var keys []string
	for _, k := range order {
		if _, ok := p.Row[k]; ok {
			keys, seen[k] = append(keys, k), true
		}
	}
	var rest []string
	for k := range p.Row {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	keys = append(keys, rest...)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(p.Row[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", p.Name(), k, err)
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
