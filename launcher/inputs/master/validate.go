package master

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/master/fingerprint"
)

// This file validates today's master config (entries naming their recipes
// with srt-recipe-dir and srt-recipe) as InferenceX validates it before
// generating a matrix: inferencex-e2e/infx/matrix/validation.py, the
// version with srt-recipe-dir, eval-srt-recipe and power (read by its
// stored id 71232337073 in SemiAnalysisAI/InferenceX; the index reports no
// commit for it; the older 07db303e and ba3e5976 lack those fields). Its
// Pydantic models forbid extra fields at every level, so an unknown key is
// an error naming its file:line and the model that rejects it.
//
// Deliberate differences: Pydantic's lax mode would also take an integer
// written as a string ("8") or a boolean written as "yes"; here integers
// and booleans must be YAML integers and booleans. No shipped master
// config writes them otherwise.

// Issue is one validation failure: where and which rule.
type Issue struct {
	File  string
	Line  int
	Key   string // the master config key
	Field string // the path to the field within the entry
	Rule  string
}

func (i Issue) Error() string {
	f := i.Key
	if i.Field != "" {
		f += ": " + i.Field
	}
	return fmt.Sprintf("%s:%d: %s: %s", i.File, i.Line, f, i.Rule)
}

// ValidationError is every issue of a master config, in file order.
type ValidationError struct{ Issues []Issue }

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "master config: %d validation error(s) (infx/matrix/validation.py's rules):", len(e.Issues))
	for _, i := range e.Issues {
		b.WriteString("\n  " + i.Error())
	}
	return b.String()
}

// Unwrap lets errors.Is/As reach each issue.
func (e *ValidationError) Unwrap() []error {
	out := make([]error, len(e.Issues))
	for i, is := range e.Issues {
		out[i] = is
	}
	return out
}

// The recipe trees and the one framework that keeps CONFIG_FILE
// (validation.py: SINGLE_NODE_RECIPES, MULTI_NODE_RECIPES, LLMD_FRAMEWORK).
const (
	SingleNodeRecipes = "benchmarks/single_node/srt-slurm-recipes"
	MultiNodeRecipes  = "benchmarks/multi_node/srt-slurm-recipes"
	llmdFramework     = "llmd-vllm"
	clusterPrefix     = "cluster:"
)

// recipeSelector is validation.py's RECIPE_SELECTOR (full match).
var recipeSelector = regexp.MustCompile(`^(?:base|override_[\w-]+|zip_override_[\w-]+\[\d+\])$`)

// SrtRecipePath is a row's recipe reference relative to the InferenceX
// project root (inferencex-e2e/), selector kept: validation.py's
// srt_recipe_path.
func SrtRecipePath(multinode bool, dir, ref string) string {
	root := SingleNodeRecipes
	if multinode {
		root = MultiNodeRecipes
	}
	return root + "/" + dir + "/" + ref
}

type kind int

const (
	kStr       kind = iota // str
	kStrMin1               // str, at least one character
	kInt                   // int
	kIntPos                // int, strict, > 0
	kBool                  // bool
	kFloat                 // float (an int is taken)
	kSpec                  // "mtp" | "draft_model" | "none"
	kKVOff                 // "none" | "dram"
	kRecipeDir             // a normalized relative path
	kRecipeRef             // <path>[:<selector>]
	kIntList               // list[int]
	kStrList               // list[str]
	kMap                   // a nested model
	kList                  // list of a nested model
	kFalse                 // Literal[False]
	kMultinode             // Literal[True] or Literal[False], by the entry's model
	kVersion               // a component version: str, at least one character, not "image:..."
)

type field struct {
	kind     kind
	required bool
	nullable bool
	sub      *model
}

type model struct {
	name   string
	fields map[string]field
}

func opt(k kind) field              { return field{kind: k, nullable: true} }
func req(k kind) field              { return field{kind: k, required: true} }
func sub(k kind, m *model) field    { return field{kind: k, nullable: true, sub: m} }
func reqSub(k kind, m *model) field { return field{kind: k, required: true, sub: m} }
func nonNull(k kind) field          { return field{kind: k} }
func withFields(m *model, f map[string]field) *model {
	for k, v := range f {
		m.fields[k] = v
	}
	return m
}

var (
	componentMetadata = &model{"ComponentMetadata", map[string]field{"name": req(kStrMin1), "version": req(kVersion)}}
	kvBackendMetadata = &model{"KVOffloadBackendMetadata", map[string]field{"name": req(kStrMin1), "version": opt(kVersion)}}

	workerFields = func(name string, numWorker field) *model {
		return &model{name, map[string]field{
			"num-worker": numWorker, "tp": req(kInt), "pp": nonNull(kIntPos), "dcp-size": nonNull(kIntPos),
			"pcp-size": nonNull(kIntPos), "ep": req(kInt), "dp-attn": req(kBool), "hardware": opt(kStrMin1),
			"additional-settings": opt(kStrList),
		}}
	}
	workerConfig    = workerFields("WorkerConfig", req(kInt))
	aggregateWorker = workerFields("AggregateWorkerConfig", nonNull(kIntPos))

	concFields = map[string]field{"conc-start": opt(kInt), "conc-end": opt(kInt), "conc-list": opt(kIntList)}

	singleSearch = withFields(&model{"SingleNodeSearchSpaceEntry", map[string]field{
		"tp": req(kInt), "srt-recipe": opt(kRecipeRef), "pp": nonNull(kIntPos), "dcp-size": nonNull(kIntPos),
		"pcp-size": nonNull(kIntPos), "ep": opt(kInt), "spec-decoding": nonNull(kSpec), "dp-attn": opt(kBool),
		"router": sub(kMap, componentMetadata),
	}}, concFields)
	multiSearch = withFields(&model{"MultiNodeSearchSpaceEntry", map[string]field{
		"spec-decoding": nonNull(kSpec), "worker": sub(kMap, aggregateWorker), "prefill": sub(kMap, workerConfig),
		"decode": sub(kMap, workerConfig), "srt-recipe": opt(kRecipeRef), "eval-srt-recipe": opt(kRecipeRef),
		"power": nonNull(kBool), "num-nodes": opt(kIntPos), "router": sub(kMap, componentMetadata),
		"kv-p2p-transfer": opt(kStrMin1),
	}}, concFields)
	agenticSearch = withFields(&model{"AgenticCodingSearchSpaceEntry", map[string]field{
		"tp": opt(kInt), "srt-recipe": opt(kRecipeRef), "eval-srt-recipe": opt(kRecipeRef), "power": nonNull(kBool),
		"pp": nonNull(kIntPos), "dcp-size": nonNull(kIntPos), "pcp-size": nonNull(kIntPos), "ep": opt(kInt),
		"dp-attn": opt(kBool), "spec-decoding": nonNull(kSpec), "worker": sub(kMap, aggregateWorker),
		"prefill": sub(kMap, workerConfig), "decode": sub(kMap, workerConfig), "num-nodes": opt(kIntPos),
		"kv-offloading": opt(kKVOff), "kv-offload-backend": sub(kMap, kvBackendMetadata),
		"router": sub(kMap, componentMetadata), "kv-p2p-transfer": opt(kStrMin1),
	}}, concFields)

	singleSeqLen = &model{"SingleNodeSeqLenConfig", map[string]field{"isl": req(kInt), "osl": req(kInt), "search-space": reqSub(kList, singleSearch)}}
	// require_power: the one Python name (populate_by_name) the generator
	// also reads (generate.py@0f3de2c3 _fixed_sequence_entries:
	// sequence.get("require-power", sequence.get("require_power", False))),
	// so it is a field here; the alias wins when both are set.
	multiSeqLen = &model{"MultiNodeSeqLenConfig", map[string]field{"isl": req(kInt), "osl": req(kInt), "require-power": nonNull(kBool),
		"require_power": nonNull(kBool), "search-space": reqSub(kList, multiSearch)}}
	agenticCfg = &model{"AgenticCodingConfig", map[string]field{"search-space": reqSub(kList, agenticSearch), "dram-utilization": opt(kFloat)}}

	singleScenarios = &model{"SingleNodeScenarios", map[string]field{"fixed-seq-len": sub(kList, singleSeqLen), "agentic-coding": sub(kList, agenticCfg)}}
	multiScenarios  = &model{"MultiNodeScenarios", map[string]field{"fixed-seq-len": sub(kList, multiSeqLen), "agentic-coding": sub(kList, agenticCfg)}}

	entryCommon = map[string]field{
		"image": req(kStr), "model": req(kStr), "model-prefix": req(kStr), "precision": req(kStr),
		"framework": req(kStr), "runner": req(kStr), "multinode": req(kMultinode),
		"router": sub(kMap, componentMetadata),
	}
	singleEntry = withFields(&model{"SingleNodeMasterConfigEntry", map[string]field{
		"disagg": nonNull(kFalse), "srt-recipe-dir": req(kRecipeDir), "scenarios": reqSub(kMap, singleScenarios),
	}}, entryCommon)
	multiEntry = withFields(&model{"MultiNodeMasterConfigEntry", map[string]field{
		"disagg": nonNull(kBool), "kv-p2p-transfer": opt(kStrMin1), "srt-recipe-dir": opt(kRecipeDir),
		"scenarios": reqSub(kMap, multiScenarios),
	}}, entryCommon)
)

// validator collects issues for one entry.
type validator struct {
	file, key string
	issues    []Issue
}

func (v *validator) add(n *yaml.Node, fieldPath, rule string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	v.issues = append(v.issues, Issue{File: v.file, Line: line, Key: v.key, Field: fieldPath, Rule: fmt.Sprintf(rule, args...)})
}

func join(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!null" }

// structure checks n against m: unknown keys, required keys, types.
func (v *validator) structure(n *yaml.Node, m *model, at string, multinode bool) {
	if n.Kind != yaml.MappingNode {
		v.add(n, at, "%s: must be a mapping", m.name)
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		f, ok := m.fields[k.Value]
		if !ok {
			if alias := strings.ReplaceAll(k.Value, "_", "-"); alias != k.Value && hasField(m, alias) {
				// populate_by_name=True: the model takes the Python name,
				// but generate.py reads the entry's raw mapping by alias
				// only (entry[Fields.X.value], .get(Fields.X.value)), so
				// InferenceX drops or fails on such a field after
				// validating it. Refused here, naming the spelling to use.
				v.add(k, join(at, k.Value), "%s is %s's Python name for %s: its validation takes it, but infx.matrix.generate reads only %s (the field would be lost); write %s", k.Value, m.name, alias, alias, alias)
				continue
			}
			v.add(k, join(at, k.Value), "unknown field: %s forbids extra fields (allowed: %s)", m.name, allowed(m))
			continue
		}
		seen[k.Value] = true
		v.value(val, f, join(at, k.Value), multinode)
	}
	for name, f := range m.fields {
		if f.required && !seen[name] {
			v.add(n, join(at, name), "field required by %s", m.name)
		}
	}
}

func hasField(m *model, name string) bool {
	_, ok := m.fields[name]
	return ok
}

func allowed(m *model) string {
	var ks []string
	for k := range m.fields {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func (v *validator) value(n *yaml.Node, f field, at string, multinode bool) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if isNull(n) {
		if !f.nullable {
			v.add(n, at, "may not be null")
		}
		return
	}
	scalar := func(tag, what string) bool {
		if n.Kind != yaml.ScalarNode || n.Tag != tag {
			v.add(n, at, "must be %s, not %q", what, short(n))
			return false
		}
		return true
	}
	switch f.kind {
	case kStr:
		scalar("!!str", "a string")
	case kStrMin1:
		if scalar("!!str", "a string") && n.Value == "" {
			v.add(n, at, "must not be empty")
		}
	case kVersion:
		if scalar("!!str", "a string") && n.Value == "" {
			v.add(n, at, "must not be empty")
		} else if strings.HasPrefix(n.Value, "image:") {
			v.add(n, at, "component version must be a release, package version, or source commit, not an image reference")
		}
	case kInt:
		scalar("!!int", "an integer")
	case kIntPos:
		if scalar("!!int", "an integer") {
			if i, ok := intValue(n); !ok || i <= 0 {
				v.add(n, at, "must be greater than 0")
			}
		}
	case kBool:
		scalar("!!bool", "true or false")
	case kFloat:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!float" && n.Tag != "!!int") {
			v.add(n, at, "must be a number, not %q", short(n))
		}
	case kSpec:
		if scalar("!!str", "a string") && n.Value != "mtp" && n.Value != "draft_model" && n.Value != "none" {
			v.add(n, at, "must be one of mtp, draft_model, none (not %q)", n.Value)
		}
	case kKVOff:
		if scalar("!!str", "a string") && n.Value != "none" && n.Value != "dram" {
			v.add(n, at, "must be none or dram (not %q)", n.Value)
		}
	case kRecipeDir:
		if scalar("!!str", "a string") {
			if err := checkRecipePath(n.Value); err != nil {
				v.add(n, at, "%v", err)
			}
		}
	case kRecipeRef:
		if scalar("!!str", "a string") {
			p, sel, hasSel := strings.Cut(n.Value, ":")
			if err := checkRecipePath(p); err != nil {
				v.add(n, at, "%v", err)
			} else if hasSel && !recipeSelector.MatchString(sel) {
				v.add(n, at, "%q must select base, override_<name> or zip_override_<name>[<index>]", n.Value)
			}
		}
	case kIntList, kStrList:
		if n.Kind != yaml.SequenceNode {
			v.add(n, at, "must be a list")
			return
		}
		tag, what := "!!int", "an integer"
		if f.kind == kStrList {
			tag, what = "!!str", "a string"
		}
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode || c.Tag != tag {
				v.add(c, fmt.Sprintf("%s[%d]", at, i), "must be %s, not %q", what, short(c))
			}
		}
	case kMap:
		v.structure(n, f.sub, at, multinode)
	case kList:
		if n.Kind != yaml.SequenceNode {
			v.add(n, at, "must be a list")
			return
		}
		for i, c := range n.Content {
			v.structure(c, f.sub, fmt.Sprintf("%s[%d]", at, i), multinode)
		}
	case kFalse:
		if scalar("!!bool", "false") && n.Value != "false" {
			v.add(n, at, "must be false on a single-node entry")
		}
	case kMultinode:
		if scalar("!!bool", "true or false") && (n.Value == "true") != multinode {
			v.add(n, at, "must be %t", multinode)
		}
	}
}

// checkRecipePath is validation.py's _recipe_path: a normalized relative
// POSIX path without ':'.
func checkRecipePath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, ":") || path.Clean(p) != p || p == "." {
		return fmt.Errorf("%q must be a normalized relative path", p)
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return fmt.Errorf("%q must be a normalized relative path", p)
		}
	}
	return nil
}

func short(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	if len(n.Value) > 40 {
		return n.Value[:40] + "…"
	}
	return n.Value
}

func intValue(n *yaml.Node) (int, bool) {
	var i int
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return 0, false
	}
	return i, true
}

func boolValue(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!bool" && n.Value == "true"
}

func present(n *yaml.Node) bool { return n != nil && !isNull(n) }

// ValidateKeys checks the master config's top-level keys as
// infx/matrix/validation.py's load_config_files does before any entry is
// validated (the version read by stored id 71232337073): every key is a
// string to InferenceX's YAML 1.1 loader (123:, yes: or ~: are not), and
// none holds '*', which infx.matrix.plan keeps for expanding patterns.
// Each key is typed as PyYAML types a plain scalar (fingerprint.Normalize
// on a copy: the document keeps its keys).
func ValidateKeys(file string, root *yaml.Node) []Issue {
	var out []Issue
	for i := 0; i+1 < len(root.Content); i += 2 {
		typed := *root.Content[i]
		k := &typed
		if k.Kind == yaml.ScalarNode {
			fingerprint.Normalize(k)
		}
		switch {
		case k.Kind != yaml.ScalarNode || k.Tag != "!!str":
			out = append(out, Issue{File: file, Line: k.Line, Key: short(k), Rule: fmt.Sprintf("a configuration key must be a string, not %s (quote it)", keyKind(k))})
		case strings.Contains(k.Value, "*"):
			out = append(out, Issue{File: file, Line: k.Line, Key: k.Value, Rule: "wildcard '*' is not allowed in master config keys (infx.matrix.plan expands it)"})
		}
	}
	return out
}

func keyKind(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return short(n)
	}
	return fmt.Sprintf("%s %q", strings.TrimPrefix(n.Tag, "!!"), n.Value)
}

// ValidateEntry checks one master config entry (its mapping node) against
// today's rules and returns its issues.
func ValidateEntry(file, key string, n *yaml.Node) []Issue {
	v := &validator{file: file, key: key}
	if n.Kind != yaml.MappingNode {
		v.add(n, "", "an entry must be a mapping")
		return v.issues
	}
	multinode := boolValue(child(n, "multinode"))
	m := singleEntry
	if multinode {
		m = multiEntry
	}
	v.structure(n, m, "", multinode)
	if len(v.issues) > 0 {
		// Pydantic runs the model validators only on fields that parsed.
		return v.issues
	}
	v.entryRules(n, multinode)
	return v.issues
}

type row struct {
	node *yaml.Node
	at   string
}

// rows are every search-space entry of the entry, fixed-seq-len first.
func rows(n *yaml.Node) []row {
	var out []row
	scen := child(n, "scenarios")
	for _, st := range []string{"fixed-seq-len", "agentic-coding"} {
		list := child(scen, st)
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		for i, sc := range list.Content {
			ss := child(sc, "search-space")
			if ss == nil {
				continue
			}
			for j, r := range ss.Content {
				out = append(out, row{r, fmt.Sprintf("scenarios.%s[%d].search-space[%d]", st, i, j)})
			}
		}
	}
	return out
}

func (v *validator) entryRules(n *yaml.Node, multinode bool) {
	scen := child(n, "scenarios")
	fixed, agentic := child(scen, "fixed-seq-len"), child(scen, "agentic-coding")
	nonEmpty := func(l *yaml.Node) bool { return present(l) && len(l.Content) > 0 }
	if !nonEmpty(fixed) && !nonEmpty(agentic) {
		v.add(scen, "scenarios", "At least one scenario type must be specified")
	}
	// Row-level model validators.
	if present(fixed) {
		for i, sc := range fixed.Content {
			for j, r := range child(sc, "search-space").Content {
				at := fmt.Sprintf("scenarios.fixed-seq-len[%d].search-space[%d]", i, j)
				v.concRule(r, at)
				if multinode {
					v.multiTopology(r, at)
				} else {
					v.tpDCP(r, at)
				}
			}
		}
	}
	if present(agentic) {
		for i, sc := range agentic.Content {
			at0 := fmt.Sprintf("scenarios.agentic-coding[%d]", i)
			if du := child(sc, "dram-utilization"); present(du) {
				var f float64
				if du.Decode(&f) != nil || f <= 0 || f > 1 {
					v.add(du, at0+".dram-utilization", "must be greater than 0 and at most 1")
				}
			}
			for j, r := range child(sc, "search-space").Content {
				at := fmt.Sprintf("%s.search-space[%d]", at0, j)
				v.concRule(r, at)
				v.kvOffloadRule(r, at)
				v.agenticTopology(r, at)
				if kv := child(r, "kv-offloading"); kv != nil && kv.Value == "dram" && !present(child(sc, "dram-utilization")) {
					v.add(kv, at+".kv-offloading", "kv-offloading='dram' requires dram-utilization with runner hardware metadata")
				}
			}
		}
	}
	// Entry-level model validators, in validation.py's order.
	if nonEmpty(agentic) && !strings.HasPrefix(child(n, "runner").Value, clusterPrefix) {
		v.add(child(n, "runner"), "runner", "Agentic master configs must use a 'cluster:<name>' runner so every point runs on one exact hardware fleet.")
	}
	all := rows(n)
	for _, f := range []string{"router", "kv-p2p-transfer"} {
		if top := child(n, f); present(top) {
			for _, r := range all {
				if present(child(r.node, f)) {
					v.add(child(r.node, f), join(r.at, f), "%s must be declared either at the top level or in search-space entries, not both", f)
				}
			}
		}
	}
	if !multinode {
		for _, r := range all {
			if x := child(r.node, "kv-p2p-transfer"); present(x) {
				v.add(x, join(r.at, "kv-p2p-transfer"), "kv-p2p-transfer is only valid when multinode=true")
			}
		}
	}
	disagg := boolValue(child(n, "disagg"))
	if disagg && !present(child(n, "kv-p2p-transfer")) {
		missing := len(all) == 0
		for _, r := range all {
			if !present(child(r.node, "kv-p2p-transfer")) {
				missing = true
			}
		}
		if missing {
			v.add(child(n, "disagg"), "disagg", "disagg=true requires kv-p2p-transfer at the top level or in every search-space entry")
		}
	}
	for _, r := range all {
		worker, prefill, decode, nodes := child(r.node, "worker"), child(r.node, "prefill"), child(r.node, "decode"), child(r.node, "num-nodes")
		switch {
		case !multinode:
			if present(worker) || present(prefill) || present(decode) || present(nodes) {
				v.add(r.node, r.at, "Single-node search-space entries must specify tp topology and cannot declare worker, prefill, decode, or num-nodes")
			}
		case disagg:
			if present(worker) || present(nodes) {
				v.add(r.node, r.at, "disagg=true requires prefill and decode and rejects worker and num-nodes")
			} else if !present(prefill) || !present(decode) {
				v.add(r.node, r.at, "disagg=true requires prefill and decode")
			}
		default:
			if !present(worker) || present(prefill) || present(decode) {
				v.add(r.node, r.at, "disagg=false requires one worker and rejects prefill and decode")
			} else if !present(nodes) {
				v.add(r.node, r.at, "disagg=false requires num-nodes in every search-space entry")
			}
		}
	}
	v.recipeRules(n, multinode, all)
}

// recipeRules is validation.py's _validate_srt_recipes.
func (v *validator) recipeRules(n *yaml.Node, multinode bool, all []row) {
	dir := child(n, "srt-recipe-dir")
	if multinode && child(n, "framework").Value == llmdFramework {
		if present(dir) {
			v.add(dir, "srt-recipe-dir", "%s selects recipes with CONFIG_FILE, not srt-recipe", llmdFramework)
		}
		for _, r := range all {
			for _, f := range []string{"srt-recipe", "eval-srt-recipe"} {
				if x := child(r.node, f); present(x) {
					v.add(x, join(r.at, f), "%s selects recipes with CONFIG_FILE, not srt-recipe", llmdFramework)
				}
			}
		}
		return
	}
	if !present(dir) {
		v.add(n, "srt-recipe-dir", "srt-slurm configs require srt-recipe-dir")
		return
	}
	for _, r := range all {
		if !present(child(r.node, "srt-recipe")) {
			v.add(r.node, join(r.at, "srt-recipe"), "Every search-space entry requires srt-recipe")
		}
		if x := child(r.node, "eval-srt-recipe"); !multinode && present(x) {
			v.add(x, join(r.at, "eval-srt-recipe"), "eval-srt-recipe is only valid for multinode configs")
		}
		for _, role := range []string{"worker", "prefill", "decode"} {
			w := child(r.node, role)
			if !present(w) {
				continue
			}
			if as := child(w, "additional-settings"); present(as) {
				for _, s := range as.Content {
					name, _, _ := strings.Cut(s.Value, "=")
					switch name {
					case "CONFIG_FILE":
						v.add(s, join(r.at, role+".additional-settings"), "CONFIG_FILE is not an additional-setting; use srt-recipe")
					case "EVAL_CONFIG_FILE":
						v.add(s, join(r.at, role+".additional-settings"), "EVAL_CONFIG_FILE is not an additional-setting; use eval-srt-recipe")
					}
				}
			}
		}
	}
}

// concRule is validation.py's _validate_conc_fields.
func (v *validator) concRule(r *yaml.Node, at string) {
	start, end, list := child(r, "conc-start"), child(r, "conc-end"), child(r, "conc-list")
	hasRange := present(start) && present(end)
	hasList := present(list) && len(list.Content) > 0
	switch {
	case hasRange && hasList:
		v.add(r, at, "Cannot specify both 'conc-list' list and 'conc-start'/'conc-end'. Use either a list or a range, not both.")
		return
	case !hasRange && !hasList:
		v.add(r, at, "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'.")
		return
	}
	if hasRange {
		s, _ := intValue(start)
		e, _ := intValue(end)
		if s <= 0 || e <= 0 {
			v.add(start, at, "Input 'conc-start' and 'conc-end' must be greater than 0.")
		} else if s > e {
			v.add(start, at, "'conc-start' (%d) must be <= 'conc-end' (%d).", s, e)
		}
	}
	if hasList {
		for _, c := range list.Content {
			if i, _ := intValue(c); i <= 0 {
				v.add(c, join(at, "conc-list"), "Input 'conc-list' entries must be greater than 0.")
				break
			}
		}
	}
}

// tpDCP is validation.py's _validate_tp_context_topology.
func (v *validator) tpDCP(n *yaml.Node, at string) {
	tp, _ := intValue(child(n, "tp"))
	dcp := 1
	if d, ok := intValue(child(n, "dcp-size")); ok {
		dcp = d
	}
	if dcp > 0 && tp%dcp != 0 {
		v.add(n, at, "'tp' (%d) must be divisible by 'dcp-size' (%d)", tp, dcp)
	}
}

func (v *validator) hardwarePair(r *yaml.Node, at string) {
	hp, hd := child(child(r, "prefill"), "hardware"), child(child(r, "decode"), "hardware")
	has := func(h *yaml.Node) bool { return present(h) && h.Value != "" }
	if has(hp) != has(hd) {
		v.add(r, at, "'hardware' must be specified for both 'prefill' and 'decode', or neither")
	}
}

func (v *validator) workersTP(r *yaml.Node, at string) {
	for _, role := range []string{"worker", "prefill", "decode"} {
		if w := child(r, role); present(w) {
			v.tpDCP(w, join(at, role))
		}
	}
}

// multiTopology is MultiNodeSearchSpaceEntry's validate_worker_hardware_pair.
func (v *validator) multiTopology(r *yaml.Node, at string) {
	v.workersTP(r, at)
	hasWorker := present(child(r, "worker"))
	anyDisagg := present(child(r, "prefill")) || present(child(r, "decode"))
	complete := present(child(r, "prefill")) && present(child(r, "decode"))
	if hasWorker == anyDisagg || (anyDisagg && !complete) {
		v.add(r, at, "Multinode search-space entries must specify either worker or both prefill and decode")
	}
	if complete {
		v.hardwarePair(r, at)
	}
}

// kvOffloadRule is validation.py's _validate_kv_offload_fields.
func (v *validator) kvOffloadRule(r *yaml.Node, at string) {
	kv, backend := child(r, "kv-offloading"), child(r, "kv-offload-backend")
	switch {
	case !present(kv):
		if present(backend) {
			v.add(backend, join(at, "kv-offload-backend"), "kv-offload-backend requires kv-offloading")
		}
	case kv.Value == "none":
		if present(backend) {
			v.add(backend, join(at, "kv-offload-backend"), "kv-offload-backend can only be set when kv-offloading is not 'none'")
		}
	case !present(backend):
		v.add(kv, join(at, "kv-offloading"), "kv-offload-backend is required when kv-offloading is '%s'", kv.Value)
	}
}

// agenticTopology is AgenticCodingSearchSpaceEntry's
// validate_topology_fields.
func (v *validator) agenticTopology(r *yaml.Node, at string) {
	v.workersTP(r, at)
	single := present(child(r, "tp"))
	agg := present(child(r, "worker"))
	anyMN := present(child(r, "prefill")) || present(child(r, "decode"))
	complete := present(child(r, "prefill")) && present(child(r, "decode"))
	count := 0
	for _, b := range []bool{single, agg, complete} {
		if b {
			count++
		}
	}
	if count != 1 || (anyMN && !complete) {
		v.add(r, at, "Agentic search-space entries must specify exactly one of tp, worker, or both prefill and decode")
		return
	}
	if single {
		if !present(child(r, "kv-offloading")) {
			v.add(r, at, "Single-node agentic search-space entries must specify kv-offloading")
		}
		if boolValue(child(r, "power")) {
			v.add(child(r, "power"), join(at, "power"), "Only multinode entries measure DCGM power; remove power")
		}
		v.tpDCP(r, at)
		return
	}
	for _, f := range []string{"pp", "dcp-size", "pcp-size"} {
		if x := child(r, f); x != nil {
			v.add(x, join(at, f), "Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'")
			break
		}
	}
	if complete {
		v.hardwarePair(r, at)
	}
}

// IsTodayLayout says whether a master config names its recipes the
// current way (any entry with srt-recipe-dir): such a file is validated
// strictly; older ones (CONFIG_FILE in additional-settings) are read as
// before.
func IsTodayLayout(root *yaml.Node) bool {
	if root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	for i := 1; i < len(root.Content); i += 2 {
		if child(root.Content[i], "srt-recipe-dir") != nil {
			return true
		}
	}
	return false
}
