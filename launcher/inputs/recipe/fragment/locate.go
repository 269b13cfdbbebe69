package fragment

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Place is where a field of a bound recipe was written: the file the user
// edits (the fragment, or the shared or telemetry block it is composed
// with), the line, and the field as spelled there (under its variant's
// section for a bundle: override_a.frontend.type).
type Place struct {
	File  string
	Line  int
	Field string
	// Block is "" for the fragment, else which block it is ("the
	// agentic multi-node lane's shared block", "the telemetry block").
	Block string
}

// Locate finds where field (a dotted field of the bound recipe, as the
// planner names it) was written, by the composing order the launcher
// merges in (workload.py compose_recipe, variants): the selected variant's
// section over base in a bundle (or the whole fragment otherwise), over
// the telemetry block, over the lane's shared block. The first layer that
// sets the field wins; a field no layer sets (a key the binder wrote, or
// one a normalizer derived) is looked up by its parents, the nearest one
// written. ok is false when nothing on the way is written anywhere.
func Locate(fragFile string, frag *yaml.Node, selector string, b Blocks, field string) (Place, bool) {
	type layer struct {
		file, block, prefix string
		lines               map[string]int
	}
	index := func(n *yaml.Node) map[string]int {
		out := map[string]int{}
		if n != nil {
			yamltree.IndexLines(Plain(n), "", out)
		}
		return out
	}
	fl := index(frag)
	var layers []layer
	if _, bundle := fl["base"]; bundle {
		if section, _, _ := strings.Cut(selector, "["); section != "" && section != "base" {
			layers = append(layers, layer{file: fragFile, prefix: section + ".", lines: fl})
		}
		layers = append(layers, layer{file: fragFile, prefix: "base.", lines: fl})
	} else {
		layers = append(layers, layer{file: fragFile, lines: fl})
	}
	if b.Telemetry != nil {
		layers = append(layers, layer{file: b.TelemetryFile, block: "the telemetry block", lines: index(b.Telemetry)})
	}
	if b.Shared != nil {
		layers = append(layers, layer{file: b.SharedFile, block: "the lane's shared block", lines: index(b.Shared)})
	}
	for f := field; f != ""; f = parent(f) {
		for _, l := range layers {
			if line, ok := l.lines[l.prefix+f]; ok {
				return Place{File: l.file, Line: line, Field: l.prefix + f, Block: l.block}, true
			}
		}
	}
	return Place{}, false
}

// parent is field without its last key or list index
// (roles.prefill.nodes → roles.prefill, services[0] → services).
func parent(field string) string {
	i := strings.LastIndexAny(field, ".[")
	if i < 0 {
		return ""
	}
	return field[:i]
}
