package planner

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// archiveRoot is srtctl's own recipes/ directory at c88ef731, beside the
// repository (its ORIGIN.md says where it comes from).
func archiveRoot(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "data", "srt-slurm-recipes-c88ef731")
}

func archiveRecipes(t testing.TB) []string {
	t.Helper()
	return shareddata.YAMLFiles(t, "data", "srt-slurm-recipes-c88ef731")
}

// Archive expectations. archiveRendered is how many of the archive's 555
// recipes slurmbench plans (every config of an override bundle, one per
// --variant); srtctl c88ef731's dry-run accepts all 555. The rest are
// refused by name, as archiveRefused lists: a change that plans more (or
// fewer), or refuses for another field, must update both (and the README).
const (
	archiveFiles    = 555
	archiveRendered = 551
	archiveAtLeast  = 545 // all but the override bundles' 10, had they been refused without --variant
)

// archiveRefused is field → recipes refused for it. Unsupported: what
// slurmbench does not run (observability.enabled is srtctl's
// OTEL/Prometheus/Tachometer stack), and benchmark.type gsm8k-bench,
// which srtctl registers no runner for (its benchmark stage fails with
// "Unknown benchmark type"). Checked when planning: a worker's parallelism
// that leaves GPUs unused, and a benchmark.command that needs a shell —
// srtctl starts these and the engine or bash finds out. Worker nodes left
// idle are planned with a warning, as srtctl holds them (noteIdleNodes).
var archiveRefused = map[string]int{
	"benchmark.type":                      2,
	"observability.enabled":               1,
	"check:backend.sglang_config.prefill": 1,
}

// TestArchiveRenders plans every recipe of srtctl's own archive, each
// variant of an override bundle, with --allow-duplicate-keys where srtctl's
// last-wins is needed. Each is planned (and passes the plan invariants:
// GPU slices, ports, argv) or refused by a named field as archiveRefused
// lists; a crash, an error naming no field, or a count that moves fails.
func TestArchiveRenders(t *testing.T) {
	files := archiveRecipes(t)
	root := archiveRoot(t)
	if len(files) != archiveFiles {
		t.Fatalf("%d recipes in the archive, ORIGIN.md says %d", len(files), archiveFiles)
	}
	planOn := corpusProfileFor(t, files)
	profileFor := func(r *recipe.Recipe) *profile.Profile {
		p, _ := planOn(r)
		return p
	}
	rendered, bundles, variants, dups := 0, 0, 0, 0
	byField := map[string]int{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		o := renderCorpusFile(t, f, profileFor)
		var re *recipe.Error
		switch {
		case o.rendered:
			rendered++
			if o.variants > 0 {
				bundles++
				variants += o.variants
			}
			if o.allowDup {
				dups++
			}
		case o.srtctl != "":
			t.Errorf("%s: refused as srtctl would (%s), but srtctl c88ef731 accepts every archive recipe", rel, o.srtctl)
		case o.gap != "":
			byField[o.gap]++
			t.Logf("%s: not run: %s", rel, o.gap)
		case errors.As(o.err, &re) && re.Field != "":
			byField["check:"+re.Field]++
			t.Logf("%s: refused when planning: %v", rel, o.err)
		default:
			t.Errorf("%s: refused without naming a field: %v", rel, o.err)
		}
	}
	t.Logf("archive: %d recipes, %d planned (%d override bundles as %d configs, %d with --allow-duplicate-keys), refused by field %v",
		len(files), rendered, bundles, variants, dups, byField)
	if rendered < archiveAtLeast {
		t.Errorf("%d of %d planned; at least %d must be", rendered, len(files), archiveAtLeast)
	}
	if rendered != archiveRendered {
		t.Errorf("%d recipes planned; archiveRendered says %d: update the constant (and the README) with the change that moved it", rendered, archiveRendered)
	}
	for _, k := range profile.SortedKeys(archiveRefused) {
		if byField[k] != archiveRefused[k] {
			t.Errorf("%s: %d refused, archiveRefused says %d", k, byField[k], archiveRefused[k])
		}
	}
	for _, k := range profile.SortedKeys(byField) {
		if _, ok := archiveRefused[k]; !ok {
			t.Errorf("%s: %d refused for a field archiveRefused does not list", k, byField[k])
		}
	}
}
