package recipe

import (
	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/values"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamldoc"
)

// ReadForEdit reads a recipe document to edit and write back (package
// migrate): the checks a recipe read makes (one document, a mapping,
// aliases of bounded size), then a tree of its own with keys set twice
// resolved as a read resolves them; warnings say which.
func ReadForEdit(path string, data []byte, allowDuplicateKeys bool) (root *yaml.Node, warnings []string, err error) {
	if _, err := parseDocument(path, data); err != nil {
		return nil, nil, err
	}
	root = &yaml.Node{}
	if err := yaml.Unmarshal(data, root); err != nil {
		return nil, nil, &Error{File: path, Line: yamldoc.Line(err), Msg: cleanYAMLErr(err)}
	}
	if err := resolveDuplicateKeys(path, root.Content[0], allowDuplicateKeys, &warnings); err != nil {
		return nil, nil, err
	}
	return root, warnings, nil
}

// NewValue is node n as an engine-config or recipe value.
func NewValue(n *yaml.Node) Value { return values.New(n) }
