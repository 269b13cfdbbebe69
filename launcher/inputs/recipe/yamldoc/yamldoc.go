// Package yamldoc reads a recipe file's YAML before anything decodes it:
// exactly one document holding a mapping, aliases that expand to a bounded
// size (an alias bomb is refused before it is walked), keys set twice
// resolved as PyYAML (srtctl) resolves them, every key checked against the
// Go type that will decode it (keys.go), and yaml.v3's messages made
// readable, each with its line. It knows YAML and reflection, not the
// recipe model: package recipe passes its types in, words an unknown key,
// and turns this package's errors into its own.
package yamldoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// maxExpandedNodes bounds what YAML aliases may expand to. The corpus's
// largest recipe has a few thousand nodes; a "billion laughs" document has
// billions once its aliases are followed.
const maxExpandedNodes = 200_000

// Parse parses data, the recipe file at path, as exactly one YAML document
// holding a mapping, with aliases that expand to a bounded size; a syntax
// error says what went wrong when the cause is a common one. Errors are
// *yamltree.Error.
func Parse(path string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &yamltree.Error{File: path, Msg: "empty recipe"}
		}
		line := Line(err)
		return nil, &yamltree.Error{File: path, Line: line, Msg: hint(path, data, line, strings.Join(Messages(err), "; "))}
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case errors.Is(err, io.EOF):
	case err != nil:
		line := Line(err)
		return nil, &yamltree.Error{File: path, Line: line, Msg: hint(path, data, line, "after the first document: "+strings.Join(Messages(err), "; "))}
	default:
		line := second.Line
		if len(second.Content) > 0 {
			line = second.Content[0].Line
		}
		return nil, &yamltree.Error{File: path, Line: line, Msg: "a second YAML document ('---'): a recipe is one document; srtctl would silently ignore everything after the first"}
	}
	if len(root.Content) == 0 {
		return nil, &yamltree.Error{File: path, Msg: "empty recipe"}
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, &yamltree.Error{File: path, Line: doc.Line, Msg: "a recipe must be a YAML mapping"}
	}
	if n := expandedSize(doc, map[*yaml.Node]int{}, map[*yaml.Node]bool{}); n > maxExpandedNodes {
		return nil, &yamltree.Error{File: path, Line: doc.Line, Msg: fmt.Sprintf("YAML aliases expand to more than %d nodes (an alias bomb?)", maxExpandedNodes)}
	}
	return doc, nil
}

// expandedSize counts n's nodes with every alias followed, saturating just
// above the limit; memo keeps shared anchors from being walked twice.
func expandedSize(n *yaml.Node, memo map[*yaml.Node]int, active map[*yaml.Node]bool) int {
	if s, ok := memo[n]; ok {
		return s
	}
	if active[n] {
		return maxExpandedNodes + 1 // a cycle would expand forever
	}
	active[n] = true
	defer delete(active, n)
	size := 1
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		size += expandedSize(n.Alias, memo, active)
	}
	for _, c := range n.Content {
		size += expandedSize(c, memo, active)
		if size > maxExpandedNodes {
			size = maxExpandedNodes + 1
			break
		}
	}
	memo[n] = size
	return size
}

// DuplicateError is a key set twice in one mapping with different values.
// PyYAML (srtctl) keeps the last silently; slurmbench refuses unless the
// reader allows it (--allow-duplicate-keys).
type DuplicateError struct {
	Err                     yamltree.Error
	FirstLine               int
	FirstValue, SecondValue string // as Python's str()
}

func (e *DuplicateError) Error() string { return e.Err.Error() }

// ResolveDuplicates removes, in the tree below n, every earlier occurrence
// of a key set twice in one mapping, so the last wins as in PyYAML, after
// deciding whether that is allowed: identical values are (a warning),
// different ones only with allow (a warning), else a *DuplicateError naming
// both.
func ResolveDuplicates(path string, n *yaml.Node, allow bool) (warnings []string, err error) {
	err = resolveDuplicates(path, n, "", allow, &warnings)
	return warnings, err
}

func resolveDuplicates(path string, n *yaml.Node, prefix string, allow bool, warnings *[]string) error {
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			if err := resolveDuplicates(path, c, prefix+"[]", allow, warnings); err != nil {
				return err
			}
		}
		return nil
	case yaml.MappingNode:
	default:
		return nil
	}
	last := map[string]int{} // key → index of its last occurrence
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Value != "<<" {
			last[k.Value] = i
		}
	}
	kept := n.Content[:0:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := yamltree.JoinField(prefix, k.Value)
		if j := last[k.Value]; k.Value != "<<" && j != i {
			lk, lv := n.Content[j], n.Content[j+1]
			first, second := yamltree.PyStr(v), yamltree.PyStr(lv)
			switch {
			case first == second:
				*warnings = append(*warnings, fmt.Sprintf("%s:%d: %s: set twice to the same value %s (lines %d and %d)", path, lk.Line, field, yamltree.Clip(second), k.Line, lk.Line))
			case allow:
				*warnings = append(*warnings, fmt.Sprintf("%s:%d: %s: set twice, %s (line %d) then %s (line %d); the last wins as in srtctl (--allow-duplicate-keys)", path, lk.Line, field, yamltree.Clip(first), k.Line, yamltree.Clip(second), lk.Line))
			default:
				return &DuplicateError{
					Err: yamltree.Error{File: path, Line: lk.Line, Field: yamltree.JoinField(prefix, lk.Value),
						Msg: fmt.Sprintf("set twice with different values: %s (line %d) then %s (line %d); srtctl silently keeps the last — fix the recipe, or pass --allow-duplicate-keys to do the same", yamltree.Clip(first), k.Line, yamltree.Clip(second), lk.Line)},
					FirstLine: k.Line, FirstValue: first, SecondValue: second,
				}
			}
			continue // the later occurrence is kept
		}
		if err := resolveDuplicates(path, v, field, allow, warnings); err != nil {
			return err
		}
		kept = append(kept, k, v)
	}
	n.Content = kept
	return nil
}

// hint turns a YAML parser message into what went wrong when the cause
// is a common one: a tab in the indentation (YAML forbids tabs; the parser
// says "found character that cannot start any token"), or a cluster
// profile (TOML) given as the recipe.
func hint(path string, data []byte, line int, msg string) string {
	if profile.LooksLikeProfile(path, data) {
		return "this looks like a cluster profile (TOML), not a recipe (YAML): did you swap --profile (-p) and --recipe (-r)?"
	}
	if strings.Contains(msg, "tab character") {
		return "tabs are not allowed in YAML: indent with spaces (" + msg + ")"
	}
	lines := strings.Split(string(data), "\n")
	if strings.Contains(msg, "cannot start any token") && line >= 1 && line <= len(lines) && strings.Contains(lines[line-1], "\t") {
		return "tabs are not allowed in YAML: indent with spaces (" + msg + ")"
	}
	return msg
}

// Line is the line yaml.v3 reports in err (the first error's of a
// *yaml.TypeError), or 0.
func Line(err error) int {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	var line int
	if i := strings.Index(msg, "line "); i >= 0 {
		_, _ = fmt.Sscanf(msg[i:], "line %d", &line) // no number: line stays 0
	}
	return line
}

// Messages are err's messages without yaml.v3's "yaml: " and "line N: "
// prefixes (the line is Line's): one per error of a *yaml.TypeError.
func Messages(err error) []string {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		m = strings.TrimPrefix(m, "yaml: ")
		if i := strings.Index(m, ": "); i >= 0 && strings.HasPrefix(m, "line ") {
			m = m[i+2:]
		}
		out = append(out, m)
	}
	return out
}
