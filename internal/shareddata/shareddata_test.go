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
	t.Setenv(RequireEnv, "")
	r := &tbrecord.TB{TB: t}
	p := Path(r, absent)
	if r.SkipMsg == "" || r.FatalMsg != "" || !strings.Contains(r.SkipMsg, absent) {
		t.Errorf("without %s: skipped %q, failed %q", RequireEnv, r.SkipMsg, r.FatalMsg)
	}
	if want := filepath.Join("shared", absent); !strings.HasSuffix(p, want) || !filepath.IsAbs(p) {
		t.Errorf("path %q, want an absolute path ending in %s", p, want)
	}

	t.Setenv(RequireEnv, "1")
	r = &tbrecord.TB{TB: t}
	Path(r, absent)
	if r.FatalMsg == "" || r.SkipMsg != "" || !strings.Contains(r.FatalMsg, RequireEnv+"=1") {
		t.Errorf("with %s=1: skipped %q, failed %q", RequireEnv, r.SkipMsg, r.FatalMsg)
	}
}

func TestPathFindsPresentEntry(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(filepath.Dir(root), "shared")
	if _, err := os.Stat(shared); err != nil {
		Missing(t, "%s: %v", shared, err)
	}
	r := &tbrecord.TB{TB: t}
	if p := Path(r); p != shared || r.SkipMsg != "" || r.FatalMsg != "" {
		t.Errorf("Path() = %q (skipped %q, failed %q), want %s", p, r.SkipMsg, r.FatalMsg, shared)
	}
}

// TestBinaryNeverReadsShared: only tests may reach ../shared, so neither
// this package nor the power aggregator runner is linked into the binary.
func TestBinaryNeverReadsShared(t *testing.T) {
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "github.com/slurmbench/slurmbench/cmd/slurmbench").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range []string{"github.com/slurmbench/slurmbench/internal/shareddata", "github.com/slurmbench/slurmbench/power/powertest"} {
		if slices.Contains(strings.Fields(string(out)), pkg) {
			t.Errorf("the slurmbench binary links %s, which reads ../shared", pkg)
		}
	}
}
