package fragment

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
)

// Select is the single-node launcher's choice (single_node.py
// select_recipe): of the configs the selector names, the one the point
// binds to (a variant that names its CONC or KV_OFFLOADING serves only
// that point). None, or several, is a *variants.SelectError naming them.
func Select(file string, doc *yaml.Node, selector string, in Input) (*variants.Variant, error) {
	all, err := variants.ExpandAll(file, doc, selector)
	if err != nil {
		return nil, err
	}
	var match []*variants.Variant
	var why, names []string
	for _, v := range all {
		if _, err := Bind(file, v.Doc, in); err != nil {
			why = append(why, v.Selector+": "+err.Error())
			continue
		}
		match = append(match, v)
		names = append(names, v.Selector)
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return nil, &variants.SelectError{File: file, Line: doc.Line, Field: "base",
			Msg: fmt.Sprintf("no variant %q selects serves the point (%s)", selector, strings.Join(why, "; "))}
	}
	return nil, &variants.SelectError{File: file, Line: doc.Line, Field: "base",
		Msg: fmt.Sprintf("%d variants serve the point, not one: %s", len(match), strings.Join(names, ", ")), Variants: names}
}
