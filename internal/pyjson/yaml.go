package pyjson

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"go.yaml.in/yaml/v3"
)

// yamlEncoder renders a YAML value as Python's json.dumps would render what
// PyYAML parses from it (ensure_ascii, keys in document order): compact
// with ", " and ": " when indent is 0 (srtctl's --kv-events-config), one
// item per line when indent > 0 (srtctl's mooncake_store_config.json).
type yamlEncoder struct {
	indent int
	b      strings.Builder
}

// YAMLField is one key of an object built in Go, in order.
type YAMLField struct {
	Key   string
	Value *yaml.Node
}

// YAMLObject renders fields as one JSON object (see yamlEncoder for
// indent).
func YAMLObject(indent int, fields []YAMLField) (string, error) {
	e := &yamlEncoder{indent: indent}
	if err := e.object(fields, 0); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

// YAMLFields are a YAML mapping's keys and values, in order; keys that
// PyYAML reads as numbers or booleans become strings as json.dumps makes
// them.
func YAMLFields(n *yaml.Node) ([]YAMLField, error) {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a mapping")
	}
	var out []YAMLField
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		key := k.Value
		if k.Tag == "!!bool" {
			key = strings.ToLower(key)
		}
		out = append(out, YAMLField{key, n.Content[i+1]})
	}
	return out, nil
}

func (e *yamlEncoder) newline(depth int) {
	if e.indent > 0 {
		e.b.WriteByte('\n')
		e.b.WriteString(strings.Repeat(" ", e.indent*depth))
	}
}

func (e *yamlEncoder) sep() string {
	if e.indent > 0 {
		return ","
	}
	return ", "
}

func (e *yamlEncoder) object(fields []YAMLField, depth int) error {
	if len(fields) == 0 {
		e.b.WriteString("{}")
		return nil
	}
	e.b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			e.b.WriteString(e.sep())
		}
		e.newline(depth + 1)
		e.str(f.Key)
		e.b.WriteString(": ")
		if err := e.value(f.Value, depth+1); err != nil {
			return fmt.Errorf("%s: %w", f.Key, err)
		}
	}
	e.newline(depth)
	e.b.WriteByte('}')
	return nil
}

func (e *yamlEncoder) value(n *yaml.Node, depth int) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	switch n.Kind {
	case yaml.MappingNode:
		fields, err := YAMLFields(n)
		if err != nil {
			return err
		}
		return e.object(fields, depth)
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				e.b.WriteString(e.sep())
			}
			e.newline(depth + 1)
			if err := e.value(c, depth+1); err != nil {
				return err
			}
		}
		e.newline(depth)
		e.b.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			e.b.WriteString("null")
		case "!!bool":
			b, err := strconv.ParseBool(strings.ToLower(n.Value))
			if err != nil {
				return fmt.Errorf("%q is not a boolean", n.Value)
			}
			e.b.WriteString(strconv.FormatBool(b))
		case "!!int":
			i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
			if err != nil {
				return fmt.Errorf("%q is not an integer", n.Value)
			}
			e.b.WriteString(strconv.FormatInt(i, 10))
		case "!!float":
			f, err := yamlFloat(n.Value)
			if err != nil {
				return err
			}
			e.b.WriteString(pyfloat.JSON(f))
		default:
			if b, ok := yaml11Bools[n.Value]; ok && n.Style == 0 {
				// PyYAML reads YAML 1.1: a plain yes/no/on/off is a bool.
				e.b.WriteString(strconv.FormatBool(b))
				return nil
			}
			e.str(n.Value)
		}
		return nil
	}
	return fmt.Errorf("cannot render YAML node kind %d", n.Kind)
}

// str quotes s as json.dumps does with ensure_ascii.
func (e *yamlEncoder) str(s string) { e.b.Write(AppendString(nil, s)) }

// yaml11Bools are the plain words PyYAML reads as booleans beyond
// true/false.
var yaml11Bools = map[string]bool{
	"yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// yamlFloat parses a YAML float, .inf and .nan included.
func yamlFloat(s string) (float64, error) {
	switch strings.ToLower(strings.TrimPrefix(s, "+")) {
	case ".inf":
		return math.Inf(1), nil
	case "-.inf":
		return math.Inf(-1), nil
	case ".nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return f, nil
}

// YAMLScalar builds a plain YAML scalar node for an object built in Go.
func YAMLScalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
