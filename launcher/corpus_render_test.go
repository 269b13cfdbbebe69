package launcher

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"

	"github.com/slurmbench/slurmbench/launcher/profile"
	"github.com/slurmbench/slurmbench/launcher/recipe"
)

// corpusRoot is InferenceX's recipe tree beside the repository.
func corpusRoot(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}

func corpusRecipes(t testing.TB) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(corpusRoot(t), func(p string, d os.DirEntry, err error) error {
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

// srtctlDefaultGPUsPerNode is resources.gpus_per_node when a recipe omits it.
const srtctlDefaultGPUsPerNode = 4

// refusal returns the field a recipe is refused for, or "" when err is not
// a named refusal (an unsupported feature, or a key set twice).
func refusal(err error) string {
	var ue *recipe.UnsupportedError
	if errors.As(err, &ue) {
		return ue.Err.Field
	}
	var re *recipe.Error
	if errors.As(err, &re) && strings.Contains(re.Msg, "set twice") && re.Field != "" {
		return "duplicate key"
	}
	return ""
}

// corpusProfiles writes one synthetic profile per gpus_per_node value whose
// [models] maps every local model alias the recipes use.
func corpusProfiles(t *testing.T, recipes map[string]*recipe.Recipe) map[int]*profile.Profile {
	t.Helper()
	aliases := map[string]bool{}
	gpns := map[int]bool{}
	for _, r := range recipes {
		if p := r.Model.Path; !strings.HasPrefix(p, "hf:") && !filepath.IsAbs(p) {
			aliases[p] = true
		}
		gpns[deref(r.Resources.GPUsPerNode, srtctlDefaultGPUsPerNode)] = true
	}
	var models strings.Builder
	for _, a := range profile.SortedKeys(aliases) {
		fmt.Fprintf(&models, "%s = %s\n", strconv.Quote(a), strconv.Quote("/models/"+strings.ReplaceAll(a, "/", "_")))
	}
	dir := t.TempDir()
	out := map[int]*profile.Profile{}
	for gpn := range gpns {
		text := fmt.Sprintf(`cluster = "corpus-%d"
[slurm]
rest_url = "http://slurmrestd:6820"
partition = "batch"
gpus_per_node = %d
[paths]
runs_dir = "/shared/runs"
squash_dir = "/shared/squash"
# The InferenceX checkout: custom benchmarks and the sa-bench client run from it.
workspace = %s
[models]
%s`, gpn, gpn, strconv.Quote(filepath.Dir(filepath.Dir(filepath.Dir(corpusRoot(t))))), models.String())
		path := filepath.Join(dir, fmt.Sprintf("gpn%d.toml", gpn))
		writeFile(t, path, text)
		out[gpn] = loadProfile(t, path)
	}
	return out
}

// TestCorpusRenders plans every recipe InferenceX checks in. Each one is
// rendered, or refused with a named field; any other error, or a panic,
// fails the test with the file. Rendered plans must hold the invariants.
func TestCorpusRenders(t *testing.T) {
	files := corpusRecipes(t)
	root := corpusRoot(t)
	loaded := map[string]*recipe.Recipe{}
	refused := map[string]int{}
	var otherErrs []string
	crashes := 0
	safely := func(file string, f func() error) (err error) {
		defer func() {
			if v := recover(); v != nil {
				crashes++
				err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
			}
		}()
		return f()
	}
	for _, f := range files {
		var r *recipe.Recipe
		err := safely(f, func() (err error) { r, err = recipe.Load(f); return err })
		rel, _ := filepath.Rel(root, f)
		switch {
		case err == nil:
			loaded[f] = r
		case refusal(err) != "":
			refused[refusal(err)]++
		default:
			otherErrs = append(otherErrs, fmt.Sprintf("%s: load: %v", rel, err))
		}
	}
	profiles := corpusProfiles(t, loaded)
	rendered := 0
	for _, f := range files {
		r, ok := loaded[f]
		if !ok {
			continue
		}
		rel, _ := filepath.Rel(root, f)
		p := profiles[deref(r.Resources.GPUsPerNode, srtctlDefaultGPUsPerNode)]
		var plan *Plan
		err := safely(f, func() (err error) { plan, err = Build(inputs(p, r)); return err })
		switch {
		case err == nil:
			rendered++
			for _, e := range invariantErrors(plan) {
				t.Errorf("%s: %s", rel, e)
			}
			if _, err := plan.JSON(); err != nil {
				t.Errorf("%s: JSON: %v", rel, err)
			}
		case refusal(err) != "":
			refused[refusal(err)]++
		default:
			otherErrs = append(otherErrs, fmt.Sprintf("%s: %v", rel, err))
		}
	}
	for _, e := range otherErrs {
		t.Errorf("not rendered and not refused by field: %s", e)
	}
	total := 0
	var byField []string
	for _, k := range profile.SortedKeys(refused) {
		total += refused[k]
		byField = append(byField, fmt.Sprintf("%s %d", k, refused[k]))
	}
	t.Logf("corpus: %d recipes, %d rendered, %d refused (by field: %s), %d crashes, %d other errors",
		len(files), rendered, total, strings.Join(byField, ", "), crashes, len(otherErrs))
	if rendered+total+len(otherErrs) != len(files) {
		t.Errorf("counted %d + %d + %d of %d recipes", rendered, total, len(otherErrs), len(files))
	}
	if rendered == 0 {
		t.Error("no corpus recipe rendered")
	}
}
