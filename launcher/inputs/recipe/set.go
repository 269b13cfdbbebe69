package recipe

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/internal/suggest"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamldoc"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"go.yaml.in/yaml/v3"
)

// --set KEY=VALUE and --unset KEY (srt-slurm 2.x's cli/submit.py
// add_override_args: "Override a recipe value by dotted path before
// validation ... Values parse as YAML scalars or lists; mappings stay literal
// strings. On override files the value is written into base and every
// variant.") edit the recipe's YAML node tree after duplicate keys are
// resolved and before override-file expansion and decoding, so a workflow
// runner changes one value without editing the file with sed, and the value
// is checked, decoded and validated exactly as if the file had said it.

// Override is one --set or --unset.
type Override struct {
	Path  []string   // the dotted path, split
	Value *yaml.Node // the parsed value; nil for --unset
	raw   string     // the value as given
}

// Unset reports whether o removes its key.
func (o Override) Unset() bool { return o.Value == nil }

// Key is the dotted path.
func (o Override) Key() string { return strings.Join(o.Path, ".") }

// String renders o as the flag that gives it: "--set KEY=VALUE" or "--unset KEY".
func (o Override) String() string {
	if o.Unset() {
		return "--unset " + o.Key()
	}
	return "--set " + o.Key() + "=" + o.raw
}

// OverrideError is a --set or --unset the recipe's schema does not allow:
// a path it does not have (Suggestion is the nearest one it has), a value
// of the wrong type, or a path through something that is not a mapping.
type OverrideError struct {
	Flag       string // as given: "--set resources.prefil_nodes=2"
	Msg        string
	Suggestion string // nearest valid dotted path, or ""
}

func (e *OverrideError) Error() string {
	s := e.Flag + ": " + e.Msg
	if e.Suggestion != "" {
		s += fmt.Sprintf("; did you mean %s?", e.Suggestion)
	}
	return s
}

// ParseSet parses the argument of --set: KEY=VALUE, VALUE read as one YAML
// scalar or flow list ("" is null, as in a YAML file); a mapping value is
// kept as its literal text, as srtctl keeps it.
func ParseSet(arg string) (Override, error) {
	key, raw, ok := strings.Cut(arg, "=")
	if !ok {
		return Override{}, &OverrideError{Flag: "--set " + arg, Msg: "want KEY=VALUE (a dotted path, e.g. health_check.max_attempts=720)"}
	}
	path, err := splitPath("--set "+arg, key)
	if err != nil {
		return Override{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(raw), &doc); err != nil {
		return Override{}, &OverrideError{Flag: "--set " + arg, Msg: "value is not YAML: " + cleanYAMLErr(err)}
	}
	var v *yaml.Node
	switch {
	case len(doc.Content) == 0:
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case doc.Content[0].Kind == yaml.MappingNode || doc.Content[0].Kind == yaml.AliasNode || doc.Content[0].Anchor != "":
		v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: raw, Style: yaml.SingleQuotedStyle}
	default:
		v = doc.Content[0]
		stripPositions(v)
	}
	return Override{Path: path, Value: v, raw: raw}, nil
}

// ParseUnset parses the argument of --unset: a dotted path.
func ParseUnset(arg string) (Override, error) {
	path, err := splitPath("--unset "+arg, arg)
	if err != nil {
		return Override{}, err
	}
	return Override{Path: path}, nil
}

func splitPath(flag, key string) ([]string, error) {
	path := strings.Split(strings.TrimSpace(key), ".")
	for _, p := range path {
		if p == "" {
			return nil, &OverrideError{Flag: flag, Msg: fmt.Sprintf("%q is not a dotted path (an empty part)", key)}
		}
	}
	return path, nil
}

// stripPositions clears the line/column of a value parsed from a flag (they
// are positions in the flag, not in the recipe) and its comments.
func stripPositions(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	for _, c := range n.Content {
		stripPositions(c)
	}
}

// ApplyOverrides applies ovs in order to doc, a recipe's top-level mapping
// (a plain recipe or an override file), checking each path and value
// against the recipe schema doc declares. On an override file a --set is
// written into base and into every override_*/zip_override_* section that
// sets the path or a block above it (elsewhere the base value already
// reaches the config); in a zip section a list value is wrapped as a
// one-element list, which broadcasts. An --unset removes the key from base
// and every section. It returns what was applied, rendered as the flags.
func ApplyOverrides(doc *yaml.Node, ovs []Override) ([]string, error) {
	if len(ovs) == 0 {
		return nil, nil
	}
	schema, version := schemaType(doc)
	var applied []string
	for _, o := range ovs {
		if err := checkOverride(schema, version, o); err != nil {
			return nil, err
		}
		targets := []*yaml.Node{doc}
		var zips []*yaml.Node
		if variants.IsOverrideFile(doc) {
			targets = []*yaml.Node{deAlias(mapGet(doc, "base"))}
			for i := 0; i+1 < len(doc.Content); i += 2 {
				k, v := doc.Content[i].Value, deAlias(doc.Content[i+1])
				switch {
				case v.Kind != yaml.MappingNode:
				case strings.HasPrefix(k, "override_") && (o.Unset() || yamltree.Touches(v, o.Path)):
					targets = append(targets, v)
				case strings.HasPrefix(k, "zip_override_") && (o.Unset() || yamltree.Touches(v, o.Path)):
					zips = append(zips, v)
				}
			}
		}
		for _, t := range targets {
			if err := yamltree.SetPath(t, o.Path, o.Value); err != nil {
				return nil, &OverrideError{Flag: o.String(), Msg: err.Error()}
			}
		}
		for _, z := range zips {
			v := o.Value
			if v != nil && v.Kind == yaml.SequenceNode {
				v = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: []*yaml.Node{v}}
			}
			if err := yamltree.SetPath(z, o.Path, v); err != nil {
				return nil, &OverrideError{Flag: o.String(), Msg: err.Error()}
			}
		}
		applied = append(applied, o.String())
	}
	return applied, nil
}

// schemaType is the Go type whose keys the recipe doc may have, and the
// schema version it declares (at its top level, or in an override file's
// base:); a bad version is the reader's to report, later.
func schemaType(doc *yaml.Node) (reflect.Type, int) {
	n, err := schemaVersion("", doc)
	if err == nil && n == 1 && variants.IsOverrideFile(doc) {
		n, err = schemaVersion("", deAlias(mapGet(doc, "base")))
	}
	if err == nil && n == 2 {
		return reflect.TypeOf(v2Doc{}), 2
	}
	return reflect.TypeOf(Recipe{}), 1
}

// checkOverride checks o's path against the recipe schema t and, for a
// --set, that its value decodes into the field's type.
func checkOverride(root reflect.Type, version int, o Override) error {
	if version == 2 && schema2.DecidedByName(o.Path) {
		return nil
	}
	t := root
	for i, p := range o.Path {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		here := strings.Join(o.Path[:i], ".")
		switch {
		case t == reflect.TypeOf(Raw{}) || t == reflect.TypeOf(Value{}) || t.Kind() == reflect.Interface:
			// A block kept as written (engine args, kv_events_config, ...):
			// any key below it is the recipe's own.
			return checkValue(t, o)
		case t.Kind() == reflect.Map:
			t = t.Elem()
			continue
		case t.Kind() == reflect.Struct && !yamldoc.DecodesItself(t):
			fields, open := yamldoc.Fields(t, version)
			ft, ok := fields[p]
			if !ok {
				if open {
					return checkValue(reflect.TypeOf(Value{}), o)
				}
				return &OverrideError{Flag: o.String(), Msg: fmt.Sprintf("no key %q in %s", p, blockOrTop(here)),
					Suggestion: suggestPath(root, version, t, o.Path[:i], o.Path[i:])}
			}
			t = ft
			continue
		}
		return &OverrideError{Flag: o.String(), Msg: fmt.Sprintf("%s is a single value, it has no key %q", here, p)}
	}
	return checkValue(t, o)
}

func blockOrTop(path string) string {
	if path == "" {
		return "the recipe's top level"
	}
	return path
}

// checkValue decodes a --set value into a fresh t, as the recipe's decoder
// will: a value of the wrong type fails here, naming the flag.
func checkValue(t reflect.Type, o Override) error {
	if o.Unset() {
		return nil
	}
	dst := reflect.New(t)
	if err := o.Value.Decode(dst.Interface()); err != nil {
		msg := cleanYAMLErr(err)
		if i := strings.Index(msg, "wrong type: "); i >= 0 {
			msg = msg[i:]
		}
		return &OverrideError{Flag: o.String(), Msg: msg}
	}
	return nil
}

// suggestPath is the valid dotted path nearest to the wrong one: at the
// first wrong part, the key of struct t closest by edit distance, followed
// by the rest of the path when that is valid below it.
func suggestPath(root reflect.Type, version int, t reflect.Type, prefix, rest []string) string {
	fields, _ := yamldoc.Fields(t, version)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	best, bestD := "", -1
	for _, n := range names {
		if d := suggest.Distance(rest[0], n); bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	// A suggestion further than half the word away is noise.
	if best == "" || bestD > (len(rest[0])+1)/2+1 {
		// Maybe the wrong part is missing a level: a key one block down.
		for _, n := range names {
			ft := fields[n]
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				inner, open := yamldoc.Fields(ft, version)
				candidate := append(append(append([]string{}, prefix...), n), rest...)
				if !open && inner[rest[0]] != nil && checkOverride(root, version, Override{Path: candidate}) == nil {
					return strings.Join(candidate, ".")
				}
			}
		}
		return ""
	}
	path := append(append([]string{}, prefix...), best)
	if full := append(append([]string{}, path...), rest[1:]...); checkOverride(root, version, Override{Path: full}) == nil {
		return strings.Join(full, ".")
	}
	return strings.Join(path, ".")
}
