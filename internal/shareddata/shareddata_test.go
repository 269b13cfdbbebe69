package shareddata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records Skipf and Fatalf instead of
// stopping the goroutine.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper()                           {}
func (r *recorder) Skipf(format string, args ...any)  { r.skipped = fmt.Sprintf(format, args...) }
func (r *recorder) Fatalf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func TestPathSkipsOrFails(t *testing.T) {
	const absent = "no-such-entry-in-shared"
	t.Setenv(RequireEnv, "")
	r := &recorder{TB: t}
	p := Path(r, absent)
	if r.skipped == "" || r.failed != "" || !strings.Contains(r.skipped, absent) {
		t.Errorf("without %s: skipped %q, failed %q", RequireEnv, r.skipped, r.failed)
	}
	if want := filepath.Join("shared", absent); !strings.HasSuffix(p, want) || !filepath.IsAbs(p) {
		t.Errorf("path %q, want an absolute path ending in %s", p, want)
	}

	t.Setenv(RequireEnv, "1")
	r = &recorder{TB: t}
	Path(r, absent)
	if r.failed == "" || r.skipped != "" || !strings.Contains(r.failed, RequireEnv+"=1") {
		t.Errorf("with %s=1: skipped %q, failed %q", RequireEnv, r.skipped, r.failed)
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
	r := &recorder{TB: t}
	if p := Path(r); p != shared || r.skipped != "" || r.failed != "" {
		t.Errorf("Path() = %q (skipped %q, failed %q), want %s", p, r.skipped, r.failed, shared)
	}
}
