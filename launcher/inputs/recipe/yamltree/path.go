package yamltree

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Touches reports whether mapping m sets path or a key above it.
func Touches(m *yaml.Node, path []string) bool {
	for _, p := range path {
		v := DeAlias(Lookup(m, p))
		if v == nil {
			return false
		}
		if v.Kind != yaml.MappingNode {
			return true
		}
		m = v
	}
	return true
}

// Lookup is the value of key in mapping m, explicit or merged (<<).
func Lookup(m *yaml.Node, key string) *yaml.Node {
	if v := Get(m, key); v != nil {
		return v
	}
	m = DeAlias(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "<<" {
			for _, src := range MergeSources(m.Content[i+1]) {
				if v := Lookup(src, key); v != nil {
					return v
				}
			}
		}
	}
	return nil
}

// SetPath sets (or, value nil, removes) the dotted path in mapping m, a
// copy of value in place of the old one, which keeps its comments (and its
// quoting, for a same-typed scalar). A block on the way that is an alias or
// comes through a merge key (<<) is copied into place first, so the edit
// never reaches another place that shares the anchor. An error says what
// is in the way.
func SetPath(m *yaml.Node, path []string, value *yaml.Node) error {
	for i, p := range path {
		last := i == len(path)-1
		idx := KeyIndex(m, p)
		if last {
			if value == nil {
				if idx >= 0 {
					m.Content = append(m.Content[:idx], m.Content[idx+2:]...)
				} else if Lookup(m, p) != nil {
					return fmt.Errorf("%s comes from a merge key (<<) at line %d; unset it where the anchor defines it", strings.Join(path[:i+1], "."), m.Line)
				}
				return nil
			}
			v := DeepCopy(value)
			if idx >= 0 {
				old := m.Content[idx+1]
				v.LineComment, v.FootComment = old.LineComment, old.FootComment
				if old.Kind == yaml.ScalarNode && v.Kind == yaml.ScalarNode && old.Tag == v.Tag && old.Style != 0 && v.Style == 0 {
					v.Style = old.Style // keep the file's quoting of a same-typed scalar
				}
				m.Content[idx+1] = v
			} else {
				m.Content = append(m.Content, StrKey(p), v)
			}
			return nil
		}
		var next *yaml.Node
		if idx >= 0 {
			next = m.Content[idx+1]
		} else {
			next = Lookup(m, p)
			if next == nil && value == nil {
				return nil // nothing to remove
			}
		}
		next = DeAlias(next)
		switch {
		case next == nil || next.Kind == yaml.ScalarNode && next.Tag == "!!null":
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		case next.Kind != yaml.MappingNode:
			return fmt.Errorf("%s is not a mapping (line %d)", strings.Join(path[:i+1], "."), next.Line)
		case idx < 0 || m.Content[idx+1].Kind == yaml.AliasNode || HasMerge(next):
			next = FlattenCopy(next)
		}
		if idx >= 0 {
			m.Content[idx+1] = next
		} else {
			m.Content = append(m.Content, StrKey(p), next)
		}
		m = next
	}
	return nil
}
