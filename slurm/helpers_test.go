package slurm

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/slurm/token"
)

// repoRoot finds the directory holding go.mod above the test's directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// samplesDir is the recorded slurmrestd samples, next to the repository.
func samplesDir(t testing.TB) string {
	t.Helper()
	dir := shareddata.Path(t, "research", "slurm-lab", "samples")
	if _, err := os.Stat(filepath.Join(dir, "INDEX.tsv")); err != nil {
		shareddata.Missing(t, "recorded slurmrestd samples not found at %s (they live outside the repository): %v", dir, err)
	}
	return dir
}

// offlineClient is a client for decode-only tests; it never connects.
func offlineClient(t testing.TB) *Client {
	t.Helper()
	c, err := New(Config{URL: "http://127.0.0.1:1", Token: "offline-token"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The token package's functions under the names these tests knew.
var (
	parseTokenOutput = token.Parse
	tokenExpiry      = token.Expiry
	mintToken        = token.Mint
)
