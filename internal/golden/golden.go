// Package golden compares test output with files under testdata/ and
// rewrites them when the test binary runs with -update. One flag and one
// comparison for every package's golden tests.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is -update: rewrite golden files from the current output.
var Update = flag.Bool("update", false, "rewrite golden files under testdata/ from the current output")

// Assert compares got with the file at path (relative to the package, e.g.
// testdata/x.golden), or writes it under -update.
func Assert(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update if the change is intended)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
