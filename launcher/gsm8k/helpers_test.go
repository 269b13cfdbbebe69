package gsm8k

import (
	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// dataDir is ../shared/data/gsm8k relative to the repository root; tests that
// need the real splits skip when it is absent.
func dataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data", "gsm8k")
	if _, err := os.Stat(filepath.Join(data, TestFile)); err != nil {
		t.Skipf("gsm8k data not found at %s (the ../shared checkout beside the repository): %v", data, err)
	}
	return data
}

var (
	splitsOnce              sync.Once
	splitsTest, splitsTrain []Doc
	splitsErr               error
)

// splits loads the real test and train splits once per test binary.
func splits(t testing.TB) (test, train []Doc) {
	t.Helper()
	dir := dataDir(t)
	splitsOnce.Do(func() { splitsTest, splitsTrain, splitsErr = LoadDir(dir) })
	if splitsErr != nil {
		t.Fatal(splitsErr)
	}
	return splitsTest, splitsTrain
}

// golden compares got with testdata/<name>.golden, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenpkg.Assert(t, filepath.Join("testdata", name+".golden"), got)
}

func around(b []byte, i int) string {
	lo, hi := max(i-60, 0), min(i+60, len(b))
	return string(b[lo:hi])
}
