package migrate

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// overrides parses "--set K=V" / "--unset K" strings.
func overrides(t *testing.T, flags ...string) []recipe.Override {
	t.Helper()
	var out []recipe.Override
	for _, f := range flags {
		var o recipe.Override
		var err error
		if rest, ok := strings.CutPrefix(f, "--unset "); ok {
			o, err = recipe.ParseUnset(rest)
		} else {
			o, err = recipe.ParseSet(strings.TrimPrefix(f, "--set "))
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, o)
	}
	return out
}

// corpusDir is InferenceX's recipe tree, beside the repo in ../shared.
func corpusDir(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}

func corpusFiles(t testing.TB) []string {
	t.Helper()
	return shareddata.YAMLFiles(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}
