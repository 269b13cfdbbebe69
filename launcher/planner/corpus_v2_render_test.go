package planner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// The schema-2 sample of InferenceX's current tree (data/inferencex-v2, its
// README and MANIFEST.tsv): 190 files, each variant of a *-variants.yaml
// bundle planned on its own. Every config renders or is refused naming a
// field; the counts are exact, so a change that plans more (or fewer) must
// update them.
const (
	v2CorpusFiles    = 190
	v2CorpusConfigs  = 301 // plain recipes + every variant of every bundle
	v2CorpusRendered = 298
)

// v2CorpusRefusals is every config not rendered, by the field named.
// engine.prefill_container and engine.set_cuda_visible_devices are read
// only by the SemiAnalysisAI fork of srt-slurm (upstream srtctl refuses
// them too). benchmark.command: one sample file ends at `type: custom`
// with no command (srtctl refuses it too). A command that needs a shell
// (dsv4/sglang/mi355x/agentic/disagg-dspark.yaml's 5-command sequence) runs
// from a script file as srtctl runs it (bash -l), and the sample's one
// telemetry recipe without an exporter uses the profile's, as srtctl 2.x
// uses the cluster's.
var v2CorpusRefusals = map[string]int{
	"fork engine.prefill_container":        1,
	"fork engine.set_cuda_visible_devices": 1,
	"error benchmark.command":              1,
}

func v2CorpusRoot(t testing.TB) string {
	t.Helper()
	return shareddata.Path(t, "data", "inferencex-v2", "benchmarks", "multi_node", "srt-slurm-recipes")
}

// TestCorpusV2Renders plans every schema-2 recipe of the sample, and every
// variant of every bundle, with a synthetic profile.
func TestCorpusV2Renders(t *testing.T) {
	root := v2CorpusRoot(t)
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	type config struct{ file, variant string }
	var configs []config
	loaded := map[string]*recipe.Recipe{}
	for _, f := range files {
		r, err := recipe.LoadContext(context.Background(), f, recipe.Options{})
		var ve *recipe.VariantError
		if errors.As(err, &ve) {
			for _, v := range ve.Variants {
				configs = append(configs, config{f, v})
				if r, err := recipe.LoadContext(context.Background(), f, recipe.Options{Variant: v}); err == nil {
					loaded[f+":"+v] = r
				}
			}
			continue
		}
		configs = append(configs, config{f, ""})
		if err == nil {
			loaded[f] = r
		}
	}
	profiles := corpusProfiles(t, loaded)
	rendered := 0
	refusals := map[string]int{}
	for _, c := range configs {
		name := strings.TrimPrefix(c.file, root+"/")
		if c.variant != "" {
			name += ":" + c.variant
		}
		err := func() (err error) {
			defer func() {
				if v := recover(); v != nil {
					err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
				}
			}()
			r, err := recipe.LoadContext(context.Background(), c.file, recipe.Options{Variant: c.variant})
			if err != nil {
				return err
			}
			if r.SchemaVersion != 2 {
				t.Errorf("%s: read as schema %d", name, r.SchemaVersion)
			}
			p := profiles[deref(r.Resources.GPUsPerNode, srtctlDefaultGPUsPerNode)]
			pl, err := Build(inputs(p, r))
			if err != nil {
				return err
			}
			if pl.Recipe.Schema != 2 {
				t.Errorf("%s: plan records schema %d", name, pl.Recipe.Schema)
			}
			for _, e := range invariantErrors(pl) {
				t.Errorf("%s: %s", name, e)
			}
			if _, err := pl.JSON(); err != nil {
				t.Errorf("%s: JSON: %v", name, err)
			}
			return nil
		}()
		var se *recipe.SrtctlRefusalError
		var ue *recipe.UnsupportedError
		var re *recipe.Error
		switch {
		case err == nil:
			rendered++
		case errors.As(err, &se):
			refusals["fork "+se.Err.Field]++
		case errors.As(err, &ue) && ue.Err.Field != "":
			refusals["gap "+ue.Err.Field]++
		case errors.As(err, &re) && re.Field != "":
			refusals["error "+re.Field]++
		default:
			t.Errorf("%s: refused without naming a field: %v", name, err)
		}
		if err != nil {
			t.Logf("%s: %v", name, err)
		}
	}
	t.Logf("schema-2 sample: %d files, %d configs, %d rendered, refused by field: %v", len(files), len(configs), rendered, refusals)
	if len(files) != v2CorpusFiles || len(configs) != v2CorpusConfigs || rendered != v2CorpusRendered {
		t.Errorf("%d files, %d configs, %d rendered; want %d, %d, %d", len(files), len(configs), rendered, v2CorpusFiles, v2CorpusConfigs, v2CorpusRendered)
	}
	for k, n := range v2CorpusRefusals {
		if refusals[k] != n {
			t.Errorf("refusals %q: %d, want %d", k, refusals[k], n)
		}
	}
	for k, n := range refusals {
		if _, ok := v2CorpusRefusals[k]; !ok {
			t.Errorf("unexpected refusal %q (%d configs)", k, n)
		}
	}
}

// keep profile imported for corpusProfiles' signature.
var _ = profile.SortedKeys[int]
