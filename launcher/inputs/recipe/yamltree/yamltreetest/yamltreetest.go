// Package yamltreetest holds what the tests of the recipe reader's YAML
// layers share. Tests only.
package yamltreetest

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// Parse returns the top node of text's one document, failing t on bad YAML.
func Parse(t testing.TB, text string) *yaml.Node {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		t.Fatal(err)
	}
	if len(root.Content) == 0 {
		t.Fatalf("no YAML document in %q", text)
	}
	return root.Content[0]
}
