// Package shareddata locates, for tests, the research and data checkout that
// sits beside the repository (../shared: InferenceX's recipes and configs,
// srtctl's recorded runs, the gsm8k splits, recorded slurmrestd answers).
//
// A lone clone has no such checkout, so a test that needs it skips; CI sets
// SLURMBENCH_REQUIRE_DATA=1, and then a missing checkout fails the test
// instead of letting it pass without checking anything. Only tests may use
// this package: nothing the binary does may depend on ../shared.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// RequireEnv names the variable that turns a skip for missing data into a
// failure.
const RequireEnv = "SLURMBENCH_REQUIRE_DATA"

// Path returns the absolute path of elem inside ../shared, the directory
// beside the repository root (the directory holding go.mod above the test's
// working directory). When that path does not exist the test is skipped, or
// fails under SLURMBENCH_REQUIRE_DATA=1.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	root, err := repoRoot()
	if err != nil {
		t.Fatalf("locating the repository root: %v", err)
		return ""
	}
	p := filepath.Join(append([]string{filepath.Dir(root), "shared"}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "%s is not present (../shared beside the repository): %v", p, err)
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

// repoRoot is the nearest directory above the working directory holding
// go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
