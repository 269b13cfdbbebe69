package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// corpusRoot is InferenceX's recipe tree beside the repository.
func corpusRoot(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}

func corpusRecipes(t testing.TB) []string {
	t.Helper()
	return shareddata.YAMLFiles(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}

// srtctlDefaultGPUsPerNode is resources.gpus_per_node when a recipe omits it.
const srtctlDefaultGPUsPerNode = 4

// corpusProfileFor gives each recipe of files (every variant of a bundle
// included) a synthetic profile with its GPUs per node; a recipe loaded
// later gets one made for it.
func corpusProfileFor(t *testing.T, files []string) func(*recipe.Recipe) (*profile.Profile, error) {
	t.Helper()
	loaded := map[string]*recipe.Recipe{}
	for _, f := range files {
		opt := recipe.Options{AllowDuplicateKeys: true}
		r, err := recipe.LoadContext(context.Background(), f, opt)
		if err == nil {
			loaded[f] = r
		}
		var ve *recipe.VariantError
		if errors.As(err, &ve) {
			for _, v := range ve.Variants {
				opt.Variant = v
				if r, err := recipe.LoadContext(context.Background(), f, opt); err == nil {
					loaded[f+":"+v] = r
				}
			}
		}
	}
	profiles := corpusProfiles(t, loaded)
	return func(r *recipe.Recipe) (*profile.Profile, error) {
		gpn := deref(r.Resources.GPUsPerNode, srtctlDefaultGPUsPerNode)
		if p := profiles[gpn]; p != nil {
			return p, nil
		}
		return corpusProfiles(t, map[string]*recipe.Recipe{"": r})[gpn], nil
	}
}

// corpusProfiles writes one synthetic profile per gpus_per_node value whose
// [models] maps every local model alias the recipes use.
func corpusProfiles(t *testing.T, recipes map[string]*recipe.Recipe) map[int]*profile.Profile {
	t.Helper()
	aliases := map[string]bool{}
	containers := map[string]bool{}
	gpns := map[int]bool{}
	for _, r := range recipes {
		if p := r.Model.Path; !strings.HasPrefix(p, "hf:") && !filepath.IsAbs(p) {
			aliases[p] = true
		}
		// Container names that are aliases (one word: no registry, tag or
		// path) map to squash files, as the srtctl reference's cluster does.
		for _, c := range []string{r.Model.Container, r.Frontend.NginxContainer} {
			if c != "" && !strings.ContainsAny(c, "/:@") {
				containers[c] = true
			}
		}
		gpns[deref(r.Resources.GPUsPerNode, srtctlDefaultGPUsPerNode)] = true
	}
	var models strings.Builder
	for _, a := range profile.SortedKeys(aliases) {
		fmt.Fprintf(&models, "%s = %s\n", strconv.Quote(a), strconv.Quote("/models/"+strings.ReplaceAll(a, "/", "_")))
	}
	models.WriteString("[containers]\n")
	for _, c := range profile.SortedKeys(containers) {
		fmt.Fprintf(&models, "%s = %s\n", strconv.Quote(c), strconv.Quote("/containers/"+c+".sqsh"))
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
# A cluster that collects power names its DCGM exporter image (srtctl 2.x's
# cluster default exporter): recipes that turn telemetry on without one use it.
[telemetry]
exporter_image = "nvcr.io/nvidia/k8s/dcgm-exporter:4.2.3-4.1.3-ubuntu22.04"
[models]
%s`, gpn, gpn, strconv.Quote(filepath.Dir(filepath.Dir(filepath.Dir(corpusRoot(t))))), models.String())
		path := filepath.Join(dir, fmt.Sprintf("gpn%d.toml", gpn))
		writeFile(t, path, text)
		out[gpn] = loadProfile(t, path)
	}
	return out
}

// Corpus expectations. corpusRendered is how many of the 469 recipes
// slurmbench plans today; a change that plans more (or fewer) must update
// it, since the test fails when the count drifts either way. srtctl
// c88ef731's dry-run accepts 451; the other 18 are listed, with the field
// its schema refuses, in recipe/testdata/srtctl-refused.txt.
const (
	corpusRendered  = 465
	srtctlAccepted  = 451
	overrideConfigs = 31 // the 4 override files' configs (recipe/testdata/srtctl-variants.json)
)

// corpusOutcome is how one corpus file went: rendered (every config of an
// override file), refused as srtctl refuses it, or refused by a feature
// slurmbench does not run yet; err is anything else.
type corpusOutcome struct {
	rendered, allowDup bool
	variants           int
	srtctl, gap        string // refused field
	err                error
}

// renderCorpusFile plans one corpus file as a user would: with
// --allow-duplicate-keys when it sets a key twice (srtctl keeps the last),
// and each --variant of an override file.
func renderCorpusFile(t *testing.T, file string, profileFor func(*recipe.Recipe) *profile.Profile) (out corpusOutcome) {
	defer func() {
		if v := recover(); v != nil {
			out = corpusOutcome{err: fmt.Errorf("panic: %v\n%s", v, debug.Stack())}
		}
	}()
	opt := recipe.Options{}
	build := func() error {
		r, err := recipe.LoadContext(context.Background(), file, opt)
		if err != nil {
			return err
		}
		pl, err := Build(inputs(profileFor(r), r))
		if err != nil {
			return err
		}
		if r.Variant != "" {
			out.variants++ // one config of an override file
		}
		for _, e := range invariantErrors(pl) {
			t.Errorf("%s %s: %s", file, opt.Variant, e)
		}
		if _, err := pl.JSON(); err != nil {
			t.Errorf("%s: JSON: %v", file, err)
		}
		return nil
	}
	err := build()
	var de *recipe.DuplicateKeyError
	if errors.As(err, &de) {
		out.allowDup, opt.AllowDuplicateKeys = true, true
		err = build()
	}
	var ve *recipe.VariantError
	if errors.As(err, &ve) {
		err = nil
		for _, v := range ve.Variants {
			opt.Variant = v
			if err = build(); err != nil {
				break
			}
		}
	}
	var se *recipe.SrtctlRefusalError
	var ue *recipe.UnsupportedError
	switch {
	case err == nil:
		out.rendered = true
	case errors.As(err, &se):
		out.srtctl = se.Err.Field
	case errors.As(err, &ue) && ue.Err.Field != "":
		out.gap = ue.Err.Field
	default:
		out.err = err
	}
	return out
}

// srtctlRefusedList reads recipe/testdata/srtctl-refused.txt.
func srtctlRefusedList(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "inputs", "recipe", "testdata", "srtctl-refused.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if path, field, ok := strings.Cut(strings.TrimSpace(line), " "); ok && !strings.HasPrefix(line, "#") {
			out[path] = field
		}
	}
	return out
}

// TestCorpusRenders plans every recipe InferenceX checks in. Each one is
// rendered, refused as srtctl refuses it (by the field the checked-in list
// names), or refused by a named field slurmbench does not run yet; anything
// else — a crash, an untyped error, a recipe srtctl accepts refused for
// another reason — fails, and so does a count that differs from the
// constants above.
func TestCorpusRenders(t *testing.T) {
	files := corpusRecipes(t)
	root := corpusRoot(t)
	srtctlList := srtctlRefusedList(t)
	planOn := corpusProfileFor(t, files)
	profileFor := func(r *recipe.Recipe) *profile.Profile {
		p, _ := planOn(r)
		return p
	}
	rendered, allowDup, variants, srtctlRefused, beyond := 0, 0, 0, 0, 0
	gaps := map[string]int{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f)
		o := renderCorpusFile(t, f, profileFor)
		switch {
		case o.srtctl != "":
			srtctlRefused++
			if srtctlList[rel] != o.srtctl {
				t.Errorf("%s: refused as srtctl would (%s), but srtctl accepts it (srtctl-refused.txt: %q)", rel, o.srtctl, srtctlList[rel])
			}
		case srtctlList[rel] != "" && recipe.BeyondSrtctl(srtctlList[rel]):
			// srtctl refuses it; slurmbench runs that field (recipe.beyondSrtctl).
			if o.rendered {
				beyond++
			} else {
				t.Errorf("%s: slurmbench runs %s, which srtctl refuses; not rendered: gap=%q err=%v", rel, srtctlList[rel], o.gap, o.err)
			}
		case srtctlList[rel] != "":
			t.Errorf("%s: srtctl refuses it for %s; slurmbench: rendered=%v gap=%q err=%v", rel, srtctlList[rel], o.rendered, o.gap, o.err)
		case o.rendered:
			rendered++
			variants += o.variants
			if o.allowDup {
				allowDup++
			}
		case o.gap != "":
			// Every field srtctl honours is planned now: a refusal here
			// is a regression, not a known gap.
			gaps[o.gap]++
			t.Errorf("%s: srtctl accepts it; slurmbench refuses it for %s", rel, o.gap)
		default:
			t.Errorf("%s: srtctl accepts it; slurmbench refuses it without naming an unsupported field: %v", rel, o.err)
		}
	}
	total := 0
	var byField []string
	for _, k := range profile.SortedKeys(gaps) {
		total += gaps[k]
		byField = append(byField, fmt.Sprintf("%s %d", k, gaps[k]))
	}
	t.Logf("corpus: %d recipes, %d rendered (%d with --allow-duplicate-keys; %d override-file configs) + %d that srtctl refuses, %d refused as srtctl %s refuses them, %d not run yet (by field: %s)",
		len(files), rendered, allowDup, variants, beyond, srtctlRefused, recipe.SrtctlRevision, total, strings.Join(byField, ", "))
	if rendered+beyond != corpusRendered {
		t.Errorf("%d recipes rendered; corpusRendered says %d: update the constant (and docs/recipes.md) with the change that moved it", rendered+beyond, corpusRendered)
	}
	if srtctlRefused+beyond != len(srtctlList) || len(srtctlList) != len(files)-srtctlAccepted {
		t.Errorf("%d refused as srtctl refuses them + %d run anyway; srtctl-refused.txt lists %d, srtctl refuses %d", srtctlRefused, beyond, len(srtctlList), len(files)-srtctlAccepted)
	}
	if variants != overrideConfigs {
		t.Errorf("%d override-file configs rendered; srtctl expands the corpus's override files into %d", variants, overrideConfigs)
	}
	if rendered+total != srtctlAccepted {
		t.Errorf("rendered %d + not run yet %d != the %d recipes srtctl accepts", rendered, total, srtctlAccepted)
	}
}
