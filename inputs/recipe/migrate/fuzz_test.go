package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/inputs/recipe"
)

// FuzzMigrate: any bytes, with a --set, either migrate into a document that
// parses, declares schema: 2 first and is refused as already migrated when
// migrated again, or give a typed error — never a panic or an untyped
// error. Seeded from the migration's golden inputs.
func FuzzMigrate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "migrate", "*.v1.yaml"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "health_check.max_attempts=5")
	}
	f.Add([]byte(base), "resources.prefill_nodes=2")
	f.Add([]byte(overrideFile), "benchmark.concurrencies=[1, 2]")
	f.Fuzz(func(t *testing.T, data []byte, set string) {
		opt := Options{AllowDuplicateKeys: true}
		if o, err := recipe.ParseSet(set); err == nil {
			opt.Overrides = []recipe.Override{o}
		}
		res, err := Migrate("/fuzz/r.yaml", data, opt)
		if err != nil {
			var e *recipe.Error
			var oe *recipe.OverrideError
			var de *recipe.DuplicateKeyError
			var ae *AlreadySchema2Error
			var ne *NotRecipeError
			if !errors.As(err, &e) && !errors.As(err, &oe) && !errors.As(err, &de) && !errors.As(err, &ae) && !errors.As(err, &ne) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if _, err := Migrate("/fuzz/r.yaml", res.Text, Options{AllowDuplicateKeys: true}); !errors.Is(err, ErrAlreadySchema2) {
			t.Fatalf("the migration does not read back as schema 2: %v\n%s", err, res.Text)
		}
	})
}

// The seeds recipe's own tests use.
const base = `name: test-1p1d
model:
  path: dsr1
  container: lmsysorg/sglang:v0.5.12
  precision: fp4
resources:
  gpu_type: b200
  gpus_per_node: 8
  prefill_nodes: 1
  prefill_workers: 1
  decode_nodes: 1
  decode_workers: 1
backend:
  type: sglang
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: "16x32"
`

const overrideFile = `base:
  name: ov
  model: {path: dsr1, container: lmsysorg/sglang:v0.5.12}
  resources: {gpus_per_node: 8, prefill_nodes: 1, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
  backend:
    type: sglang
    sglang_config:
      decode: {mem-fraction-static: 0.8, load-balance-method: round_robin}
  benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [4]}
override_big:
  backend:
    sglang_config:
      decode: {mem-fraction-static: 0.9, load-balance-method: null}
zip_override_sweep:
  name: [a, b]
  resources: {decode_nodes: [1, 2], decode_workers: [1]}
  benchmark: {concurrencies: [[8], [16, 32]]}
  backend:
    sglang_config:
      decode: {load-balance-method: null}
`
