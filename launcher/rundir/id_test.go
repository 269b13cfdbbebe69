package rundir

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestNewIDIsARunID(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	for _, name := range []string{"mock-2p1d", strings.Repeat("long-name", 20)} {
		id := NewID(name, now)
		if err := CheckID(id); err != nil {
			t.Errorf("NewID(%q) = %q: %v", name, id, err)
		}
		if !strings.Contains(id, "20261203T080000Z") {
			t.Errorf("NewID(%q) = %q lacks the UTC time", name, id)
		}
	}
	if a, b := NewID("x", now), NewID("x", now); a == b {
		t.Errorf("two ids at the same second are equal: %s", a)
	}
}

func TestPathRefusesWhatIsNotARunID(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "a/b", "../x", ".hidden", "-flag", "a\x00b", strings.Repeat("x", 129)} {
		if p, err := Path("/runs", bad); err == nil {
			t.Errorf("Path(%q) = %q, want an error", bad, p)
		}
	}
	if p, err := Path("/runs", "mock-2p1d-20261203T080000Z-abc123"); err != nil || p != filepath.Join("/runs", "mock-2p1d-20261203T080000Z-abc123") {
		t.Errorf("Path = %q, %v", p, err)
	}
}
