package generate

import (
	"fmt"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// LaneOverrides are a launch's lane edits (srtlanes.Launch.Edits, in
// InferenceX's submission order) as the recipe reader's --set/--unset:
// what `slurmbench run` (workflow.LaneChoice.Overrides) and `slurmbench
// matrix` add to a bound recipe's plan alike.
func LaneOverrides(l srtlanes.Launch) ([]recipe.Override, error) {
	var out []recipe.Override
	for _, e := range l.Edits() {
		parse := recipe.ParseSet
		if e.Unset {
			parse = recipe.ParseUnset
		}
		o, err := parse(e.Arg)
		if err != nil {
			return nil, fmt.Errorf("%s lane of %s: %s: %w", l.Path, l.Cluster, e.Flag(), err)
		}
		out = append(out, o)
	}
	return out, nil
}
