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
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// TestFragmentSelectsForThePoint: a single-node point picks, among the
// configs its selector names, the one that serves it; none or a multi-node
// selector naming several is refused, naming the file.
func TestFragmentSelectsForThePoint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agentic.yaml")
	src := "schema: 2\nbase:\n  name: b\n  engine: sglang\n  roles: {agg: {gpus: 8, args: {tensor-parallel-size: 8}}}\n" +
		"override_c4:\n  benchmark: {env: {CONC: '4'}}\noverride_c8:\n  benchmark: {env: {CONC: '8'}}\n" +
		"override_dep8_c8:\n  roles: {agg: {args: {enable-dp-attention: true, data-parallel-size: 8, ep-size: 8}}}\n  benchmark: {env: {CONC: '8'}}\n"
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
		dep      bool   // the point is DP attention with EP 8
		want     string // selector chosen, or "" for a refusal
		errText  string
	}{
		{"the point's CONC and parallelism pick its variant", fragment.Lane{}, "", []int{8}, false, "override_c8", ""},
		{"the point's DP attention picks among same-CONC variants", fragment.Lane{}, "", []int{8}, true, "override_dep8_c8", ""},
		{"a glob narrows, the point picks", fragment.Lane{}, "override_c*", []int{4}, false, "override_c4", ""},
		{"a selector no variant serves", fragment.Lane{}, "", []int{16}, false, "", "no variant"},
		{"parallelism no variant has", fragment.Lane{}, "override_c4", []int{4}, true, "", "data-parallel-size: recipe 1, point 8"},
		{"a selector that names nothing", fragment.Lane{}, "override_x", []int{4}, false, "", "no such section"},
		{"multi-node: a selector naming several", fragment.Lane{MultiNode: true}, "override_c*", []int{4, 8}, false, "", "matches 2 configs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := fragment.Input{Lane: tc.lane, Point: fragment.Point{Model: "o/m", Image: "img", Precision: "fp8",
				ISL: 1, OSL: 1, Conc: tc.conc, RandomRangeRatio: "0.8", GPUCount: 8, TP: 8, EP: 1}}
			if tc.dep {
				in.Point.EP, in.Point.DPAttention = 8, true
			}
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

// TestFragmentSetAfterBinding: --set edits a fragment's bound recipe, as
// srtctl apply --set edits what InferenceX's launcher hands it: a bound
// key set this way is the launcher's own edit (eval-only runs turn
// telemetry off), not the fragment's, and it wins over the binder.
func TestFragmentSetAfterBinding(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "disagg.yaml")
	if err := os.WriteFile(file, []byte("schema: 2\nname: b\nroles: {decode: {workers: 1}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var shared, tel yaml.Node
	_ = yaml.Unmarshal([]byte("benchmark: {type: custom, command: bash run.sh}\n"), &shared)
	_ = yaml.Unmarshal([]byte("telemetry: {enabled: true, dcgm_exporter: {container_image: x}}\n"), &tel)
	var sets []Override
	for _, kv := range []string{"telemetry.enabled=false", "health_check.max_attempts=720"} {
		o, err := ParseSet(kv)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, o)
	}
	in := fragment.Input{Lane: fragment.Lane{MultiNode: true}, Point: fragment.Point{Model: "o/m", Image: "img", Precision: "fp8", ISL: 1, OSL: 1, Conc: []int{4}}}
	b, err := LoadBound(context.Background(), file, Options{Overrides: sets,
		Fragment: &Fragment{Blocks: fragment.Blocks{Shared: &shared, Telemetry: &tel, PowerPort: 9401}, Input: in}})
	if err != nil {
		t.Fatal(err)
	}
	tm := yamltree.Get(b.Doc, "telemetry")
	if v := yamltree.Get(tm, "enabled"); v == nil || v.Value != "false" {
		t.Errorf("telemetry.enabled = %v, want the --set false", v)
	}
	if yamltree.Get(yamltree.Get(b.Doc, "benchmark"), "concurrencies") == nil {
		t.Error("the binder ran before --set: benchmark.concurrencies should be bound while telemetry was on")
	}
	if v := yamltree.Get(yamltree.Get(b.Doc, "health_check"), "max_attempts"); v == nil || v.Value != "720" {
		t.Errorf("health_check.max_attempts = %v, want 720", v)
	}
}
