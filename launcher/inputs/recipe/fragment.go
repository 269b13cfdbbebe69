package recipe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	return out, fragmentError(err)
}

// bindPoint is fragment.Bind, then fragment.Resolve of the point's DRAM
// budget and the cluster's fabric, then (Stage) fragment.Stage.
func bindPoint(path string, doc *yaml.Node, f *Fragment) (*yaml.Node, error) {
	if !f.binds() {
		return doc, nil
	}
	bound, err := fragment.Bind(path, doc, f.Input)
	if err != nil {
		return nil, fragmentError(err)
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
		return nil, fragmentError(err)
	}
	if f.Stage {
		fragment.Stage(bound, f.Input.Cluster)
	}
	return bound, nil
}

// selectForPoint is the single-node launcher's choice: of the configs the
// selector names, the one the point binds to (a variant that names its
// CONC or KV_OFFLOADING serves only that point). None or several is
// refused, naming them.
func selectForPoint(path string, doc *yaml.Node, selector string, f *Fragment) (*variants.Variant, error) {
	all, err := variants.ExpandAll(path, doc, selector)
	if err != nil {
		return nil, variantErr(err)
	}
	var match []*variants.Variant
	var why []string
	for _, v := range all {
		if _, err := fragment.Bind(path, v.Doc, f.Input); err != nil {
			why = append(why, v.Selector+": "+err.Error())
			continue
		}
		match = append(match, v)
	}
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0:
		return nil, &VariantError{Err: Error{File: path, Line: doc.Line, Field: "base",
			Msg: fmt.Sprintf("no variant %q selects serves the point (%s)", selector, strings.Join(why, "; "))}}
	}
	names := make([]string, len(match))
	for i, v := range match {
		names[i] = v.Selector
	}
	return nil, &VariantError{Err: Error{File: path, Line: doc.Line, Field: "base",
		Msg: fmt.Sprintf("%d variants serve the point, not one: %s", len(match), strings.Join(names, ", "))}, Variants: names}
}

// variantErr is a variants error as this package's.
func variantErr(err error) error {
	var se *variants.SelectError
	if errors.As(err, &se) {
		return &VariantError{Err: Error{File: se.File, Line: se.Line, Msg: se.Msg}, Variants: se.Variants}
	}
	return err
}

// fragmentError keeps a fragment error's own type where callers test for
// it (BoundKeyError) and makes the rest this package's.
func fragmentError(err error) error {
	var ie *fragment.InputError
	if errors.As(err, &ie) {
		return &Error{Msg: ie.Msg}
	}
	return err
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

// LoadBlock reads a shared block (configs/srt-recipes/*.yaml).
func LoadBlock(ctx context.Context, path string) (*yaml.Node, error) {
	data, err := readlimit.ReadFileContext(ctx, path, MaxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("reading shared block: %w", err)
	}
	doc, err := parseDocument(path, data)
	if err != nil {
		return nil, err
	}
	if err := resolveDuplicateKeys(path, doc, false, new([]string)); err != nil {
		return nil, err
	}
	return doc, nil
}

// LoadBlocks reads the lane's shared block under root, InferenceX's tree
// (inferencex-e2e/), and for a power row the telemetry block, its exporter
// on port.
func LoadBlocks(ctx context.Context, root string, lane fragment.Lane, power bool, port int) (fragment.Blocks, error) {
	b := fragment.Blocks{SharedFile: filepath.Join(root, lane.SharedBlock())}
	var err error
	if b.Shared, err = LoadBlock(ctx, b.SharedFile); err != nil {
		return b, fmt.Errorf("the %s lane's shared block: %w", lane, err)
	}
	if !power {
		return b, nil
	}
	if port <= 0 {
		return b, &Error{File: b.SharedFile, Msg: "a power row needs the cluster's srt-slurm.power-exporter-port"}
	}
	b.TelemetryFile, b.PowerPort = filepath.Join(root, fragment.TelemetryBlock), port
	if b.Telemetry, err = LoadBlock(ctx, b.TelemetryFile); err != nil {
		return b, fmt.Errorf("the telemetry block: %w", err)
	}
	return b, nil
}

// LaneOf is the lane a recipe's place in InferenceX's tree says
// (RECIPES.md § Directory and filename convention):
// benchmarks/{single_node,multi_node}/srt-slurm-recipes/<model-prefix>/<engine>/<gpu>-<precision>/<workload>/…,
// the workload agentx for AgentX. ok is false outside that layout.
func LaneOf(path string) (lane fragment.Lane, ok bool) {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i+1] != "srt-slurm-recipes" || (parts[i] != "single_node" && parts[i] != "multi_node") {
			continue
		}
		lane.MultiNode = parts[i] == "multi_node"
		rest := parts[i+2:]
		lane.Agentic = len(rest) > 4 && rest[3] == "agentx" || len(rest) == 4 && strings.HasPrefix(rest[3], "agentic")
		return lane, true
	}
	return lane, false
}

// RootOf is InferenceX's tree (the directory holding
// configs/srt-recipes/) a recipe file is under, or "".
func RootOf(path string) string {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		if st, err := os.Stat(filepath.Join(dir, "configs", "srt-recipes")); err == nil && st.IsDir() {
			return dir
		}
		if parent := filepath.Dir(dir); parent == dir {
			return ""
		}
	}
}
