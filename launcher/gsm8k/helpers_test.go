package gsm8k

import (
	"path/filepath"
	"sync"
	"testing"

	goldenpkg "github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// dataDir is ../shared/data/gsm8k; tests that need the real splits skip
// when it is absent (fail under SLURMBENCH_REQUIRE_DATA=1).
func dataDir(t testing.TB) string {
	t.Helper()
	return filepath.Dir(shareddata.Path(t, "data", "gsm8k", TestFile))
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
