package schema2

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The node edits the normalizer makes; the ones the reader shares are
// package yamltree's, by the names this package's code uses.
func mapGet(n *yaml.Node, key string) *yaml.Node             { return yamltree.Get(n, key) }
func deAlias(n *yaml.Node) *yaml.Node                        { return yamltree.DeAlias(n) }
func mapKeyValue(n *yaml.Node, key string) (k, v *yaml.Node) { return yamltree.KeyValue(n, key) }
func deleteKey(n *yaml.Node, key string)                     { yamltree.Delete(n, key) }
func mergeSources(v *yaml.Node) []*yaml.Node                 { return yamltree.MergeSources(v) }
func clip(s string) string                                   { return yamltree.Clip(s) }

// flatten copies n with every alias followed and every merge key (<<)
// applied (YAML merge: the mapping's own keys win, then earlier sources),
// so normalization sees the values srtctl's PyYAML load would.
func flatten(n *yaml.Node) *yaml.Node {
	n = deAlias(n)
	if n == nil {
		return nil
	}
	out := *n
	out.Anchor, out.Alias = "", nil
	switch n.Kind {
	case yaml.SequenceNode:
		out.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			out.Content[i] = flatten(c)
		}
	case yaml.MappingNode:
		out.Content = nil
		own := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Value != "<<" {
				own[k.Value] = true
			}
		}
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Value == "<<" {
				for _, m := range mergeSources(v) {
					fm := flatten(m)
					for j := 0; j+1 < len(fm.Content); j += 2 {
						mk := fm.Content[j].Value
						if own[mk] || seen[mk] {
							continue
						}
						seen[mk] = true
						out.Content = append(out.Content, fm.Content[j], fm.Content[j+1])
					}
				}
				continue
			}
			seen[k.Value] = true
			kc := *k
			out.Content = append(out.Content, &kc, flatten(v))
		}
	}
	return &out
}

// setKey sets key in mapping n (replacing an existing value), the key node
// carrying line so errors and render point at the schema-2 source.
func setKey(n *yaml.Node, key string, line int, v *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			n.Content[i+1] = v
			return
		}
	}
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: line}, v)
}

func getOrCreateMap(n *yaml.Node, key string, line int) *yaml.Node {
	if v := deAlias(mapGet(n, key)); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line}
	setKey(n, key, line, m)
	return m
}

func scalar(s string, line int) *yaml.Node {
	tag := "!!str"
	if _, err := strconv.Atoi(s); err == nil {
		tag = "!!int"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s, Line: line}
}

func scalarBool(b bool, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b), Line: line}
}
