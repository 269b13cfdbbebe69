package recipe

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

// corpusDir is InferenceX's recipe tree, beside the repo in ../shared.
func corpusDir(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}

func corpusFiles(t testing.TB) []string {
	var files []string
	err := filepath.WalkDir(corpusDir(t), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// TestCorpusLoads reads every corpus recipe: each one loads, or is refused
// as unsupported with the field named. A malformed-recipe error on a corpus
// file would mean our schema is wrong, so it fails the test.
func TestCorpusLoads(t *testing.T) {
	files := corpusFiles(t)
	loaded, refused := 0, map[string]int{}
	for _, f := range files {
		_, err := Load(f)
		if err == nil {
			loaded++
			continue
		}
		var ue *UnsupportedError
		var re *Error
		if errors.As(err, &re) && strings.Contains(re.Msg, "set twice") {
			// A real defect in the corpus file; refused with field and line.
			refused["duplicate key"]++
			continue
		}
		if !errors.As(err, &ue) {
			t.Errorf("%s: not loaded and not refused as unsupported: %v", f, err)
			continue
		}
		if ue.Err.Field == "" {
			t.Errorf("%s: refusal names no field: %v", f, err)
		}
		refused[ue.Err.Field]++
	}
	t.Logf("%d recipes: %d loaded, %d refused as unsupported: %v", len(files), loaded, len(files)-loaded, refused)
	if loaded == 0 {
		t.Fatal("no corpus recipe loaded")
	}
}
