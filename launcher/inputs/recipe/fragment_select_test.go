package recipe

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
)

// TestFragmentSelectsForThePoint: a single-node point picks, among the
// configs its selector names, the one that serves it; none or a multi-node
// selector naming several is refused, naming the file.
func TestFragmentSelectsForThePoint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agentic.yaml")
	src := "schema: 2\nbase:\n  name: b\n  engine: sglang\n  roles: {agg: {args: {tp-size: 8}}}\n" +
		"override_c4:\n  benchmark: {env: {CONC: '4'}}\noverride_c8:\n  benchmark: {env: {CONC: '8'}}\n"
	multi := filepath.Join(dir, "disagg-variants.yaml")
	multiSrc := "schema: 2\nbase:\n  name: b\noverride_c4:\n  roles: {decode: {workers: 1}}\noverride_c8:\n  roles: {decode: {workers: 2}}\n"
	for f, s := range map[string]string{file: src, multi: multiSrc} {
		if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var shared yaml.Node
	if err := yaml.Unmarshal([]byte("benchmark: {type: custom, command: bash run.sh}\n"), &shared); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		lane     fragment.Lane
		selector string
		conc     []int
		want     string // selector chosen, or "" for a refusal
		errText  string
	}{
		{"the point's CONC picks its variant", fragment.Lane{}, "", []int{8}, "override_c8", ""},
		{"a glob narrows, the point picks", fragment.Lane{}, "override_c*", []int{4}, "override_c4", ""},
		{"a selector no variant serves", fragment.Lane{}, "", []int{16}, "", "no variant"},
		{"a selector that names nothing", fragment.Lane{}, "override_x", []int{4}, "", "no such section"},
		{"multi-node: a selector naming several", fragment.Lane{MultiNode: true}, "override_c*", []int{4, 8}, "", "matches 2 configs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fragment.Input{Lane: tc.lane, Point: fragment.Point{Model: "o/m", Image: "img", Precision: "fp8",
				ISL: 1, OSL: 1, Conc: tc.conc, RandomRangeRatio: "0.8"}}
			file := file
			if tc.lane.MultiNode {
				file = multi
			}
			b, err := LoadBound(context.Background(), file, Options{Variant: tc.selector,
				Fragment: &Fragment{Blocks: fragment.Blocks{Shared: &shared}, Input: in}})
			if tc.want == "" {
				var ve *VariantError
				if !errors.As(err, &ve) || !strings.Contains(err.Error(), tc.errText) || !strings.HasPrefix(err.Error(), file) {
					t.Fatalf("want a VariantError naming %s (%q), got %v", file, tc.errText, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Selector != tc.want {
				t.Errorf("selected %s, want %s", b.Selector, tc.want)
			}
		})
	}
}
