package shareddata

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/tbrecord"
)

func TestPathSkipsOrFails(t *testing.T) {
	const absent = "no-such-entry-in-shared"
	t.Setenv(DirEnv, t.TempDir())
	t.Setenv(RequireEnv, "")
	r := &tbrecord.TB{TB: t}
	p := Path(r, absent)
	if r.SkipMsg == "" || r.FatalMsg != "" || !strings.Contains(r.SkipMsg, absent) {
		t.Errorf("without %s: skipped %q, failed %q", RequireEnv, r.SkipMsg, r.FatalMsg)
	}
	if want := filepath.Join(os.Getenv(DirEnv), absent); p != want {
		t.Errorf("path %q, want %s", p, want)
	}

	t.Setenv(RequireEnv, "1")
	r = &tbrecord.TB{TB: t}
	Path(r, absent)
	if r.FatalMsg == "" || r.SkipMsg != "" || !strings.Contains(r.FatalMsg, RequireEnv+"=1") {
		t.Errorf("with %s=1: skipped %q, failed %q", RequireEnv, r.SkipMsg, r.FatalMsg)
	}

	// No checkout named: the same, saying which variable names it.
	t.Setenv(DirEnv, "")
	t.Setenv(RequireEnv, "")
	r = &tbrecord.TB{TB: t}
	Path(r, "data")
	if !strings.Contains(r.SkipMsg, DirEnv) || r.FatalMsg != "" {
		t.Errorf("with %s unset: skipped %q, failed %q", DirEnv, r.SkipMsg, r.FatalMsg)
	}
}

func TestPathFindsPresentEntry(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(DirEnv, dir)
	r := &tbrecord.TB{TB: t}
	if p := Path(r, "data"); p != filepath.Join(dir, "data") || r.SkipMsg != "" || r.FatalMsg != "" {
		t.Errorf("Path(data) = %q (skipped %q, failed %q), want %s", p, r.SkipMsg, r.FatalMsg, filepath.Join(dir, "data"))
	}
}

// TestBinaryNeverReadsShared: only tests may reach the reference checkout, so
// this package is never linked into the binary.
func TestBinaryNeverReadsShared(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/slurmbench/slurmbench/cmd/slurmbench").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range []string{"github.com/slurmbench/slurmbench/internal/shareddata"} {
		if slices.Contains(strings.Fields(string(out)), pkg) {
			t.Errorf("the slurmbench binary links %s, which reads the reference checkout", pkg)
		}
	}
}
