package yamltree

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
)

// A recipe's values reach srtctl's scripts and engines through Python's
// str() of what PyYAML parsed; these render a node the same way, for the
// recipe's Value and for the readers that compare or quote a value in a
// message.

// Bool returns n's value and true when n is a YAML boolean.
func Bool(n *yaml.Node) (bool, bool) {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false, false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	return b, err == nil
}

// PyStr renders n as Python's str() of what PyYAML would parse; nil is None.
func PyStr(n *yaml.Node) string {
	if n == nil {
		return "None"
	}
	n = DeAlias(n)
	switch n.Kind {
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "None"
		case "!!bool":
			if b, _ := strconv.ParseBool(strings.ToLower(n.Value)); b {
				return "True"
			}
			return "False"
		case "!!int":
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				return strconv.FormatInt(i, 10)
			}
			return n.Value
		case "!!float":
			f, err := strconv.ParseFloat(yamlSpecialFloat(n.Value), 64)
			if err != nil {
				return n.Value
			}
			return pyfloat.Repr(f)
		default:
			return n.Value
		}
	case yaml.SequenceNode, yaml.MappingNode:
		var anyv any
		if err := n.Decode(&anyv); err == nil {
			return jsonish(anyv)
		}
	}
	return n.Value
}

// yamlSpecialFloat spells YAML's .inf, -.inf and .nan (any case) the way
// strconv parses them.
func yamlSpecialFloat(s string) string {
	switch strings.ToLower(s) {
	case ".inf", "+.inf":
		return "inf"
	case "-.inf":
		return "-inf"
	case ".nan":
		return "nan"
	}
	return s
}

func jsonish(v any) string {
	switch t := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(t)
	case string:
		return strconv.Quote(t)
	case int:
		return strconv.Itoa(t)
	case float64:
		return pyfloat.Repr(t)
	case []any:
		parts := make([]string, len(t))
		for i, x := range t {
			parts[i] = jsonish(x)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ": " + jsonish(t[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// Clip quotes a value for a message, cut to 80 bytes.
func Clip(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return fmt.Sprintf("%q", s)
}
