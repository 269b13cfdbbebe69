package planner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/migrate"
	"github.com/slurmbench/slurmbench/launcher/planner"
	"github.com/slurmbench/slurmbench/launcher/planner/migrationcheck"
)

// Migration equivalence counts over the corpus (see the constants of
// corpus_render_test.go): every config slurmbench plans from a corpus
// recipe plans identically from its migration — the 461 plain recipes of
// corpusRendered and the 31 configs of its 4 override files — and the 4
// recipes it refuses (fields srtctl refuses too) have nothing to compare.
const (
	migratedConfigs = planner.CorpusRendered - 4 + planner.OverrideConfigs
	migratedRefused = 4
)

// verifyCorpusFile migrates one corpus file (keeping the last of a key set
// twice, as the corpus tests plan it) and verifies the migration.
func verifyCorpusFile(t *testing.T, f string, profileFor func(*recipe.Recipe) (*profile.Profile, error)) (migrationcheck.Check, error) {
	t.Helper()
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	res, err := migrate.Migrate(f, data, migrate.Options{AllowDuplicateKeys: true})
	if err != nil {
		return migrationcheck.Check{}, err
	}
	in := planner.Inputs{Binary: planner.TestBinary, ResolveImage: planner.TestResolveImage}
	return migrationcheck.Verify(f, data, res.Text, recipe.Options{AllowDuplicateKeys: true}, in, profileFor)
}

// TestMigrationEquivalence: for every recipe of InferenceX's schema-1 tree
// (469, each config of an override file), plan(v1) == plan(migrate(v1)):
// the migration is read by the schema-2 reader and planned on the same
// profile with the same inputs, and the plans must be equal but for the
// recipe's spelling (migrationcheck.Verify). The counts are asserted, so a
// recipe that stops planning, or a migration that fails, cannot shrink
// the test.
func TestMigrationEquivalence(t *testing.T) {
	files := planner.CorpusRecipes(t)
	profileFor := planner.CorpusProfileFor(t, files)
	var sum migrationcheck.Check
	for _, f := range files {
		rel, _ := filepath.Rel(planner.CorpusRoot(t), f)
		c, err := verifyCorpusFile(t, f, profileFor)
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		sum.Configs += c.Configs
		sum.Refused += c.Refused
	}
	t.Logf("migration equivalence: %d recipes, %d configs plan alike from schema 1 and its migration, %d refused by the original", len(files), sum.Configs, sum.Refused)
	if len(files) != 469 || sum.Configs != migratedConfigs || sum.Refused != migratedRefused {
		t.Errorf("%d recipes, %d configs alike, %d refused; want 469, %d, %d", len(files), sum.Configs, sum.Refused, migratedConfigs, migratedRefused)
	}
}

// TestMigrationEquivalenceRecordings: the recipe of every srtctl recording
// (46) plans alike as written and migrated.
func TestMigrationEquivalenceRecordings(t *testing.T) {
	refDir := shareddata.Path(t, "data", "srtctl-reference")
	var rels []string
	for _, name := range planner.SrtctlReferenceLists {
		list, err := os.ReadFile(filepath.Join(refDir, name))
		if err != nil {
			t.Fatal(err)
		}
		rels = append(rels, strings.Fields(string(list))...)
	}
	var files []string
	for _, rel := range rels {
		files = append(files, filepath.Join(planner.CorpusRoot(t), rel))
	}
	profileFor := planner.CorpusProfileFor(t, files)
	alike := 0
	for i, f := range files {
		c, err := verifyCorpusFile(t, f, profileFor)
		switch {
		case err != nil:
			t.Errorf("%s: %v", rels[i], err)
		case c.Configs != 1 || c.Refused != 0:
			t.Errorf("%s: %d configs alike, %d refused; want the one config planned", rels[i], c.Configs, c.Refused)
		default:
			alike++
		}
	}
	t.Logf("migration equivalence: %d of %d srtctl recordings' recipes plan alike as written and migrated", alike, len(files))
	if want := planner.SrtctlRecordings(t); len(files) != want || alike != want {
		t.Errorf("%d of %d recipes alike; the reference holds %d recordings", alike, len(files), want)
	}
}
