package yamltree

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// IndexLines adds to out the line of every dotted field path below n
// ("resources.prefill_nodes"), merge keys (<<) followed; the first
// occurrence of a path wins.
func IndexLines(n *yaml.Node, prefix string, out map[string]int) {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key := n.Content[i].Value
		if key == "<<" {
			IndexLines(n.Content[i+1], prefix, out)
			continue
		}
		p := key
		if prefix != "" {
			p = prefix + "." + key
		}
		if _, seen := out[p]; !seen {
			out[p] = n.Content[i].Line
		}
		IndexLines(n.Content[i+1], p, out)
	}
}

// FieldAtLine names the field a decode error at line is about: yaml.v3
// reports only lines. It is the key on that line, else the nearest key
// above it (a block value); of several keys on one line (a flow mapping)
// the outermost, which holds the others.
func FieldAtLine(doc *yaml.Node, line int) string {
	if line <= 0 {
		return ""
	}
	lines := map[string]int{}
	IndexLines(doc, "", lines)
	best, field := 0, ""
	for f, l := range lines {
		if l > line || l < best {
			continue
		}
		if l > best || strings.Count(f, ".") < strings.Count(field, ".") || strings.Count(f, ".") == strings.Count(field, ".") && f < field {
			best, field = l, f
		}
	}
	return field
}
