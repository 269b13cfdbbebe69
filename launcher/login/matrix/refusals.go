package matrix

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// refusal is one unplanned point of today's layout as --plan lists it:
// the reason class, what it says without saying where (points refused by
// one rule share it), the whole message with the tree's paths relative,
// and the recipe file the point names.
type refusal struct {
	p                   *Point
	reason, cause, text string
	recipe              string
}

// refusalOf is p's refusal (ok false when p is planned).
func refusalOf(p *Point, root string) (refusal, bool) {
	if p.Plan != nil {
		return refusal{}, false
	}
	r := refusal{p: p, reason: ReasonOf(p.Err), recipe: p.RecipeFile()}
	if p.EvalOnly && p.EvalSrtRecipe != "" {
		r.recipe, _, _ = strings.Cut(p.EvalSrtRecipe, ":")
	}
	err := p.Err
	if err == nil {
		r.reason, err = noPlanReason(p), p.NoPlan
	}
	if err == nil {
		err = errors.New("not planned")
	}
	r.text = relative(strings.TrimPrefix(err.Error(), fmt.Sprintf("%s (line %d): ", p.Name(), p.Line)), root)
	var pe *PlanError
	var mb *fragment.MissingBlockError
	var bk *fragment.BoundKeyError
	var dl *fragment.DRAMLiteralError
	ye, isLocated := located(err)
	switch {
	case errors.As(err, &bk) && len(bk.Keys) > 0:
		r.cause = "the fragment sets keys the launcher binds from the matrix point: " + keyList(bk.Keys)
		// The first key on the point's line; all of them in the summary.
		k := bk.Keys[0]
		r.text = relative(fmt.Sprintf("%s:%d: %s: the launcher binds this key from the matrix point (= %s here); remove it from the fragment",
			bk.File, k.Line, k.Field, yamltree.Clip(k.Value)), root)
		if n := len(bk.Keys) - 1; n > 0 {
			r.text += fmt.Sprintf(" (and %d more such keys)", n)
		}
	case errors.As(err, &dl) && len(dl.Keys) > 0:
		r.cause = "host DRAM sizes written out where the launcher takes '@dram.<name>' values: " + keyList(dl.Keys)
	case r.reason == ReasonNoRecipe || r.reason == ReasonNotComposed:
		// The recipe file says it all.
	case errors.As(err, &pe):
		r.cause = relative(pe.Cause(), root)
		r.text = pe.listing(root)
	case errors.As(err, &mb):
		r.cause = mb.What + ": " + mb.Block + " is not in this tree"
	case isLocated:
		r.cause = variantField(ye.Field) + ": " + relative(ye.Msg, root)
	default:
		r.cause = r.text
	}
	return r, true
}

// keyList names located keys once each, without their bundle section.
func keyList(keys []fragment.Located) string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		if f := variantField(k.Field); !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return strings.Join(out, ", ")
}

// variantField is a fragment field without its bundle section (base,
// override_*, zip_override_*): the same rule broken in two variants is
// one cause.
func variantField(field string) string {
	first, rest, ok := strings.Cut(field, ".")
	if ok && (first == "base" || strings.HasPrefix(first, "override_") || strings.HasPrefix(first, "zip_override_")) {
		return rest
	}
	return field
}

// relative writes the tree's paths in s relative to it and drops the
// "(<tree>)" a message appends.
func relative(s, root string) string {
	if root == "" {
		return s
	}
	root = filepath.Clean(root)
	s = strings.ReplaceAll(s, " ("+root+")", "")
	return strings.ReplaceAll(s, root+string(filepath.Separator), "")
}

// listing is the error on one --plan line: the place written, relative to
// the tree, and the bound recipe by its file name only.
func (e *PlanError) listing(root string) string {
	short := *e
	short.Bound = filepath.Base(e.Bound)
	return relative(short.Error(), root)
}

// printRefusals lists every unplanned point, one line each, then counts
// them by reason and cause with the recipe files they name.
func printRefusals(w io.Writer, m *Matrix) {
	var rs []refusal
	for _, p := range m.Points {
		if r, ok := refusalOf(p, m.Root); ok {
			rs = append(rs, r)
			fmt.Fprintf(w, "not planned [%s]: %s (line %d): %s\n", r.reason, p.Name(), p.Line, r.text)
		}
	}
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nnot planned by reason: %d of %d points (points, then each cause and the recipe files it names)\n", len(rs), len(m.Points))
	for _, byReason := range groupBy(rs, func(r refusal) string { return r.reason }) {
		fmt.Fprintf(w, "  %5d  %s\n", len(byReason), byReason[0].reason)
		for _, byCause := range groupBy(byReason, func(r refusal) string { return r.cause }) {
			indent := "         "
			if c := byCause[0].cause; c != "" {
				fmt.Fprintf(w, "         %5d  %s\n", len(byCause), c)
				indent += "       "
			}
			for _, byFile := range groupBy(byCause, func(r refusal) string { return r.recipe }) {
				fmt.Fprintf(w, "%s%5d  %s\n", indent, len(byFile), byFile[0].recipe)
			}
		}
	}
}

// groupBy splits rs by key, largest group first, then by key.
func groupBy(rs []refusal, key func(refusal) string) [][]refusal {
	idx := map[string]int{}
	var out [][]refusal
	for _, r := range rs {
		k := key(r)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r)
	}
	sort.SliceStable(out, func(a, b int) bool {
		if len(out[a]) != len(out[b]) {
			return len(out[a]) > len(out[b])
		}
		return key(out[a][0]) < key(out[b][0])
	})
	return out
}

// launchRefused are the points --plan planned that InferenceX's launch
// would refuse on their cluster's lane.
func launchRefused(m *Matrix) []*Point {
	var out []*Point
	for _, p := range m.Points {
		if p.LaunchRefusal != nil {
			out = append(out, p)
		}
	}
	return out
}

// printLaunchRefusals lists, one line each, the points --plan planned as
// InferenceX's generator lists them but its launch would refuse (lane.go),
// which a run lists not planned.
func printLaunchRefusals(w io.Writer, m *Matrix) {
	for _, p := range launchRefused(m) {
		fmt.Fprintf(w, "a launch refuses [%s]: %s (line %d): %v\n", ReasonLane, p.Name(), p.Line, p.LaunchRefusal)
	}
}
