package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/recipetest"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
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
const (
	base         = recipetest.Base
	overrideFile = recipetest.OverrideFile
)
