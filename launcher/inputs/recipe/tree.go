package recipe

import (
	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The YAML tree helpers of package yamltree, by the names this package's
// code uses.
func mapGet(n *yaml.Node, key string) *yaml.Node { return yamltree.Get(n, key) }
func deAlias(n *yaml.Node) *yaml.Node            { return yamltree.DeAlias(n) }
func clip(s string) string                       { return yamltree.Clip(s) }
