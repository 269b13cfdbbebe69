package planner

import (
	"os"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/migrate"
)

// TestSrtctlParity runs the srtctl parity comparison (testSrtctlParity) on
// the reference recipes as written (schema 1) and migrated to schema 2: a
// migrated recipe has to launch what srtctl launched, process by process.
func TestSrtctlParity(t *testing.T) {
	t.Run("schema1", func(t *testing.T) { testSrtctlParity(t, false) })
	t.Run("schema2", func(t *testing.T) { testSrtctlParity(t, true) })
}

// loadRecipeForm reads the recipe at path as written, or its schema-2
// migration (read as the same path, so plans name the same file).
func loadRecipeForm(t *testing.T, path string, migrated bool) (*recipe.Recipe, error) {
	t.Helper()
	if !migrated {
		return recipe.Load(path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res, err := migrate.Migrate(path, data, migrate.Options{})
	if err != nil {
		t.Fatalf("%s: migrate: %v", path, err)
	}
	r, err := recipe.ParseWith(path, res.Text, recipe.Options{})
	if err == nil && r.SchemaVersion != 2 {
		t.Fatalf("%s: the migration was read as schema %d", path, r.SchemaVersion)
	}
	return r, err
}
