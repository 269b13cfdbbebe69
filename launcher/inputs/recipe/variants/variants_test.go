package variants

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree/yamltreetest"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The expansion on its own; package recipe's override_test.go compares it
// with srtctl's over the corpus and holds it as a recipe read sees it.

const file = `base:
  name: b
  a: {x: 1, y: 2}
  l: [1]
override_o:
  a: {y: null, z: 3}
zip_override_z:
  a: {x: [5, 6], y: null}
  l: [[7], [8]]
extra: 1
`

// TestExpand: each selector's config, the fields each section set, the
// nulls a zip section keeps, and the untouched input.
func TestExpand(t *testing.T) {
	cases := []struct {
		sel     string
		want    string // the config, as Python's str() of its mapping
		origins map[string]string
		kept    []KeptNull
	}{
		{"base", `{"a": {"x": 1, "y": 2}, "l": [1], "name": "b"}`, map[string]string{}, nil},
		{"override_o", `{"a": {"x": 1, "z": 3}, "l": [1], "name": "b_o"}`,
			map[string]string{"a.y": "override_o (deleted)", "a.z": "override_o", "name": "override_o (generated)"}, nil},
		{"zip_override_z[1]", `{"a": {"x": 6, "y": 2}, "l": [8], "name": "b_z_1"}`,
			map[string]string{"a.x": "zip_override_z[1]", "l": "zip_override_z[1]", "name": "zip_override_z[1] (generated)"},
			[]KeptNull{{Line: 8, Field: "a.y", Section: "zip_override_z[1]", Base: "2"}}},
	}
	for _, c := range cases {
		t.Run(c.sel, func(t *testing.T) {
			doc := yamltreetest.Parse(t, file)
			v, err := Expand("f.yaml", doc, c.sel)
			if err != nil {
				t.Fatal(err)
			}
			if got := yamltree.PyStr(v.Doc); got != c.want || v.Selector != c.sel {
				t.Errorf("%s: %s, want %s", v.Selector, got, c.want)
			}
			if !reflect.DeepEqual(v.Origins, c.origins) || !reflect.DeepEqual(v.KeptNulls, c.kept) {
				t.Errorf("origins %v kept %v, want %v %v", v.Origins, v.KeptNulls, c.origins, c.kept)
			}
			if len(v.Warnings) != 1 || !strings.HasPrefix(v.Warnings[0], `f.yaml:10: top-level key "extra" beside base: is ignored`) {
				t.Errorf("warnings %q", v.Warnings)
			}
			if yamltree.PyStr(doc) != yamltree.PyStr(yamltreetest.Parse(t, file)) {
				t.Error("the input tree was edited")
			}
		})
	}
}

// TestExpandErrors: a selector naming no single config is a *SelectError
// listing the ones it could name; a malformed section an *yamltree.Error on its line.
func TestExpandErrors(t *testing.T) {
	for _, c := range []struct {
		text, sel, msg string
		variants       []string
	}{
		{file, "", "expands to 3 configs", []string{"override_o", "zip_override_z[0]", "zip_override_z[1]"}},
		{file, "zip_override_z", "matches 2 configs", []string{"zip_override_z[0]", "zip_override_z[1]"}},
		{file, "override_p", "no such section", []string{"override_o", "zip_override_z[0]", "zip_override_z[1]"}},
	} {
		_, err := Expand("f.yaml", yamltreetest.Parse(t, c.text), c.sel)
		var se *SelectError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.msg) || !reflect.DeepEqual(se.Variants, c.variants) || se.Line != 1 {
			t.Errorf("%q: %v (variants %v), want %q naming %v", c.sel, err, se, c.msg, c.variants)
		}
	}
	for _, c := range []struct{ text, field, msg string }{
		{"base: [1]\n", "base", "must be a mapping"},
		{"base: {}\nzip_override_z: {a: [1, 2], b: [1, 2, 3]}\n", "zip_override_z", "lists of lengths [2 3]"},
		{"base: {}\nzip_override_z: {a: 1}\n", "zip_override_z", "nothing to zip"},
	} {
		_, err := Expand("f.yaml", yamltreetest.Parse(t, c.text), "base")
		var e *yamltree.Error
		if !errors.As(err, &e) || e.Field != c.field || !strings.Contains(e.Msg, c.msg) {
			t.Errorf("%q: %v, want %s: %q", c.text, err, c.field, c.msg)
		}
	}
}
