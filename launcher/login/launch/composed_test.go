package launch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

func TestRenderComposed(t *testing.T) {
	root := filepath.Join(t.TempDir(), "inferencex-e2e")
	files := map[string]string{
		"configs/srt-recipes/fixed-sequence-multi.yaml":                                       "benchmark:\n  type: custom\n  command: bash fixed.sh\n",
		"configs/srt-recipes/telemetry-dcgm.yaml":                                             "telemetry:\n  enabled: true\n",
		"benchmarks/multi_node/srt-slurm-recipes/m/sglang/h100-fp8/8k1k/disagg-variants.yaml": "schema: 2\nbase:\n  name: b\n  roles: {prefill: {workers: 1}}\noverride_two:\n  roles: {prefill: {workers: 2}}\n",
		"benchmarks/multi_node/srt-slurm-recipes/m/sglang/h100-fp8/8k1k/bound.yaml":           "schema: 2\nname: b\nmodel:\n  path: hf:x/y\n",
	}
	for rel, text := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	frag := filepath.Join(root, "benchmarks/multi_node/srt-slurm-recipes/m/sglang/h100-fp8/8k1k/disagg-variants.yaml")
	for _, tc := range []struct {
		name     string
		o        ComposedOptions
		want     []string // substrings of stdout
		wantCode exitcode.Code
	}{
		{"the bundle, the shared block under base", ComposedOptions{Recipe: frag},
			[]string{"fixed-sequence multi-node", "base:\n  name: b\n", "  benchmark:\n    type: custom\n", "override_two:"}, 0},
		{"a selected variant with the telemetry block", ComposedOptions{Recipe: frag + ":override_two", PowerPort: 9401},
			[]string{"# variant override_two", "workers: 2", "port: 9401", "name: b_two"}, 0},
		{"a fragment that sets a bound key", ComposedOptions{Recipe: filepath.Join(filepath.Dir(frag), "bound.yaml")}, nil, exitcode.Config},
		{"an unknown lane", ComposedOptions{Recipe: frag, Lane: "sideways"}, nil, exitcode.Config},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			tc.o.IO = IO{Stdout: &out, Stderr: io.Discard}
			err := RenderComposed(context.Background(), tc.o)
			if tc.wantCode != 0 {
				var ce *exitcode.Error
				if !errors.As(err, &ce) || ce.Code != tc.wantCode {
					t.Fatalf("want exit %d, got %v", tc.wantCode, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}
