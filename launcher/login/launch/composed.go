package launch

import (
	"context"
	"fmt"
	"strings"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
)

// ComposedOptions are `render --composed`'s.
type ComposedOptions struct {
	IO
	Recipe    string // the fragment, FILE or FILE:SELECTOR
	Variant   string // the config to select; "" shows the whole composed bundle
	Overrides []recipe.Override
	// Lane is fixed-sequence-{single,multi} or agentic-{single,multi};
	// "" reads it from the fragment's place in InferenceX's tree.
	Lane string
	// Root is InferenceX's tree (inferencex-e2e/); "" is the directory
	// above the fragment that holds configs/srt-recipes/.
	Root string
	// PowerPort > 0 composes the DCGM telemetry block, its exporter on
	// that port, as for a power: true row.
	PowerPort          int
	AllowDuplicateKeys bool
}

// lanes are --lane's values, named as the shared blocks are.
var lanes = map[string]fragment.Lane{
	"fixed-sequence-single": {},
	"fixed-sequence-multi":  {MultiNode: true},
	"agentic-single":        {Agentic: true},
	"agentic-multi":         {Agentic: true, MultiNode: true},
}

// RenderComposed is `render --composed`: the fragment over its lane's
// shared block (and the telemetry block), the variant selected when one is
// named, as YAML on stdout. Nothing is bound: the matrix point's keys are
// absent, as the fragment has them.
func RenderComposed(ctx context.Context, o ComposedOptions) error {
	path, selector := o.Recipe, o.Variant
	if file, sel, ok := cutSelector(o.Recipe); ok && selector == "" {
		path, selector = file, sel
	}
	path, err := profile.Canonical(path)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "--recipe: %w", err)
	}
	lane, ok := fragment.LaneOf(path)
	if o.Lane != "" {
		if lane, ok = lanes[o.Lane]; !ok {
			return exitcode.Errorf(exitcode.Config, "--lane %q: one of fixed-sequence-single, fixed-sequence-multi, agentic-single, agentic-multi", o.Lane)
		}
	} else if !ok {
		return exitcode.Errorf(exitcode.Config, "%s is not under benchmarks/{single,multi}_node/srt-slurm-recipes/: give --lane", path)
	}
	root := o.Root
	if root == "" {
		if root = fragment.RootOf(path); root == "" {
			return exitcode.Errorf(exitcode.Config, "no configs/srt-recipes/ above %s: give --infx-root (InferenceX's inferencex-e2e/)", path)
		}
	}
	blocks, err := fragment.LoadBlocks(ctx, root, lane, o.PowerPort > 0, o.PowerPort)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	b, err := recipe.LoadBound(ctx, path, recipe.Options{Variant: selector, Overrides: o.Overrides,
		AllowDuplicateKeys: o.AllowDuplicateKeys, Fragment: &recipe.Fragment{Blocks: blocks, Input: fragment.Input{Lane: lane}, ComposeOnly: true}})
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	data, err := fragment.Marshal(b.Doc)
	if err != nil {
		return err
	}
	head := []string{"# " + path + " composed (" + lane.String() + ") over " + blocks.SharedFile}
	if blocks.Telemetry != nil {
		head = append(head, fmt.Sprintf("# and %s, the exporter on port %d", blocks.TelemetryFile, o.PowerPort))
	}
	if b.Selector != "" {
		head = append(head, "# variant "+b.Selector)
	}
	for _, w := range b.Warnings {
		fmt.Fprintln(o.Stderr, "warning:", w)
	}
	_, err = fmt.Fprintf(o.Stdout, "%s\n%s", strings.Join(head, "\n"), data)
	return err
}
