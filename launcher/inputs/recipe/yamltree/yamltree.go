// Package yamltree holds the edits of YAML node trees that reading,
// overriding, normalizing and migrating recipes share: keys looked up
// through aliases, merge keys expanded into a copy, deep copies, a dotted
// path set or removed (path.go), the line of each dotted field (lines.go),
// and a node's value rendered as srtctl's Python sees it (python.go).
package yamltree

import "go.yaml.in/yaml/v3"

// Get returns the value of key in mapping n, or nil.
func Get(n *yaml.Node, key string) *yaml.Node {
	n = DeAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// KeyValue returns the key and value nodes of key in mapping n, or nils.
func KeyValue(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = DeAlias(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// Delete removes every occurrence of key from mapping n.
func Delete(n *yaml.Node, key string) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	kept := n.Content[:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != key {
			kept = append(kept, n.Content[i], n.Content[i+1])
		}
	}
	n.Content = kept
}

// DeAlias follows aliases to the node they name.
func DeAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// KeyIndex is the index in m.Content of key's key node, or -1.
func KeyIndex(m *yaml.Node, key string) int {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// FlattenCopy copies mapping m with its merge keys (<<) expanded into
// explicit keys (explicit ones win, as in YAML), so editing the copy
// changes no anchor another block shares.
func FlattenCopy(m *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: m.Line, Column: m.Column, Style: m.Style,
		HeadComment: m.HeadComment, LineComment: m.LineComment, FootComment: m.FootComment}
	seen := map[string]bool{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Value != "<<" {
			seen[k.Value] = true
			out.Content = append(out.Content, k, m.Content[i+1])
		}
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value != "<<" {
			continue
		}
		for _, src := range MergeSources(m.Content[i+1]) {
			src = FlattenCopy(DeAlias(src))
			for j := 0; j+1 < len(src.Content); j += 2 {
				if k := src.Content[j]; !seen[k.Value] {
					seen[k.Value] = true
					out.Content = append(out.Content, k, src.Content[j+1])
				}
			}
		}
	}
	return out
}

// DeepCopy copies n and every node below it.
func DeepCopy(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = DeepCopy(x)
	}
	return &c
}

// MergeSources are the mappings a merge key's value names: one, or a
// sequence of them.
func MergeSources(v *yaml.Node) []*yaml.Node {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return []*yaml.Node{v}
}

// StrKey is a string key node.
func StrKey(k string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k} }

// HasMerge reports a merge key (<<) in mapping m.
func HasMerge(m *yaml.Node) bool { return KeyIndex(m, "<<") >= 0 }

// JoinField is the dotted field path of key under prefix ("" is the top).
func JoinField(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}
