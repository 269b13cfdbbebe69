package planner

import (
	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// recipeSource records where the plan's recipe came from: the file, the
// override-file config and which section set what, what loading warned, and
// the telemetry the recipe asks for.
func recipeSource(r *recipe.Recipe) plan.Source {
	s := plan.Source{Path: r.Path, SHA256: r.SHA256, Variant: r.Variant, Origins: r.Origins, Schema: r.SchemaVersion, Warnings: r.Warnings, Overrides: r.Overrides}
	if t, ok := r.Telemetry.Settings(); ok {
		s.Telemetry = &t
	}
	return s
}
