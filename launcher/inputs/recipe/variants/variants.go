// Package variants expands srtctl's override files. An override file is
// srtctl's way to keep several configs in one file: a
// `base:` config, plus `override_NAME:` sections (one config each: base
// deep-merged with the section) and `zip_override_NAME:` sections (N
// configs: each list-valued leaf is a dimension; element i goes to config
// i, lists of length 1 broadcast). srtctl's apply/dry-run expands them with
// core/config.py's generate_override_configs and resolve_override_yaml; this
// package reproduces that expansion on the YAML node tree, so every value
// keeps its line for errors and render can say which section set it.
//
// The sections are inline mappings of the same file: srtctl has no
// file-level `base: other.yaml` include, so there is no relative path to
// resolve, no include cycle and no include depth to limit.
//
// The package knows YAML nodes only: package recipe reads the document
// before and decodes the chosen config after, and turns this package's
// errors and kept nulls into its own errors and warnings.
package variants

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The node helpers of package yamltree, by the names this package's code uses.
func mapGet(n *yaml.Node, key string) *yaml.Node { return yamltree.Get(n, key) }
func deAlias(n *yaml.Node) *yaml.Node            { return yamltree.DeAlias(n) }

// Variant is one config expanded from an override file.
type Variant struct {
	Doc      *yaml.Node
	Selector string            // srtctl selector that names exactly this config
	Origins  map[string]string // dotted field → section that set it
	Warnings []string
	// KeptNulls are the nulls of a zip section that did not delete the
	// base value, for the reader to warn about (naming the srtctl it
	// reproduces).
	KeptNulls []KeptNull
}

// KeptNull is a null in a zip_override section where the base has a value:
// srtctl keeps the base value, and so does the expansion.
type KeptNull struct {
	Line    int
	Field   string // dotted
	Section string // the selector of the config
	Base    string // the base value, as Python's str()
}

// SelectError is an override file without a selector that names exactly
// one of its configs; Variants lists the selectors a user can give.
type SelectError struct {
	File     string
	Line     int
	Field    string // "" or the section to blame
	Msg      string
	Variants []string
}

func (e *SelectError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// IsOverrideFile reports an override file (base: + override_* sections).
func IsOverrideFile(doc *yaml.Node) bool { return yamltree.Get(doc, "base") != nil }

// zipSelector is srtctl's "zip_override_NAME[I]" selector.
var zipSelector = regexp.MustCompile(`^(zip_override_[\w-]+)\[(\d+)\]$`)

type section struct {
	key  string // override_NAME or zip_override_NAME
	node *yaml.Node
}

// Expand returns the config of override file doc that selector names;
// doc is left as it was. Errors are a *yamltree.Error (a section that is
// not a mapping, or a zip section whose lists do not zip) or a
// *SelectError.
func Expand(file string, doc *yaml.Node, selector string) (*Variant, error) {
	e, err := parseSections(file, doc)
	if err != nil {
		return nil, err
	}
	all := e.all
	chosen, err := selectVariants(selector, all)
	if err != nil {
		return nil, &SelectError{File: file, Line: doc.Line, Msg: err.Error() + "; available: " + available(all), Variants: selectors(all)}
	}
	if len(chosen) != 1 {
		what := fmt.Sprintf("is an override file that expands to %d configs", len(chosen))
		if selector != "" {
			what = fmt.Sprintf("selector %q matches %d configs", selector, len(chosen))
		}
		return nil, &SelectError{File: file, Line: doc.Line,
			Msg: what + "; a plan is one job: choose one with --variant (or CONFIG_FILE=...yaml:SELECTOR): " + available(chosen), Variants: selectors(chosen)}
	}
	return e.build(chosen[0]), nil
}

// ExpandAll returns every config selector names, in srtctl's order (all of
// them for an empty selector): InferenceX's single-node launcher picks
// among them the one that serves the matrix point
// (infx/srt_slurm/single_node.py select_recipe, stored id 70886418919).
func ExpandAll(file string, doc *yaml.Node, selector string) ([]*Variant, error) {
	e, err := parseSections(file, doc)
	if err != nil {
		return nil, err
	}
	chosen, err := selectVariants(selector, e.all)
	if err != nil {
		return nil, &SelectError{File: file, Line: doc.Line, Msg: err.Error() + "; available: " + available(e.all), Variants: selectors(e.all)}
	}
	out := make([]*Variant, len(chosen))
	for i, ref := range chosen {
		out[i] = e.build(ref)
	}
	return out, nil
}

// expansion is an override file read into its sections.
type expansion struct {
	base     *yaml.Node
	all      []variantRef // every config srtctl would submit without a selector, in its order
	warnings []string
}

func parseSections(file string, doc *yaml.Node) (*expansion, error) {
	var baseNode *yaml.Node
	var overrides, zips []section
	var warnings []string
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], deAlias(doc.Content[i+1])
		switch {
		case k.Value == "base":
			baseNode = v
		case strings.HasPrefix(k.Value, "override_"):
			overrides = append(overrides, section{k.Value, v})
		case strings.HasPrefix(k.Value, "zip_override_"):
			zips = append(zips, section{k.Value, v})
		default:
			warnings = append(warnings, fmt.Sprintf("%s:%d: top-level key %q beside base: is ignored (srtctl reads only base, override_* and zip_override_*)", file, k.Line, k.Value))
		}
	}
	ferr := func(n *yaml.Node, field, format string, args ...any) error {
		return &yamltree.Error{File: file, Line: n.Line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if baseNode.Kind != yaml.MappingNode {
		return nil, ferr(baseNode, "base", "must be a mapping (the config the overrides start from)")
	}
	for _, s := range append(append([]section{}, overrides...), zips...) {
		if s.node.Kind != yaml.MappingNode {
			return nil, ferr(s.node, s.key, "must be a mapping of the values it overrides")
		}
	}
	sort.Slice(overrides, func(i, j int) bool { return overrides[i].key < overrides[j].key })
	sort.Slice(zips, func(i, j int) bool { return zips[i].key < zips[j].key })
	e := &expansion{base: baseNode, warnings: warnings}
	for _, o := range overrides {
		e.all = append(e.all, variantRef{sel: o.key, sec: o})
	}
	for _, z := range zips {
		n, err := zipLength(z.node)
		if err != nil {
			return nil, ferr(z.node, z.key, "%v", err)
		}
		for i := 0; i < n; i++ {
			e.all = append(e.all, variantRef{sel: fmt.Sprintf("%s[%d]", z.key, i), sec: z, zip: true, index: i})
		}
	}
	return e, nil
}

// build is the config ref names: base merged with its section.
func (e *expansion) build(ref variantRef) *Variant {
	baseNode := e.base
	v := &Variant{Selector: ref.sel, Origins: map[string]string{}, Warnings: append([]string(nil), e.warnings...)}
	baseName := "unnamed"
	if n := mapGet(baseNode, "name"); n != nil && deAlias(n).Kind == yaml.ScalarNode {
		baseName = deAlias(n).Value
	}
	switch {
	case ref.sec.node == nil: // base
		v.Doc = baseNode
	case ref.zip:
		sliced := sliceZip(ref.sec.node, ref.index)
		// srtctl's submit path merges the deep-merged plain dict back into
		// the comment-keeping base (comment_aware_merge), so a null in a zip
		// section does not delete the base's key: the base value stays.
		v.Doc = mergeNodes(baseNode, sliced, ref.sel, "", v.Origins, false, &v.KeptNulls)
		if n := mapGet(ref.sec.node, "name"); n == nil || deAlias(n).Kind != yaml.SequenceNode {
			group := strings.TrimPrefix(ref.sec.key, "zip_override_")
			v.Doc = setName(v.Doc, fmt.Sprintf("%s_%s_%d", baseName, group, ref.index))
			v.Origins["name"] = ref.sel + " (generated)"
		}
	default:
		v.Doc = mergeNodes(baseNode, ref.sec.node, ref.sel, "", v.Origins, true, &v.KeptNulls)
		if mapGet(ref.sec.node, "name") == nil {
			v.Doc = setName(v.Doc, baseName+"_"+strings.TrimPrefix(ref.sec.key, "override_"))
			v.Origins["name"] = ref.sel + " (generated)"
		}
	}
	return v
}

// variantRef is one config of an override file: base (no section), an
// override_ section, or index of a zip_override_ section.
type variantRef struct {
	sel   string // the srtctl selector naming it
	sec   section
	zip   bool
	index int
}

func selectors(refs []variantRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = r.sel
	}
	return out
}

// selectVariants resolves srtctl's selector syntax (cli/submit.py
// parse_config_arg and core/config.py generate_override_configs) against
// the file's configs.
func selectVariants(selector string, all []variantRef) ([]variantRef, error) {
	section := func(key string) []variantRef {
		var out []variantRef
		for _, r := range all {
			if r.sec.key == key {
				out = append(out, r)
			}
		}
		return out
	}
	for _, r := range all {
		if r.sel == selector {
			return []variantRef{r}, nil
		}
	}
	switch m := zipSelector.FindStringSubmatch(selector); {
	case selector == "":
		return all, nil
	case selector == "base":
		return []variantRef{{sel: "base"}}, nil
	case m != nil:
		if n := len(section(m[1])); n > 0 {
			return nil, fmt.Errorf("variant %q: index out of range (%s has %d configs, 0-%d)", selector, m[1], n, n-1)
		}
		return nil, fmt.Errorf("variant %q: no section %s", selector, m[1])
	case strings.ContainsAny(selector, "*?"):
		var out []variantRef
		for _, r := range all {
			if ok, _ := path.Match(selector, r.sec.key); ok {
				out = append(out, r)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("variant %q matches no section", selector)
		}
		return out, nil
	case strings.HasPrefix(selector, "zip_override_") || strings.HasPrefix(selector, "override_"):
		if out := section(selector); len(out) > 0 {
			return out, nil
		}
		return nil, fmt.Errorf("variant %q: no such section", selector)
	}
	return nil, fmt.Errorf("variant %q is not base, override_NAME, zip_override_NAME, zip_override_NAME[I] or a glob", selector)
}

func available(refs []variantRef) string {
	if len(refs) == 0 {
		return "(none)"
	}
	return strings.Join(selectors(refs), ", ")
}

// zipLength is srtctl's _determine_zip_length: every list-valued leaf
// (reached through mappings) is a dimension; length-1 lists broadcast; the
// others must agree.
func zipLength(n *yaml.Node) (int, error) {
	var lengths []int
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		for i := 0; i+1 < len(n.Content); i += 2 {
			switch v := deAlias(n.Content[i+1]); v.Kind {
			case yaml.SequenceNode:
				lengths = append(lengths, len(v.Content))
			case yaml.MappingNode:
				walk(v)
			}
		}
	}
	walk(n)
	if len(lengths) == 0 {
		return 0, fmt.Errorf("no list values: nothing to zip")
	}
	n0 := 1
	other := map[int]bool{}
	for _, l := range lengths {
		if l == 0 {
			return 0, fmt.Errorf("an empty list cannot be zipped")
		}
		if l != 1 {
			other[l] = true
			n0 = l
		}
	}
	if len(other) > 1 {
		var ls []int
		for l := range other {
			ls = append(ls, l)
		}
		sort.Ints(ls)
		return 0, fmt.Errorf("lists of lengths %v: all lists must have the same length or length 1 (broadcast)", ls)
	}
	return n0, nil
}

// sliceZip is srtctl's _apply_zip_slice: each list leaf becomes its
// index-th element (length-1 lists broadcast); scalars pass through.
func sliceZip(n *yaml.Node, index int) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deAlias(n.Content[i+1])
		switch v.Kind {
		case yaml.SequenceNode:
			if len(v.Content) == 1 {
				v = v.Content[0]
			} else {
				v = v.Content[index]
			}
		case yaml.MappingNode:
			v = sliceZip(v, index)
		}
		out.Content = append(out.Content, k, v)
	}
	return out
}

// mergeNodes deep-merges override into base (srtctl's deep_merge and
// comment_aware_merge): mappings merge key by key, keeping base order with
// new keys appended; anything else is replaced whole. A null deletes the
// key when nullDeletes (override_* sections); in zip sections srtctl keeps
// the base value, and kept records it. origins records which section set
// each field.
func mergeNodes(base, override *yaml.Node, label, prefix string, origins map[string]string, nullDeletes bool, kept *[]KeptNull) *yaml.Node {
	base = deAlias(base)
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: base.Line, Column: base.Column}
	for i := 0; i+1 < len(base.Content); i += 2 {
		k, bv := base.Content[i], base.Content[i+1]
		field := yamltree.JoinField(prefix, k.Value)
		ov := mapGet(override, k.Value)
		switch {
		case ov == nil:
			out.Content = append(out.Content, k, bv)
		case deAlias(ov).Tag == "!!null":
			if nullDeletes {
				origins[field] = label + " (deleted)"
				continue
			}
			*kept = append(*kept, KeptNull{Line: deAlias(ov).Line, Field: field, Section: label, Base: yamltree.PyStr(bv)})
			out.Content = append(out.Content, k, bv)
		case deAlias(bv).Kind == yaml.MappingNode && deAlias(ov).Kind == yaml.MappingNode:
			out.Content = append(out.Content, k, mergeNodes(bv, ov, label, field, origins, nullDeletes, kept))
		default:
			recordOrigins(deAlias(ov), label, field, origins)
			out.Content = append(out.Content, k, ov)
		}
	}
	for i := 0; i+1 < len(override.Content); i += 2 {
		k, ov := override.Content[i], override.Content[i+1]
		if mapGet(base, k.Value) != nil || deAlias(ov).Tag == "!!null" {
			continue
		}
		field := yamltree.JoinField(prefix, k.Value)
		recordOrigins(deAlias(ov), label, field, origins)
		out.Content = append(out.Content, k, ov)
	}
	return out
}

// recordOrigins marks field, and every field below it, as set by label.
func recordOrigins(n *yaml.Node, label, field string, origins map[string]string) {
	if n.Kind != yaml.MappingNode || len(n.Content) == 0 {
		origins[field] = label
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		recordOrigins(deAlias(n.Content[i+1]), label, yamltree.JoinField(field, n.Content[i].Value), origins)
	}
}

func setName(doc *yaml.Node, name string) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: doc.Line, Column: doc.Column}
	value := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: doc.Line}
	found := false
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Value == "name" {
			v, found = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Line: k.Line}, true
		}
		out.Content = append(out.Content, k, v)
	}
	if !found {
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: doc.Line}, value)
	}
	return out
}
