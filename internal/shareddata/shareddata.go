// Package shareddata locates, for tests, the reference checkout some tests
// compare against: InferenceX's recipes and configs, srtctl's recorded
// runs, the gsm8k splits, recorded slurmrestd answers. It is not part of
// this repository; the test runner names it in SLURMBENCH_REFERENCE_DIR
// (`make test` points it at the directory beside the repository), so this
// package knows no location of its own.
//
// A lone clone has no such checkout, so a test that needs it skips; CI sets
// SLURMBENCH_REQUIRE_DATA=1, and then a missing checkout fails the test
// instead of letting it pass without checking anything. Only tests may use
// this package: nothing the binary does may depend on the checkout.
package shareddata

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// RequireEnv names the variable that turns a skip for missing data into a
// failure.
const RequireEnv = "SLURMBENCH_REQUIRE_DATA"

// DirEnv names the variable holding the reference checkout's absolute path.
const DirEnv = "SLURMBENCH_REFERENCE_DIR"

// Path returns the absolute path of elem inside the reference checkout.
// When the checkout is not named or the path does not exist the test is
// skipped, or fails under SLURMBENCH_REQUIRE_DATA=1.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	dir := os.Getenv(DirEnv)
	if dir == "" || !filepath.IsAbs(dir) {
		Missing(t, "%s=%q names no reference checkout (an absolute path; make test sets it)", DirEnv, dir)
		return filepath.Join(elem...)
	}
	p := filepath.Join(append([]string{dir}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "%s is not present (%s=%s): %v", p, DirEnv, dir, err)
	}
	return p
}

// Missing skips t because data it needs is absent, or fails it under
// SLURMBENCH_REQUIRE_DATA=1. For tests that find out late (a file inside
// a directory Path returned).
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf(format+" ("+RequireEnv+"=1)", args...)
		return
	}
	t.Skipf(format, args...)
}

// YAMLFiles lists the *.yaml and *.yml files below the reference
// checkout's elem (a recipe tree), sorted; skipped or failed as Path is.
func YAMLFiles(t testing.TB, elem ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(Path(t, elem...), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}
