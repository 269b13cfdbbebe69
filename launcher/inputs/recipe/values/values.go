// Package values holds a recipe's leaf values as YAML wrote them: engine
// and router arguments, environment blocks and option scalars rendered as
// srtctl's Python renders them (str() of what PyYAML parses), an engine
// config as CLI flags by srtctl's rule, benchmark.concurrencies in every
// form srtctl accepts, and blocks kept undecoded. Package recipe decodes
// into them and names them by its own aliases (recipe.Value, ...).
package values

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Value is an engine-config or router-arg value kept as YAML wrote it, so it
// renders exactly as srtctl's Python does (str() of the parsed value).
type Value struct{ node *yaml.Node }

// UnmarshalYAML keeps the node (aliases resolved).
func (v *Value) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	v.node = n
	return nil
}

// New is node n as a value.
func New(n *yaml.Node) Value { return Value{n} }

// Node is the YAML node the value keeps (nil when absent).
func (v Value) Node() *yaml.Node { return v.node }

// Pos is where the value was written (line, column), so a caller can keep
// a mapping's document order, which Python's dicts keep.
func (v Value) Pos() (line, col int) {
	if v.node == nil {
		return 0, 0
	}
	return v.node.Line, v.node.Column
}

// IsNull reports a YAML null (srtctl omits the flag).
func (v Value) IsNull() bool { return v.node == nil || v.node.Tag == "!!null" }

// Bool returns the value and true when it is a YAML boolean.
func (v Value) Bool() (bool, bool) { return yamltree.Bool(v.node) }

// List returns the rendered items of a sequence value.
func (v Value) List() ([]string, bool) {
	if v.node == nil || v.node.Kind != yaml.SequenceNode {
		return nil, false
	}
	out := make([]string, len(v.node.Content))
	for i, c := range v.node.Content {
		out[i] = Value{c}.String()
	}
	return out, true
}

// IsMapping reports a mapping value (srtctl would pass Python's dict repr;
// slurmbench passes JSON, which is what engines parse).
func (v Value) IsMapping() bool { return v.node != nil && v.node.Kind == yaml.MappingNode }

// String renders the value as Python's str() of what PyYAML would parse.
func (v Value) String() string { return yamltree.PyStr(v.node) }

// Scalar is a YAML scalar kept as text (sbatch/srun option values, req_rate),
// rendered Python-style like Value.
type Scalar struct{ Value }

// UnmarshalYAML refuses non-scalars: these options take one value.
func (s *Scalar) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: wrong type: want a single value", n.Line)
	}
	s.node = n
	return nil
}

// Set reports whether the scalar was present.
func (s Scalar) Set() bool { return s.node != nil }

// Text is the value as srtctl would format it ("" for null or an empty string).
func (s Scalar) Text() string {
	if s.node == nil || s.IsNull() {
		return ""
	}
	return s.String()
}

// EnvMap is an environment block: name → value, values rendered as
// Python's str() (so `X: 1` exports "1" and `X: true` exports "True", as
// srtctl does).
type EnvMap map[string]Scalar

// Strings returns the env as name → string.
func (e EnvMap) Strings() map[string]string {
	out := make(map[string]string, len(e))
	for k, v := range e {
		out[k] = v.Text()
	}
	return out
}

// Concurrencies is benchmark.concurrencies: a list of ints, one int, or a
// string "16x32x64" (srtctl's form).
type Concurrencies struct {
	Values []int
	Set    bool
	// Scalar is the string form as written ("16x32"), "" for a list:
	// srtctl passes a string through to its scripts unchanged.
	Scalar string
	line   int
	err    string
}

// UnmarshalYAML accepts every form srtctl accepts and records bad ones for
// validate, which can then name the field.
func (c *Concurrencies) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	c.Set, c.line = true, n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		c.Scalar = n.Value
		vals, err := ParseConcurrencies(n.Value)
		if err != nil {
			c.err = err.Error()
			return nil
		}
		c.Values = vals
	case yaml.SequenceNode:
		for _, item := range n.Content {
			v, err := strconv.Atoi(item.Value)
			if err != nil || item.Kind != yaml.ScalarNode {
				c.err = fmt.Sprintf("%q is not a whole number", item.Value)
				return nil
			}
			c.Values = append(c.Values, v)
		}
	default:
		c.err = "want a list of numbers or a string like \"16x32\""
	}
	return nil
}

// Err is why the written value is not a list of concurrencies ("" when
// it is one), for the validator to report under the field's name.
func (c Concurrencies) Err() string { return c.err }

// CheckConcurrencies is the one rule a list of concurrencies is held to,
// wherever it came from (the recipe, --conc, CONC_LIST): each positive,
// none listed twice.
func CheckConcurrencies(concs []int) error {
	seen := map[int]bool{}
	for _, c := range concs {
		if c <= 0 {
			return fmt.Errorf("concurrency %d: must be positive", c)
		}
		if seen[c] {
			return fmt.Errorf("concurrency %d: listed twice", c)
		}
		seen[c] = true
	}
	return nil
}

// ParseConcurrencies parses "16x32x64", "16 32 64", "16,32" or "16"; the
// planner checks the list (CheckConcurrencies).
func ParseConcurrencies(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty concurrency list")
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == 'x' || r == ',' || r == ' ' || r == '\t' })
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty concurrency list %q", s)
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q in %q is not a whole number", f, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// Raw is a block kept undecoded: a feature slurmbench refuses by name (so
// its inner keys must not trip strict decoding) or never reads.
type Raw struct{ Node *yaml.Node }

// UnmarshalYAML keeps the node.
func (r *Raw) UnmarshalYAML(n *yaml.Node) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	r.Node = n
	return nil
}

// Value is the scalar text ("" for blocks).
func (r *Raw) Value() string {
	if r == nil || r.Node == nil {
		return ""
	}
	return r.Node.Value
}
