package recipe

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
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
	t.Helper()
	return shareddata.YAMLFiles(t, "data", "inferencex", "benchmarks", "multi_node", "srt-slurm-recipes")
}

// SrtctlRefused reads testdata/srtctl-refused.txt: corpus path → the field
// srtctl c88ef731's schema refuses it for.
func srtctlRefused(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "srtctl-refused.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, field, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("srtctl-refused.txt: %q is not '<path> <field>'", line)
		}
		out[path] = field
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCorpusLoads loads every corpus recipe (each variant of an override
// file, and with --allow-duplicate-keys where srtctl's last-wins is needed).
// Each one loads, or is refused by a typed error naming a field; exactly the
// recipes srtctl refuses are refused as srtctl refuses them, by the field
// the checked-in list names.
func TestCorpusLoads(t *testing.T) {
	root := corpusDir(t)
	want := srtctlRefused(t)
	if len(want) != 18 {
		t.Fatalf("srtctl-refused.txt lists %d recipes; srtctl c88ef731 refuses 18 of 469", len(want))
	}
	loaded, dups, variants, beyond := 0, 0, 0, 0
	unsupported := map[string]int{}
	for _, f := range corpusFiles(t) {
		rel, _ := filepath.Rel(root, f)
		opt := Options{}
		_, err := LoadContext(context.Background(), f, opt)
		var de *DuplicateKeyError
		if errors.As(err, &de) {
			dups++
			opt.AllowDuplicateKeys = true
			_, err = LoadContext(context.Background(), f, opt)
		}
		var ve *VariantError
		if errors.As(err, &ve) {
			if len(ve.Variants) < 2 {
				t.Errorf("%s: override file lists %d variants: %v", rel, len(ve.Variants), err)
			}
			for _, v := range ve.Variants {
				opt.Variant = v
				r, verr := LoadContext(context.Background(), f, opt)
				if verr != nil {
					err = verr
					break
				}
				if r.Variant != v || r.Name == "" {
					t.Errorf("%s %s: variant %q name %q", rel, v, r.Variant, r.Name)
				}
				variants++
			}
			if errors.Is(err, ve) {
				err = nil
			}
		}
		var se *SrtctlRefusalError
		var ue *UnsupportedError
		switch {
		case errors.As(err, &se):
			if want[rel] != se.Err.Field {
				t.Errorf("%s: refused as srtctl refuses it (%s), but the list says %q: %v", rel, se.Err.Field, want[rel], err)
			}
			if se.Err.Line == 0 || !strings.Contains(err.Error(), "srtctl c88ef731 refuses it too") {
				t.Errorf("%s: refusal without line or reason: %v", rel, err)
			}
			delete(want, rel)
		case want[rel] != "" && BeyondSrtctl(want[rel]):
			// Planned although srtctl refuses it: loads, or waits on another feature.
			if err != nil && !errors.As(err, &ue) {
				t.Errorf("%s: %v", rel, err)
			}
			beyond++
			delete(want, rel)
		case want[rel] != "":
			t.Errorf("%s: srtctl refuses it for %s, slurmbench: %v", rel, want[rel], err)
			delete(want, rel)
		case err == nil:
			loaded++
		case errors.As(err, &ue):
			if ue.Err.Field == "" {
				t.Errorf("%s: refusal names no field: %v", rel, err)
			}
			unsupported[ue.Err.Field]++
		default:
			t.Errorf("%s: srtctl accepts it; slurmbench fails it without naming an unsupported field: %v", rel, err)
		}
	}
	for rel := range want {
		t.Errorf("%s: listed as refused by srtctl but not in the corpus", rel)
	}
	t.Logf("loaded %d (%d needing --allow-duplicate-keys, %d override variants), %d refused by srtctl but run by slurmbench, unsupported by field %v", loaded, dups, variants, beyond, unsupported)
	if loaded == 0 || dups == 0 || variants == 0 {
		t.Error("the corpus exercised nothing")
	}
}
