package master

import (
	"bytes"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/master/fingerprint"
)

// This file expands the whole master config into the matrix InferenceX's
// workflow runs: one point per multi-node fixed-seq-len search-space entry,
// with the fields, names and eval selection of InferenceX's generator
// (utils/matrix_logic/generate_sweep_configs.py, `full-sweep --multi-node
// --scenario-type fixed-seq-len --run-evals`). testdata/README.md records
// which version of the generator the recorded outputs come from; the test
// compares this expansion with them field by field.
//
// Single-node entries and agentic-coding scenarios are not expanded: they
// do not run on Slurm through srt-slurm recipes, which is all a matrix of
// slurmbench points can be.

// seqLenNames are the generator's short names for ISL/OSL pairs
// (seq_len_stoi); any other pair is named "<isl>_<osl>".
var seqLenNames = map[[2]int]string{{1024, 1024}: "1k1k", {8192, 1024}: "8k1k"}

// evalISL, evalOSL: the generator runs evals on 8k1k points only.
const (
	evalISL, evalOSL = 8192, 1024
	// MinEvalConc is the lowest concurrency the generator evaluates at.
	MinEvalConc = 16
	// maxModelLenPad is what the generator adds to isl+osl for max-model-len.
	maxModelLenPad = 256
)

// MatrixPoint is one row of the matrix: one allocation's worth of work as
// InferenceX's workflow dispatches it (one GitHub job today).
type MatrixPoint struct {
	Key   string // the master config key
	Index int    // the point's position among the key's expanded points
	Line  int    // line of the search-space entry in the master config

	Image, Model, ModelPrefix, Precision, Framework, Runner string
	ISL, OSL                                                int
	SpecDecoding                                            string
	// Prefill and Decode are the workers as the generator passes them on:
	// the master config's mapping with pp, dcp-size and pcp-size defaulted
	// to 1 (an aggregated entry's `worker` becomes a one-worker prefill and a
	// zero-worker decode without additional-settings).
	Prefill, Decode map[string]any
	Conc            []int
	MaxModelLen     int
	ExpName         string
	Disagg          bool
	RunEval         bool
	EvalConc        int // 0: no eval
	// Meta holds router and kv-p2p-transfer when set on the point or entry.
	Meta map[string]any

	// ConfigFile is CONFIG_FILE ("recipes/<path>"), Selector its ":x" part
	// (September's layout; today's rows name SrtRecipe instead).
	ConfigFile, Selector string

	// Today's layout (srt-recipe rows; see today.go).
	Multinode bool
	Scenario  string // FixedSeqLen or AgenticCoding
	RecipeDir string // the entry's srt-recipe-dir
	// SrtRecipe and EvalSrtRecipe are the row's recipe references as the
	// generator writes them: the path from the InferenceX project root,
	// ":<selector>" kept (Selector holds SrtRecipe's).
	SrtRecipe, EvalSrtRecipe string
	Power, RequirePower      bool
	EvalOnly                 bool
	EvalFramework, EvalSuite string
	KVOffloading             string
	TotalCPUDramGB           int
	NodeCount                int // the generator's node-count; 0: not computed (NodeCountNote says why)
	GPUsPerNode              int // the runner label's, from runners.yaml; 0: unknown
	// Cluster is the one cluster the runner label schedules on
	// (RunnerFacts.ClusterOf); "" when it spans several or is unknown.
	Cluster       string
	NodeCountNote string
	// Refusal says why the point cannot be planned as generated (e.g. its
	// DRAM budget needs runners.yaml facts that are missing).
	Refusal string
	// Row is the generator's row for a today's point (nil for the older
	// layouts): the fields the recipe fingerprint hashes.
	Row map[string]any
}

// syncFromRow fills the typed fields of a today's point from its row.
func (p *MatrixPoint) syncFromRow() {
	r := p.Row
	p.ISL, p.OSL = intOf(r["isl"], 0), intOf(r["osl"], 0)
	p.SpecDecoding = str(r["spec-decoding"])
	p.Conc = concsOf(r["conc"])
	p.MaxModelLen = intOf(r["max-model-len"], 0)
	p.ExpName = str(r["exp-name"])
	p.RunEval, _ = r["run-eval"].(bool)
	p.EvalOnly, _ = r["eval-only"].(bool)
	p.EvalConc = intOf(r["eval-conc"], 0)
	p.EvalFramework, p.EvalSuite = str(r["eval-framework"]), str(r["eval-suite"])
	p.Power, _ = r["power"].(bool)
	p.RequirePower, _ = r["require-power"].(bool)
	p.KVOffloading = str(r["kv-offloading"])
	p.TotalCPUDramGB = intOf(r["total-cpu-dram-gb"], 0)
	p.NodeCount = intOf(r["node-count"], 0)
	p.SrtRecipe, p.EvalSrtRecipe = str(r["srt-recipe"]), str(r["eval-srt-recipe"])
	_, p.Selector, _ = strings.Cut(p.SrtRecipe, ":")
	if w, ok := r["prefill"].(map[string]any); ok {
		p.Prefill, p.Decode = w, r["decode"].(map[string]any)
	} else {
		// A single-node row: its one server as a one-worker prefill.
		p.Prefill = map[string]any{"num-worker": 1, "tp": r["tp"], "pp": r["pp"], "dcp-size": r["dcp-size"],
			"pcp-size": r["pcp-size"], "ep": r["ep"], "dp-attn": r["dp-attn"]}
		p.Decode = map[string]any{"num-worker": 0}
	}
	p.Meta = map[string]any{}
	for _, f := range []string{"router", "kv-p2p-transfer"} {
		if v, ok := r[f]; ok {
			p.Meta[f] = v
		}
	}
}

// Hardware is the per-pool GPU SKU of a heterogeneous disaggregated point
// (the workflow's PREFILL_HARDWARE and DECODE_HARDWARE); "" for both when
// the pools are homogeneous.
func (p MatrixPoint) Hardware() (prefill, decode string) {
	return str(p.Prefill["hardware"]), str(p.Decode["hardware"])
}

// KVOffloadBackend is an agentic point's kv-offload-backend ({name,
// version?}), nil when it has none.
func (p MatrixPoint) KVOffloadBackend() map[string]any {
	b, _ := p.Row["kv-offload-backend"].(map[string]any)
	return b
}

// Fingerprint is the point's recipe fingerprint given the composed,
// cluster-free bound recipe(s) it runs (package fingerprint); with none,
// a row that names no srt-recipe hashes its fields alone. An older
// layout's point hashes its generator row (config-key aside).
func (p MatrixPoint) Fingerprint(recipes ...any) (string, error) {
	row := p.Row
	if row == nil {
		row = p.GeneratorRow()
		delete(row, "config-key")
	}
	return fingerprint.Recipe(row, recipes...)
}

// RecipeFile is the path of the point's recipe from the InferenceX
// project root, without its selector ("" for the older layouts).
func (p MatrixPoint) RecipeFile() string {
	f, _, _ := strings.Cut(p.SrtRecipe, ":")
	return f
}

// Name is the point's display name: key, index and sequence lengths.
func (p MatrixPoint) Name() string {
	seq := seqLenName(p.ISL, p.OSL)
	if p.Scenario == AgenticCoding {
		seq = "agentic"
	}
	if p.EvalOnly {
		seq += ",eval-only"
	}
	return fmt.Sprintf("%s#%d(%s)", p.Key, p.Index, seq)
}

// GPUs is the GPU count of the point's workers (num-worker × tp × pp × pcp
// per side), the figure the plan's GPU-hours use when no plan is built.
func (p MatrixPoint) GPUs() int {
	if p.Row != nil && !p.Multinode {
		return intOf(p.Row["tp"], 0) * intOf(p.Row["pp"], 1) * intOf(p.Row["pcp-size"], 1)
	}
	n := 0
	for _, w := range []map[string]any{p.Prefill, p.Decode} {
		n += intOf(w["num-worker"], 0) * intOf(w["tp"], 0) * intOf(w["pp"], 1) * intOf(w["pcp-size"], 1)
	}
	return n
}

// AllocGPUs is the GPU count of the allocation the point needs when no
// plan says it: a single-node point's server; a multi-node point's
// node-count × GPUs per node when both are known, else its workers'.
func (p MatrixPoint) AllocGPUs() int {
	if p.Row != nil && p.Multinode && p.NodeCount > 0 && p.GPUsPerNode > 0 {
		return p.NodeCount * p.GPUsPerNode
	}
	return p.GPUs()
}

// GeneratorRow is the point as the generator prints it (its JSON keys),
// with "config-key" added: what the parity test compares.
func (p MatrixPoint) GeneratorRow() map[string]any {
	if p.Row != nil {
		row := copyRow(p.Row)
		row["config-key"] = p.Key
		return row
	}
	row := map[string]any{
		"image": p.Image, "model": p.Model, "model-prefix": p.ModelPrefix, "precision": p.Precision,
		"framework": p.Framework, "runner": p.Runner, "isl": p.ISL, "osl": p.OSL,
		"spec-decoding": p.SpecDecoding, "prefill": p.Prefill, "decode": p.Decode, "conc": p.Conc,
		"max-model-len": p.MaxModelLen, "exp-name": p.ExpName, "disagg": p.Disagg, "run-eval": p.RunEval,
		"config-key": p.Key,
	}
	if p.RunEval {
		row["eval-conc"] = p.EvalConc
	}
	for k, v := range p.Meta {
		row[k] = v
	}
	return row
}

func seqLenName(isl, osl int) string {
	if s, ok := seqLenNames[[2]int{isl, osl}]; ok {
		return s
	}
	return fmt.Sprintf("%d_%d", isl, osl)
}

// Expand reads a master config (its bytes; name for errors) and returns
// every multi-node fixed-seq-len point in file order, evals marked.
func Expand(name string, data []byte) ([]MatrixPoint, error) {
	return ExpandWith(name, data, ExpandOptions{})
}

// ExpandWith is Expand with the generator's other inputs. A master config
// in today's layout (entries with srt-recipe-dir) is validated strictly
// (a *ValidationError lists every issue) and expanded whole: single-node
// and multi-node, fixed-seq-len and agentic-coding rows, evals marked. An
// older one (CONFIG_FILE rows) expands its multi-node fixed-seq-len points
// as before.
func ExpandWith(name string, data []byte, o ExpandOptions) ([]MatrixPoint, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("master config %s: %w", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("master config %s: not a mapping of config keys", name)
	}
	root := doc.Content[0]
	// Python's yaml.safe_load keeps the last of repeated keys, at the
	// position of the first: so does this.
	var order []string
	nodes := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i].Value
		if _, seen := nodes[k]; !seen {
			order = append(order, k)
		}
		nodes[k] = root.Content[i+1]
	}
	if IsTodayLayout(root) {
		// InferenceX reads the master with PyYAML (YAML 1.1): type its
		// values the same way before validating them.
		fingerprint.Normalize(root)
		return expandToday(name, root, order, nodes, o)
	}
	var out []MatrixPoint
	for _, key := range order {
		pts, err := expandEntry(name, key, nodes[key])
		if err != nil {
			return nil, err
		}
		out = append(out, pts...)
	}
	markEvals(out)
	return out, nil
}

func expandEntry(name, key string, n *yaml.Node) ([]MatrixPoint, error) {
	var e map[string]any
	if err := n.Decode(&e); err != nil {
		return nil, fmt.Errorf("master config %s:%d: %s: %w", name, n.Line, key, err)
	}
	if mn, _ := e["multinode"].(bool); !mn {
		return nil, nil
	}
	where := func(line int, format string, args ...any) error {
		return fmt.Errorf("master config %s:%d: %s: %s", name, line, key, fmt.Sprintf(format, args...))
	}
	str := func(field string) (string, error) {
		s, ok := e[field].(string)
		if !ok {
			return "", where(n.Line, "%s: required string", field)
		}
		return s, nil
	}
	var base MatrixPoint
	base.Key = key
	var err error
	for _, f := range []struct {
		dst   *string
		field string
	}{{&base.Image, "image"}, {&base.Model, "model"}, {&base.ModelPrefix, "model-prefix"}, {&base.Precision, "precision"}, {&base.Framework, "framework"}, {&base.Runner, "runner"}} {
		if *f.dst, err = str(f.field); err != nil {
			return nil, err
		}
	}
	base.Disagg, _ = e["disagg"].(bool)

	// Lines of the search-space entries, for error messages and the plan.
	scen := child(n, "scenarios")
	var fixedNodes []*yaml.Node
	if f := child(scen, "fixed-seq-len"); f != nil {
		fixedNodes = f.Content
	}
	scenarios, _ := e["scenarios"].(map[string]any)
	fixed, _ := scenarios["fixed-seq-len"].([]any)
	var out []MatrixPoint
	for si, s := range fixed {
		sc, ok := s.(map[string]any)
		line := n.Line
		if si < len(fixedNodes) {
			line = fixedNodes[si].Line
		}
		if !ok {
			return nil, where(line, "fixed-seq-len[%d]: not a mapping", si)
		}
		isl, ok1 := sc["isl"].(int)
		osl, ok2 := sc["osl"].(int)
		if !ok1 || !ok2 {
			return nil, where(line, "fixed-seq-len[%d]: isl and osl must be integers", si)
		}
		var spaceNodes []*yaml.Node
		if si < len(fixedNodes) {
			if sp := child(fixedNodes[si], "search-space"); sp != nil {
				spaceNodes = sp.Content
			}
		}
		space, _ := sc["search-space"].([]any)
		for bi, b := range space {
			bl := line
			if bi < len(spaceNodes) {
				bl = spaceNodes[bi].Line
			}
			bmk, ok := b.(map[string]any)
			if !ok {
				return nil, where(bl, "search-space[%d]: not a mapping", bi)
			}
			pt := base
			pt.Index, pt.Line, pt.ISL, pt.OSL = len(out), bl, isl, osl
			pt.SpecDecoding = "none"
			if sd, ok := bmk["spec-decoding"].(string); ok {
				pt.SpecDecoding = sd
			}
			if pt.Prefill, pt.Decode, err = workerPair(bmk, base.Disagg); err != nil {
				return nil, where(bl, "search-space[%d]: %v", bi, err)
			}
			if pt.Conc, err = concValues(bmk); err != nil {
				return nil, where(bl, "search-space[%d]: %v", bi, err)
			}
			pt.MaxModelLen = isl + osl + maxModelLenPad
			pt.ExpName = base.ModelPrefix + "_" + seqLenName(isl, osl)
			pt.Meta = map[string]any{}
			for _, f := range []string{"router", "kv-p2p-transfer"} {
				if v, ok := bmk[f]; ok && v != nil {
					pt.Meta[f] = v
				} else if v, ok := e[f]; ok && v != nil {
					pt.Meta[f] = v
				}
			}
			if pt.ConfigFile, pt.Selector, err = configFile(pt.Prefill, pt.Decode); err != nil {
				return nil, where(bl, "search-space[%d]: %v", bi, err)
			}
			out = append(out, pt)
		}
	}
	return out, nil
}

// child is the value node of key in mapping n (nil if absent).
func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	var found *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			found = n.Content[i+1]
		}
	}
	return found
}

// workerPair is the generator's multinode_worker_pair.
func workerPair(bmk map[string]any, disagg bool) (prefill, decode map[string]any, err error) {
	side := func(field string) (map[string]any, error) {
		w, ok := bmk[field].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: required mapping", field)
		}
		out := map[string]any{}
		for k, v := range w {
			out[k] = v
		}
		for _, f := range []string{"pp", "dcp-size", "pcp-size"} {
			if _, ok := out[f]; !ok {
				out[f] = 1
			}
		}
		return out, nil
	}
	if disagg {
		if prefill, err = side("prefill"); err != nil {
			return nil, nil, err
		}
		decode, err = side("decode")
		return prefill, decode, err
	}
	w, err := side("worker")
	if err != nil {
		return nil, nil, err
	}
	prefill = map[string]any{"num-worker": 1}
	decode = map[string]any{}
	for k, v := range w {
		prefill[k] = v
		if k != "num-worker" && k != "additional-settings" {
			decode[k] = v
		}
	}
	decode["num-worker"] = 0
	return prefill, decode, nil
}

// concValues is the generator's multi-node concurrency rule: conc-list when
// set and non-empty, else conc-start doubling up to conc-end, which is
// always included.
func concValues(bmk map[string]any) ([]int, error) {
	if l, ok := bmk["conc-list"].([]any); ok && len(l) > 0 {
		out := make([]int, len(l))
		for i, v := range l {
			c, ok := v.(int)
			if !ok {
				return nil, fmt.Errorf("conc-list[%d]: %v is not an integer", i, v)
			}
			out[i] = c
		}
		return out, nil
	}
	start, ok1 := bmk["conc-start"].(int)
	end, ok2 := bmk["conc-end"].(int)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("conc-list, or conc-start and conc-end, required")
	}
	if start <= 0 {
		return nil, fmt.Errorf("conc-start %d: must be positive", start)
	}
	var out []int
	for c := start; c <= end; {
		out = append(out, c)
		if c == end {
			break
		}
		if c *= 2; c > end {
			c = end
		}
	}
	return out, nil
}

// configFile finds CONFIG_FILE among both sides' additional-settings; the
// generator refuses two different ones.
func configFile(sides ...map[string]any) (file, selector string, err error) {
	seen := map[string]bool{}
	var vals []string
	for _, w := range sides {
		list, _ := w["additional-settings"].([]any)
		for _, s := range list {
			str, _ := s.(string)
			if v, ok := strings.CutPrefix(str, "CONFIG_FILE="); ok && !seen[v] {
				seen[v] = true
				vals = append(vals, v)
			}
		}
	}
	switch len(vals) {
	case 0:
		return "", "", nil
	case 1:
		file, selector, _ = strings.Cut(vals[0], ":")
		return file, selector, nil
	}
	sort.Strings(vals)
	return "", "", fmt.Errorf("conflicting CONFIG_FILE settings: %s", strings.Join(vals, ", "))
}

// markEvals is the generator's multi-node eval selection: among 8k1k points
// with a concurrency of at least MinEvalConc, group those that differ only
// in concurrency and evaluate each group once, on the point holding its
// highest eligible concurrency (the first such point on a tie), at that
// concurrency.
func markEvals(pts []MatrixPoint) {
	type best struct{ idx, conc int }
	groups := map[string]*best{}
	var order []string
	for i := range pts {
		p := &pts[i]
		p.RunEval, p.EvalConc = false, 0
		if p.ISL != evalISL || p.OSL != evalOSL {
			continue
		}
		top := 0
		for _, c := range p.Conc {
			if c >= MinEvalConc && c > top {
				top = c
			}
		}
		if top == 0 {
			continue
		}
		k := parallelismKey(*p)
		b, ok := groups[k]
		if !ok {
			groups[k] = &best{i, top}
			order = append(order, k)
			continue
		}
		if top > b.conc {
			b.idx, b.conc = i, top
		}
	}
	for _, k := range order {
		b := groups[k]
		pts[b.idx].RunEval, pts[b.idx].EvalConc = true, b.conc
	}
}

// parallelismKey is every generator field but concurrency, eval fields and
// the exp-name, in a canonical encoding.
func parallelismKey(p MatrixPoint) string {
	row := p.GeneratorRow()
	for _, f := range []string{"conc", "run-eval", "eval-conc", "exp-name", "config-key"} {
		delete(row, f)
	}
	return canonical(row)
}

func canonical(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		b.WriteByte('{')
		for _, k := range keys {
			b.WriteString(strconv.Quote(k) + ":" + canonical(x[k]) + ",")
		}
		return b.String() + "}"
	case []any:
		var b strings.Builder
		b.WriteByte('[')
		for _, e := range x {
			b.WriteString(canonical(e) + ",")
		}
		return b.String() + "]"
	case []int:
		return fmt.Sprint(x)
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func intOf(v any, dflt int) int {
	if i, ok := v.(int); ok {
		return i
	}
	return dflt
}

// Selection narrows an expansion (matrix's --runner, --key, --filter).
type Selection struct {
	Runner string
	// Keys are config keys or shell patterns (path.Match) over them.
	Keys []string
	// Filter is field=value terms joined by ',' (all must hold); fields:
	// key, runner, precision, framework, model-prefix, spec-decoding, isl,
	// osl, seq (1k1k, 8k1k, ...), eval (true/false), config-file, scenario
	// (fixed-seq-len, agentic-coding), multinode (true/false), srt-recipe.
	Filter string
}

// Select returns the points the selection keeps, in order; a bad key
// pattern or filter term is an error naming it.
func Select(pts []MatrixPoint, s Selection) ([]MatrixPoint, error) {
	type term struct{ field, value string }
	var terms []term
	if strings.TrimSpace(s.Filter) != "" {
		for _, t := range strings.Split(s.Filter, ",") {
			f, v, ok := strings.Cut(strings.TrimSpace(t), "=")
			if !ok || f == "" {
				return nil, fmt.Errorf("--filter: term %q is not field=value", t)
			}
			if _, known := filterField(MatrixPoint{}, f); !known {
				return nil, fmt.Errorf("--filter: unknown field %q (key, runner, precision, framework, model-prefix, spec-decoding, isl, osl, seq, eval, config-file, scenario, multinode, srt-recipe)", f)
			}
			terms = append(terms, term{f, v})
		}
	}
	for _, k := range s.Keys {
		if _, err := path.Match(k, ""); err != nil {
			return nil, fmt.Errorf("--key %q: %w", k, err)
		}
	}
	var out []MatrixPoint
	for _, p := range pts {
		if s.Runner != "" && p.Runner != s.Runner {
			continue
		}
		if len(s.Keys) > 0 {
			hit := false
			for _, k := range s.Keys {
				if ok, _ := path.Match(k, p.Key); ok {
					hit = true
				}
			}
			if !hit {
				continue
			}
		}
		keep := true
		for _, t := range terms {
			if v, _ := filterField(p, t.field); v != t.value {
				keep = false
			}
		}
		if keep {
			out = append(out, p)
		}
	}
	return out, nil
}

func filterField(p MatrixPoint, f string) (string, bool) {
	switch f {
	case "key":
		return p.Key, true
	case "runner":
		return p.Runner, true
	case "precision":
		return p.Precision, true
	case "framework":
		return p.Framework, true
	case "model-prefix":
		return p.ModelPrefix, true
	case "spec-decoding":
		return p.SpecDecoding, true
	case "isl":
		return strconv.Itoa(p.ISL), true
	case "osl":
		return strconv.Itoa(p.OSL), true
	case "seq":
		return seqLenName(p.ISL, p.OSL), true
	case "eval":
		return strconv.FormatBool(p.RunEval), true
	case "config-file":
		return p.ConfigFile, true
	case "scenario":
		return p.Scenario, true
	case "multinode":
		return strconv.FormatBool(p.Multinode), true
	case "srt-recipe":
		return p.SrtRecipe, true
	}
	return "", false
}

// ResultFilenameBase is the workflow's RESULT_FILENAME_BASE for the point
// run on runner runnerName (InferenceX's benchmark-multinode-tmpl.yml:
// EXP_NAME, PRECISION, FRAMEWORK, both sides' tp/pp/dcp/pcp/ep/dp-attn/
// num-worker, DISAGG, SPEC_DECODING, the conc list joined by 'x' and the
// runner's name; GitHub renders booleans as true/false).
func (p MatrixPoint) ResultFilenameBase(runnerName string) string {
	side := func(name string, w map[string]any) string {
		return fmt.Sprintf("%s-tp%v-pp%v-dcp%v-pcp%v-ep%v-dp%v-nw%v", name,
			w["tp"], w["pp"], w["dcp-size"], w["pcp-size"], w["ep"], w["dp-attn"], w["num-worker"])
	}
	concs := make([]string, len(p.Conc))
	for i, c := range p.Conc {
		concs[i] = strconv.Itoa(c)
	}
	return fmt.Sprintf("%s_%s_%s_%s_%s_disagg-%t_spec-%s_conc%s_%s", p.ExpName, p.Precision, p.Framework,
		side("prefill", p.Prefill), side("decode", p.Decode), p.Disagg, p.SpecDecoding, strings.Join(concs, "x"), runnerName)
}

// Skipped is a part of an older-layout master config the expansion does
// not turn into points, with why: listed, never dropped silently.
type Skipped struct {
	Key    string
	Line   int
	Reason string
}

// SkippedEntries lists what Expand leaves out of an older-layout master
// config (CONFIG_FILE rows): single-node entries, which InferenceX ran
// with its benchmark scripts on their runners, and agentic-coding
// scenarios, which it ran the same way. A today's-layout config expands
// whole: nothing is skipped.
func SkippedEntries(name string, data []byte) ([]Skipped, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("master config %s: %w", name, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode || IsTodayLayout(doc.Content[0]) {
		return nil, nil
	}
	root := doc.Content[0]
	var out []Skipped
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, n := root.Content[i].Value, root.Content[i+1]
		if seen[key] {
			continue
		}
		seen[key] = true
		if !boolValue(child(n, "multinode")) {
			out = append(out, Skipped{key, root.Content[i].Line, "single-node entry: InferenceX runs it with its benchmark script, not an srt-slurm recipe (no srt-recipe-dir)"})
			continue
		}
		if ag := child(child(n, "scenarios"), AgenticCoding); ag != nil {
			out = append(out, Skipped{key, ag.Line, "agentic-coding scenario of a CONFIG_FILE entry: InferenceX runs it with its benchmark script"})
		}
	}
	return out, nil
}
