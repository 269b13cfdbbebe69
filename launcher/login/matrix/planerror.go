package matrix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// PlanError is why a composed point was not planned, told where the user
// wrote it: the planner reads the generated bound recipe (a file under a
// temporary or stage directory nobody edits), so its file:line is traced
// back through the composing to the fragment, or the shared or telemetry
// block, and the variant; the bound file stays a secondary detail.
type PlanError struct {
	// Place is where Field was written (File "" when it cannot be
	// traced: a value only the binder writes).
	Place    fragment.Place
	Selector string
	// Field and Msg are the planner's: the field of the bound recipe and
	// the rule it broke.
	Field, Msg string
	// Bound and BoundLine are the generated bound recipe and the line the
	// planner named in it.
	Bound     string
	BoundLine int
	Err       error
}

func (e *PlanError) Error() string {
	bound := e.Bound
	if e.BoundLine > 0 {
		bound = fmt.Sprintf("%s:%d", e.Bound, e.BoundLine)
	}
	if e.Place.File == "" {
		return fmt.Sprintf("%s: %s (bound recipe %s)", e.Field, e.Msg, bound)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d: %s", e.Place.File, e.Place.Line, e.Place.Field)
	switch {
	case e.Place.Block != "":
		fmt.Fprintf(&b, " (%s)", e.Place.Block)
	case e.Selector != "" && !strings.HasPrefix(e.Place.Field, strings.SplitN(e.Selector, "[", 2)[0]+"."):
		fmt.Fprintf(&b, " (variant %s)", e.Selector)
	}
	fmt.Fprintf(&b, ": %s", e.Msg)
	if e.Field != variantField(e.Place.Field) {
		fmt.Fprintf(&b, " [%s of bound recipe %s]", e.Field, bound)
	} else {
		fmt.Fprintf(&b, " [bound recipe %s]", bound)
	}
	return b.String()
}

func (e *PlanError) Unwrap() error { return e.Err }

// Cause is what the error says without saying where: points refused for
// one rule share it (the summary groups by it).
func (e *PlanError) Cause() string { return e.Field + ": " + e.Msg }

// locatePlanError traces the planner's error about the bound recipe file
// back to the fragment the point composed (in.Recipe) and its blocks. An
// error that names no place in the bound file is returned as it is.
func locatePlanError(ctx context.Context, in ComposeInput, blocks fragment.Blocks, bound *recipe.Bound, file string, err error) error {
	ye, ok := located(err)
	if !ok || ye.File != file {
		return err
	}
	pe := &PlanError{Selector: bound.Selector, Field: ye.Field, Msg: ye.Msg, Bound: file, BoundLine: ye.Line, Err: err}
	if pe.Field == "" {
		// The planner named a line only: the field on it, in the file as
		// written (its lines are not the fragment's).
		if doc, rerr := fragment.LoadBlock(ctx, file); rerr == nil {
			pe.Field = yamltree.FieldAtLine(fragment.Plain(doc), ye.Line)
		}
	}
	if pe.Field == "" {
		return err
	}
	frag, ferr := fragment.LoadBlock(ctx, in.Recipe)
	if ferr != nil {
		return pe
	}
	if place, ok := fragment.Locate(in.Recipe, frag, bound.Selector, blocks, pe.Field); ok {
		pe.Place = place
	}
	return pe
}

// located is the place an error of the recipe reader names: a
// *yamltree.Error, or the one an unsupported-feature error of the reader or
// the schema-2 normalizer carries.
func located(err error) (*yamltree.Error, bool) {
	var ye *yamltree.Error
	var ue *recipe.UnsupportedError
	var se *schema2.Error
	switch {
	case errors.As(err, &ue):
		return &ue.Err, true
	case errors.As(err, &se):
		return &se.Err, true
	case errors.As(err, &ye):
		return ye, true
	}
	return nil, false
}
