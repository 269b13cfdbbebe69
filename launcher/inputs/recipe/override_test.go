package recipe

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/recipetest"
)

// TestOverrideVariantsMatchSrtctl expands every override file of the corpus
// into each of its configs and compares them, value for value, with what
// srtctl c88ef731 expands them into (testdata/srtctl-variants.json, made by
// testdata/srtctl-variants.py from srtctl's own code).
func TestOverrideVariantsMatchSrtctl(t *testing.T) {
	root := corpusDir(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "srtctl-variants.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]map[string]any
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for rel, variants := range want {
		path := filepath.Join(root, rel)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for sel, cfg := range variants {
			names = append(names, sel)
			doc, err := parseDocument(path, data)
			if err != nil {
				t.Fatal(err)
			}
			var warnings []string
			if err := resolveDuplicateKeys(path, doc, false, &warnings); err != nil {
				t.Fatal(err)
			}
			v, err := expandOverrideFile(path, doc, sel)
			if err != nil {
				t.Errorf("%s %s: %v", rel, sel, err)
				continue
			}
			var got any
			if err := v.Doc.Decode(&got); err != nil {
				t.Fatal(err)
			}
			if g, w := normalJSON(t, got), normalJSON(t, cfg); !reflect.DeepEqual(g, w) {
				gb, _ := json.MarshalIndent(g, "", " ")
				wb, _ := json.MarshalIndent(w, "", " ")
				t.Errorf("%s %s: expansion differs from srtctl's\n got: %s\nwant: %s", rel, sel, gb, wb)
			}
			compared++
		}
		// Without a selector, a file of several configs is refused, naming them all.
		doc, _ := parseDocument(path, data)
		_, err = expandOverrideFile(path, doc, "")
		var ve *VariantError
		sort.Strings(names)
		switch {
		case len(names) == 1 && err != nil:
			t.Errorf("%s: its one config needs no selector: %v", rel, err)
		case len(names) > 1 && !errors.As(err, &ve):
			t.Errorf("%s: %d configs and no selector: err = %v", rel, len(names), err)
		case ve != nil:
			got := append([]string(nil), ve.Variants...)
			sort.Strings(got)
			if !reflect.DeepEqual(got, names) {
				t.Errorf("%s: variants %v, srtctl has %v", rel, got, names)
			}
		}
	}
	if compared < 31 {
		t.Errorf("compared %d configs; srtctl expands the corpus's override files into 31", compared)
	}
}

func normalJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const overrideFile = recipetest.OverrideFile

func TestOverrideVariants(t *testing.T) {
	cases := []struct {
		sel, name, lbm string
		decodeNodes    int
		concs          []int
		origin         map[string]string
		warn           string
	}{
		{"override_big", "ov_big", "", 1, []int{4}, map[string]string{
			"backend.sglang_config.decode.mem-fraction-static": "override_big",
			"backend.sglang_config.decode.load-balance-method": "override_big (deleted)",
			"name": "override_big (generated)"}, ""},
		{"zip_override_sweep[1]", "b", "round_robin", 2, []int{16, 32}, map[string]string{
			"resources.decode_nodes": "zip_override_sweep[1]", "benchmark.concurrencies": "zip_override_sweep[1]", "name": "zip_override_sweep[1]"},
			"null in zip_override_sweep[1] does not delete"},
		{"base", "ov", "round_robin", 1, []int{4}, map[string]string{}, ""},
		{"*big", "ov_big", "", 1, []int{4}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.sel, func(t *testing.T) {
			r, err := ParseWith("/r/ov.yaml", []byte(overrideFile), Options{Variant: tc.sel})
			if err != nil {
				t.Fatal(err)
			}
			lbm := r.Backend.SGLangConfig.Decode["load-balance-method"]
			if r.Name != tc.name || *r.Resources.DecodeNodes != tc.decodeNodes || !reflect.DeepEqual(r.Benchmark.Concurrencies.Values, tc.concs) ||
				(tc.lbm == "") != (lbm.Node() == nil) || tc.lbm != "" && lbm.String() != tc.lbm {
				t.Errorf("name %q decode_nodes %d concs %v lbm %v", r.Name, *r.Resources.DecodeNodes, r.Benchmark.Concurrencies.Values, lbm)
			}
			for f, o := range tc.origin {
				if r.Origins[f] != o {
					t.Errorf("origin of %s = %q, want %q (all: %v)", f, r.Origins[f], o, r.Origins)
				}
			}
			if tc.origin != nil && len(tc.origin) == 0 && len(r.Origins) != 0 {
				t.Errorf("base has origins %v", r.Origins)
			}
			if got := strings.Join(r.Warnings, "\n"); (tc.warn == "") != (got == "") || !strings.Contains(got, tc.warn) {
				t.Errorf("warnings %q, want %q", got, tc.warn)
			}
			if r.Line("resources.decode_nodes") == 0 {
				t.Error("lines lost in the expansion")
			}
		})
	}
	for _, bad := range []struct{ sel, want string }{
		{"", "expands to 3 configs"},
		{"zip_override_sweep", "matches 2 configs"},
		{"zip_override_sweep[2]", "index out of range"},
		{"override_small", "no such section"},
		{"*nothing*", "matches no section"},
		{"tp64", "is not base"},
	} {
		_, err := ParseWith("/r/ov.yaml", []byte(overrideFile), Options{Variant: bad.sel})
		var ve *VariantError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("variant %q: err = %v, want a VariantError with %q", bad.sel, err, bad.want)
		}
	}
	zipErr := strings.Replace(overrideFile, "decode_workers: [1]", "decode_workers: [1, 2, 3]", 1)
	if _, err := ParseWith("/r/ov.yaml", []byte(zipErr), Options{Variant: "base"}); err == nil || !strings.Contains(err.Error(), "zip_override_sweep: lists of lengths [2 3]") {
		t.Errorf("zip lists of different lengths: %v", err)
	}
}
