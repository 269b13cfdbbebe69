package recipe

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Fragment says how to read an InferenceX recipe fragment (its RECIPES.md
// § Recipe fragments; package fragment has the rules): which blocks it is
// composed with and which point it is bound to.
type Fragment struct {
	Blocks fragment.Blocks
	Input  fragment.Input
	// ComposeOnly stops after composing (and selecting, when a variant is
	// given): render --composed without a point.
	ComposeOnly bool
	// KeepFabric leaves '@fabric.<name>' values as written: generate, for
	// a runner label that spans several clusters.
	KeepFabric bool
	// Stage points model.path at the cluster's staged checkpoint and
	// model.container at its staged squash file, where Input names them.
	Stage bool
}

func (f *Fragment) binds() bool { return f != nil && !f.ComposeOnly }

// BoundKeyError is a fragment that sets a key the binder writes; it names
// the file, the line and the key (exit 2 with the other recipe errors).
type BoundKeyError = fragment.BoundKeyError

// composeFragment is fragment.Compose when opt reads a fragment.
func composeFragment(path string, doc *yaml.Node, f *Fragment) (*yaml.Node, error) {
	if f == nil {
		return doc, nil
	}
	out, err := fragment.Compose(path, doc, f.Input.Lane, f.Blocks)
	return out, err
}

// bindPoint is fragment.BindServing, then fragment.Resolve of the point's
// DRAM budget and the cluster's fabric, then (Stage) fragment.Stage, then
// the --set edits: InferenceX's launcher hands srtctl the bound recipe and
// srtctl applies them to it (infx/launch/drivers/srt/submit.py@032c3c25).
func bindPoint(path string, doc *yaml.Node, opt Options, st *prepared) (bound *yaml.Node, err error) {
	f := opt.Fragment
	if f == nil {
		return doc, nil
	}
	bound = doc
	if f.binds() {
		if bound, err = fragment.BindServing(path, doc, f.Input); err != nil {
			return nil, err
		}
		budget, err := f.Input.DRAMBudget()
		if err != nil {
			return nil, &Error{File: path, Msg: err.Error()}
		}
		fabric := &f.Input.Cluster.Fabric
		if f.KeepFabric {
			fabric = nil
		}
		if err := fragment.Resolve(path, bound, budget, fabric); err != nil {
			return nil, err
		}
		if f.Stage {
			fragment.Stage(bound, f.Input.Cluster)
		}
	}
	if st.applied, err = ApplyOverrides(bound, opt.Overrides); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return bound, nil
}

// selectForPoint is fragment.Select, its errors as this package's.
func selectForPoint(path string, doc *yaml.Node, selector string, f *Fragment) (*variants.Variant, error) {
	v, err := fragment.Select(path, doc, selector, f.Input)
	var se *variants.SelectError
	if errors.As(err, &se) {
		return nil, &VariantError{Err: Error{File: se.File, Line: se.Line, Field: se.Field, Msg: se.Msg}, Variants: se.Variants}
	}
	return v, err
}

// withSchema is mapping doc with schema: n first.
func withSchema(doc *yaml.Node, n int) *yaml.Node {
	out := *doc
	out.Content = append([]*yaml.Node{yamltree.StrKey("schema"),
		{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(n), Line: doc.Line}}, doc.Content...)
	return &out
}

// Bound is the recipe document after the stages before normalizing:
// composed, its variant selected and its point bound, as InferenceX's
// launcher hands it to srtctl. Selector is the config's selector ("" for
// a plain recipe).
type Bound struct {
	Doc      *yaml.Node
	Selector string
	Warnings []string
}

// LoadBound reads the file at path through the stages up to binding.
func LoadBound(ctx context.Context, path string, opt Options) (*Bound, error) {
	data, err := readlimit.ReadFileContext(ctx, path, MaxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("reading recipe: %w", err)
	}
	st, err := prepare(path, data, opt)
	if err != nil {
		return nil, err
	}
	b := &Bound{Doc: st.doc, Warnings: st.warnings}
	if st.variant != nil {
		b.Selector = st.variant.Selector
	}
	return b, nil
}
