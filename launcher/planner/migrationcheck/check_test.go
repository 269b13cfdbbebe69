package migrationcheck

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner"
)

// TestVerifyMigrationGolden: each golden migration of recipe/migrate/testdata/migrate
// (one input per migration rule) plans as its original does, and a
// migration changed in one value is caught, naming the plan field.
func TestVerifyMigrationGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("..", "..", "inputs", "recipe", "migrate", "testdata", "migrate", "*.v1.yaml"))
	if err != nil || len(inputs) < 5 {
		t.Fatalf("inputs %v: %v", inputs, err)
	}
	dir := t.TempDir()
	in := planner.Inputs{Binary: testBinary, ResolveImage: testResolveImage, Workspace: dir}
	profileFor := SyntheticProfiles(dir)
	for _, f := range inputs {
		t.Run(filepath.Base(f), func(t *testing.T) {
			v1, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v2, err := os.ReadFile(strings.TrimSuffix(f, ".v1.yaml") + ".v2.yaml")
			if err != nil {
				t.Fatal(err)
			}
			c, err := Verify(f, v1, v2, recipe.Options{}, in, profileFor)
			if notRun := strings.Contains(f, "not-run"); notRun {
				// Fields slurmbench does not run: refused, nothing compared.
				if err != nil || c.Configs != 0 || c.Refused != 1 {
					t.Errorf("%+v: %v; want the one config refused", c, err)
				}
				return
			}
			want := 1
			if strings.Contains(f, "bundle") {
				want = 4 // override_noinfra, override_wide, zip_override_sweep[0] and [1]
			}
			if err != nil || c.Configs != want || c.Refused != 0 {
				t.Fatalf("%+v: %v; want %d configs compared", c, err, want)
			}
			// The original passed off as its own migration: not schema 2.
			if _, err := Verify(f, v1, v1, recipe.Options{}, in, profileFor); err == nil || !strings.Contains(err.Error(), "read as schema 1") {
				t.Errorf("a schema-1 'migration': %v", err)
			}
			// One value changed in the migration: a different plan.
			bad := strings.Replace(string(v2), "workers: 1", "workers: 2", 1)
			if bad == string(v2) {
				t.Fatal("test bug: nothing to change")
			}
			_, err = Verify(f, v1, []byte(bad), recipe.Options{}, in, profileFor)
			var mm *MismatchError
			if !errors.As(err, &mm) || len(mm.Diffs) == 0 || !strings.Contains(err.Error(), f) {
				t.Errorf("a changed migration: %v, want a MismatchError naming the file", err)
			}
		})
	}
}

// testBinary is the fixed slurmbench path the plans name.
const testBinary = "/opt/slurmbench/bin/slurmbench"

// testResolveImage maps an image reference to a fixed squash path, so the
// plans depend only on the recipe.
func testResolveImage(ref, squashDir string) (plan.Image, error) {
	name := strings.NewReplacer("/", "+", ":", "+", "@", "+").Replace(ref)
	return plan.Image{Ref: ref, EnrootURI: "docker://" + ref, Squash: filepath.Join(squashDir, name+".sqsh")}, nil
}
