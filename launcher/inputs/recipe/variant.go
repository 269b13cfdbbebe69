package recipe

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
)

// VariantError is an override file without a selector that names exactly
// one of its configs; Variants lists the selectors a user can give.
type VariantError struct {
	Err      Error
	Variants []string
}

func (e *VariantError) Error() string { return e.Err.Error() }

// expandOverrideFile is variants.Expand with its errors as this package's
// and the nulls it kept worded as warnings.
func expandOverrideFile(path string, doc *yaml.Node, selector string) (*variants.Variant, error) {
	v, err := variants.Expand(path, doc, selector)
	var se *variants.SelectError
	switch {
	case errors.As(err, &se):
		return nil, &VariantError{Err: Error{File: se.File, Line: se.Line, Msg: se.Msg}, Variants: se.Variants}
	case err != nil: // a *yamltree.Error: this package's Error
		return nil, err
	}
	for _, k := range v.KeptNulls {
		v.Warnings = append(v.Warnings, fmt.Sprintf("%s:%d: %s: null in %s does not delete the base value %s: srtctl %s keeps it for zip_override configs, and so does slurmbench", path, k.Line, k.Field, k.Section, clip(k.Base), SrtctlRevision))
	}
	return v, nil
}
