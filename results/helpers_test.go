package results

import (
	"path/filepath"
	"strings"
	"testing"

	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/results/resultstest"
)

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Assert(t, filepath.Join("testdata", name), got)
}

// The SA-Bench fixture and file writers are resultstest's, shared with
// the packages that read results.
var (
	saBench       = resultstest.SABench
	writeJSON     = resultstest.WriteJSON
	writeTestFile = resultstest.WriteFile
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }
