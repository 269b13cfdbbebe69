package recipe

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any bytes either plan-check into a recipe or give a typed
// error naming the file — never a panic, a hang or an untyped error.
// Seeded from the repository's recipes; `make test` runs it for a bounded
// time.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../../planner/testdata/recipes/*.yaml", "../../../examples/*.yaml", "../../../cmd/slurmbench/testdata/render/recipes/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data, "")
		}
	}
	f.Add([]byte(base), "")
	f.Add([]byte(overrideFile), "zip_override_sweep[1]")
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n"), "")
	f.Add([]byte(base+"---\nname: x\n"), "")
	f.Add([]byte(v2Base+v2RolesText+"services:\n  - {name: etcd, type: etcd, placement: {node: dedicated}}\n"), "")
	f.Add([]byte(v2Base+"engine: {type: vllm}\nroles:\n  prefill: {nodes: 1, workers: 1, env: &e {A: b}}\n  decode: {nodes: colocate, workers: 1, env: {<<: *e}}\n"), "")
	f.Add([]byte("schema: 2\nbase:\n  name: x\nzip_override_a:\n  roles: {agg: {workers: [1, 2]}}\n"), "zip_override_a[1]")
	f.Fuzz(func(t *testing.T, data []byte, variant string) {
		for _, opt := range []Options{{Variant: variant}, {Variant: variant, AllowDuplicateKeys: true}} {
			r, err := ParseWith("/fuzz/r.yaml", data, opt)
			if err == nil {
				if r.Name == "" || r.Path != "/fuzz/r.yaml" {
					t.Fatalf("accepted without a name or path: %+v", r)
				}
				continue
			}
			var e *Error
			var ue *UnsupportedError
			var se *SrtctlRefusalError
			var de *DuplicateKeyError
			var ve *VariantError
			var sce *SchemaError
			if !errors.As(err, &e) && !errors.As(err, &ue) && !errors.As(err, &se) && !errors.As(err, &de) && !errors.As(err, &ve) && !errors.As(err, &sce) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
		}
	})
}
