package fragment

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Select is the single-node launcher's choice (single_node.py
// select_recipe): of the configs the selector names, the one the point
// binds to and that serves it (a variant that names its CONC or
// KV_OFFLOADING serves only that point; its GPUs and parallelism must be
// the point's). None, or several, is a *variants.SelectError naming them.
func Select(file string, doc *yaml.Node, selector string, in Input) (*variants.Variant, error) {
	all, err := variants.ExpandAll(file, doc, selector)
	if err != nil {
		return nil, err
	}
	var match []*variants.Variant
	var why, names []string
	for _, v := range all {
		if _, err := BindServing(file, v.Doc, in); err != nil {
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

// BindServing is Bind, then for a single-node point the check that the
// bound recipe serves it (Serves), as select_recipe binds and then
// validates each variant.
func BindServing(file string, doc *yaml.Node, in Input) (*yaml.Node, error) {
	bound, err := Bind(file, doc, in)
	if err != nil || in.Lane.MultiNode {
		return bound, err
	}
	if err := Serves(bound, in.Point); err != nil {
		return nil, &yamltree.Error{File: file, Line: doc.Line, Field: "roles.agg", Msg: "the recipe does not serve the point: " + err.Error()}
	}
	return bound, nil
}

// Serves is the part of the single-node launcher's validate_recipe
// (single_node.py, stored id 70886418919) that tells a bundle's variants
// apart: the aggregated worker's GPUs and each engine's own parallelism
// fields against the point's TP, EP and DP attention. A variant that does
// not serve the point says why.
func Serves(doc *yaml.Node, p Point) error {
	agg := yamltree.Get(yamltree.Get(doc, "roles"), "agg")
	if agg == nil {
		return fmt.Errorf("no roles.agg: a single-node recipe serves from one aggregated worker")
	}
	if g := intValue(yamltree.Get(agg, "gpus"), -1); g != p.GPUCount {
		return fmt.Errorf("roles.agg.gpus %d is not the point's %d GPUs", g, p.GPUCount)
	}
	engine := yamltree.Get(doc, "engine")
	if t := yamltree.Get(engine, "type"); t != nil {
		engine = t
	}
	args := yamltree.Get(agg, "args")
	arg := func(k string, dflt int) int { return intValue(yamltree.Get(args, k), dflt) }
	flag := func(k string) bool { b, _ := yamltree.Bool(yamltree.Get(args, k)); return b }
	dp := 1
	if p.DPAttention {
		dp = p.TP
	}
	type check struct {
		what      string
		got, want any
	}
	var checks []check
	switch engine.Value {
	case "sglang":
		ep := arg("expert-parallel-size", arg("ep-size", 1))
		checks = []check{{"tensor-parallel-size", arg("tensor-parallel-size", -1), p.TP}, {"data-parallel-size", arg("data-parallel-size", 1), dp},
			{"expert-parallel-size", ep, p.EP}, {"enable-dp-attention", flag("enable-dp-attention"), p.DPAttention}}
	case "trtllm":
		checks = []check{{"tensor_parallel_size", arg("tensor_parallel_size", -1), p.TP}, {"moe_expert_parallel_size", arg("moe_expert_parallel_size", -1), p.EP},
			{"pipeline_parallel_size", arg("pipeline_parallel_size", 1), 1}, {"enable_attention_dp", flag("enable_attention_dp"), p.DPAttention}}
	case "vllm":
		d := arg("data-parallel-size", 1)
		checks = []check{{"tensor x data parallel", arg("tensor-parallel-size", 1) * d, p.TP}, {"DP attention", d > 1, p.DPAttention},
			{"enable-expert-parallel", flag("enable-expert-parallel"), p.EP > 1}}
	}
	for _, c := range checks {
		if c.got != c.want {
			return fmt.Errorf("%s: recipe %v, point %v", c.what, c.got, c.want)
		}
	}
	return nil
}

// intValue is an integer scalar's value, or dflt.
func intValue(n *yaml.Node, dflt int) int {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return dflt
	}
	v, err := strconv.Atoi(n.Value)
	if err != nil {
		return dflt
	}
	return v
}
