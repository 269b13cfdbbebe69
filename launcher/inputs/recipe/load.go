package recipe

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamldoc"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// MaxInputBytes bounds a recipe read (profile.MaxInputBytes).
const MaxInputBytes = profile.MaxInputBytes

// Options change how a recipe file is read.
type Options struct {
	// AllowDuplicateKeys reproduces srtctl (PyYAML): a key set twice with
	// different values keeps the last one, with a warning, instead of
	// refusing the recipe.
	AllowDuplicateKeys bool
	// Variant selects one config of an override file (base: +
	// override_*/zip_override_*), in srtctl's selector syntax: "base",
	// "override_NAME", "zip_override_NAME[I]", or a glob or group name that
	// matches exactly one config.
	Variant string
	// Overrides are --set/--unset edits, applied in order to the document
	// before override-file expansion and decoding (ApplyOverrides).
	Overrides []Override
	// Fragment reads the file as an InferenceX recipe fragment: composed
	// with its shared blocks, and bound to a matrix point.
	Fragment *Fragment
}

// Load reads and strictly decodes the recipe at path (already absolute).
func Load(path string) (*Recipe, error) {
	return LoadContext(context.Background(), path, Options{})
}

// LoadContext is Load with options; ctx interrupts a read that blocks (a
// FIFO nobody writes to).
func LoadContext(ctx context.Context, path string, opt Options) (*Recipe, error) {
	data, err := readlimit.ReadFileContext(ctx, path, MaxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("reading recipe: %w", err)
	}
	return ParseWith(path, data, opt)
}

// Parse decodes recipe bytes; path is used in errors.
func Parse(path string, data []byte) (*Recipe, error) { return ParseWith(path, data, Options{}) }

// ParseWith decodes recipe bytes with options. The stages run in this
// order, each one function, so a value can be followed down them:
//
//	parseDocument          one YAML mapping, aliases bounded
//	resolveDuplicateKeys   a key set twice: refused, or PyYAML's last one
//	ApplyOverrides         --set / --unset (a fragment's: after bindPoint)
//	composeFragment        an InferenceX fragment over its shared blocks
//	selectVariant          base: + override_* → the one config
//	bindPoint              the matrix point and the cluster's facts, then --set
//	normalizeV2            schema 2 → the v1-shaped document
//	checkKeys, Decode      strict decoding into Recipe
//	validate               the model's rules
func ParseWith(path string, data []byte, opt Options) (*Recipe, error) {
	st, err := prepare(path, data, opt)
	if err != nil {
		return nil, err
	}
	doc, schema, warnings := st.doc, st.schema, st.warnings
	// Schema 2 is normalized into the v1 fields (package schema2); from here
	// on one reader decodes and validates both.
	var spelling schema2.Spelling
	if schema == 2 {
		var w []string
		if doc, spelling, w, err = normalizeV2(path, doc); err != nil {
			return nil, err
		}
		warnings = append(warnings, w...)
	} else {
		yamltree.Delete(doc, "schema")
	}
	if err := refuseSweep(path, doc); err != nil {
		return nil, err
	}
	if err := checkKeys(path, doc, reflect.TypeOf(Recipe{}), "", schema); err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Field = spelling.Of(e.Field)
		}
		return nil, err
	}
	var r Recipe
	if err := doc.Decode(&r); err != nil {
		line := yamldoc.Line(err)
		return nil, &Error{File: path, Line: line, Field: spelling.Of(yamltree.FieldAtLine(doc, line)), Msg: cleanYAMLErr(err)}
	}
	r.SchemaVersion, r.spelling = schema, spelling
	r.fillServiceLines(doc)
	r.Path = path
	r.SHA256 = sha256Hex(data)
	r.Warnings = warnings
	r.Overrides = st.applied
	if st.variant != nil {
		r.Variant, r.Origins = st.variant.Selector, st.variant.Origins
	}
	r.lines = map[string]int{}
	yamltree.IndexLines(doc, "", r.lines)
	if err := r.validate(); err != nil {
		return nil, err
	}
	return &r, nil
}

// prepared is a recipe document through the stages before normalizing:
// parsed, its duplicates resolved, overridden, composed, its variant
// selected and its point bound.
type prepared struct {
	doc      *yaml.Node
	schema   int
	variant  *variants.Variant
	warnings []string
	applied  []string
}

// prepare runs the stages up to binding (ParseWith's list).
func prepare(path string, data []byte, opt Options) (*prepared, error) {
	if len(data) > MaxInputBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("%d bytes is more than the %d MiB a recipe may have", len(data), MaxInputBytes>>20)}
	}
	doc, err := parseDocument(path, data)
	if err != nil {
		return nil, err
	}
	st := &prepared{}
	if err := resolveDuplicateKeys(path, doc, opt.AllowDuplicateKeys, &st.warnings); err != nil {
		return nil, err
	}
	// --set edits the file as read; a fragment's, the bound recipe, as
	// srtctl apply --set edits what the launcher hands it (bindPoint).
	if opt.Fragment == nil {
		if st.applied, err = ApplyOverrides(doc, opt.Overrides); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	if doc, err = composeFragment(path, doc, opt.Fragment); err != nil {
		return nil, err
	}
	if err := selectVariant(path, doc, opt, st); err != nil {
		return nil, err
	}
	if st.doc, err = bindPoint(path, st.doc, opt, st); err != nil {
		return nil, err
	}
	if st.schema == 0 {
		if st.schema, err = schemaVersion(path, st.doc); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// selectVariant expands an override file into the config opt.Variant
// names (st.doc, st.variant, st.schema); a plain recipe passes through.
// A single-node fragment's point picks among the configs its selector
// names (selectForPoint).
func selectVariant(path string, doc *yaml.Node, opt Options, st *prepared) error {
	if !variants.IsOverrideFile(doc) {
		if opt.Variant != "" {
			// srtctl only warns and plans the file; a selector that selects
			// nothing is more likely a wrong file, so it is refused.
			return &VariantError{Err: Error{File: path, Line: doc.Line, Field: "base",
				Msg: fmt.Sprintf("variant %q given, but this is a plain recipe, not an override file (no base:)", opt.Variant)}}
		}
		st.doc = doc
		return nil
	}
	if f := opt.Fragment; f != nil && f.ComposeOnly && opt.Variant == "" {
		st.doc = doc // the composed bundle, every config in it
		return nil
	}
	var err error
	if st.schema, err = schemaOfOverrideFile(path, doc); err != nil {
		return err
	}
	var v *variants.Variant
	if f := opt.Fragment; f != nil && f.binds() && !f.Input.Lane.MultiNode {
		v, err = selectForPoint(path, doc, opt.Variant, f)
	} else {
		v, err = expandOverrideFile(path, doc, opt.Variant)
	}
	if err != nil {
		return err
	}
	st.doc, st.variant = v.Doc, v
	st.warnings = append(st.warnings, v.Warnings...)
	if opt.Fragment != nil && yamltree.Get(st.doc, "schema") == nil {
		// Variants carry the bundle's schema (infx/srt_slurm/variants.py
		// expand_variants), so the bound recipe written out has it.
		st.doc = withSchema(st.doc, st.schema)
	}
	return nil
}

// DuplicateKeyError is a key set twice in one mapping with different
// values. PyYAML (srtctl) keeps the last silently; slurmbench refuses unless
// Options.AllowDuplicateKeys.
type DuplicateKeyError struct {
	Err                     Error
	FirstLine               int
	FirstValue, SecondValue string
}

func (e *DuplicateKeyError) Error() string { return e.Err.Error() }

// parseDocument is yamldoc.Parse with its errors as this package's.
func parseDocument(path string, data []byte) (*yaml.Node, error) {
	doc, err := yamldoc.Parse(path, data)
	return doc, fromYAMLDoc(err)
}

// resolveDuplicateKeys is yamldoc.ResolveDuplicates, its warnings added to
// warnings and its errors as this package's.
func resolveDuplicateKeys(path string, n *yaml.Node, allow bool, warnings *[]string) error {
	w, err := yamldoc.ResolveDuplicates(path, n, allow)
	*warnings = append(*warnings, w...)
	return fromYAMLDoc(err)
}

// fromYAMLDoc turns package yamldoc's duplicate-key error into this
// package's; its located errors are this package's Error already.
func fromYAMLDoc(err error) error {
	var de *yamldoc.DuplicateError
	if errors.As(err, &de) {
		return &DuplicateKeyError{Err: de.Err, FirstLine: de.FirstLine, FirstValue: de.FirstValue, SecondValue: de.SecondValue}
	}
	return err
}

// refuseSweep rejects srtctl's job-level sweeps by name, before strict
// decoding would call the key unknown.
func refuseSweep(path string, doc *yaml.Node) error {
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if k := doc.Content[i]; k.Value == "sweep" {
			return &UnsupportedError{Error{File: path, Line: k.Line, Field: "sweep",
				Msg: "job-level sweeps are " + ErrUnsupported.Error() + "; render one point per recipe"}}
		}
	}
	return nil
}

// checkKeys is yamldoc.CheckKeys for a schema version, an unknown key
// named by its block and, under schema 1, told when it is srt-slurm 2.x's.
func checkKeys(path string, n *yaml.Node, t reflect.Type, field string, schema int) error {
	return fromYAMLDoc(yamldoc.CheckKeys(path, n, t, field, schema, func(t reflect.Type, field, key string) string {
		msg := fmt.Sprintf("unknown key %q (in %s)", key, blockName(t.String()))
		if v2, _ := yamldoc.Fields(t, 2); schema < 2 && v2[key] != nil || schema < 2 && field == "" && (key == "engine" || key == "roles") {
			msg += "; it is srt-slurm 2.x's layout: this recipe has no `schema: 2`"
		}
		return msg
	}))
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
