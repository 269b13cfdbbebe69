package gsm8k

import (
	"path/filepath"
	"reflect"
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

// splits loads the real test and train splits (the copy built into the
// binary) once per test binary.
func splits(t testing.TB) (test, train []Doc) {
	t.Helper()
	splitsOnce.Do(func() { splitsTest, splitsTrain, splitsErr = LoadDir("") })
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

// The built-in splits are the data set's, document for document.
func TestBuiltInSplits(t *testing.T) {
	test, train := splits(t)
	if len(test) != TestDocs || len(train) != TrainDocs {
		t.Fatalf("built-in splits: %d test and %d train documents, want %d and %d", len(test), len(train), TestDocs, TrainDocs)
	}
	fileTest, fileTrain, err := LoadDir(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(test, fileTest) || !reflect.DeepEqual(train, fileTrain) {
		t.Error("the built-in splits differ from ../shared/data/gsm8k")
	}
}
