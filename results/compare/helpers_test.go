package compare

import (
	"path/filepath"
	"testing"

	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/results/resultstest"
)

// golden compares got with testdata/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Assert(t, filepath.Join("testdata", name), got)
}

// The SA-Bench fixture and its writer are resultstest's.
var (
	saBench   = resultstest.SABench
	writeJSON = resultstest.WriteJSON
)
