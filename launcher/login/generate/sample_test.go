package generate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
)

// TestSampleKeys runs generate over keys of today's InferenceX sample: a
// multi-node key (bundle variants) and a single-node AgentX key (the
// point picks its variant) write one bound recipe per point, named by the
// point and variant, placed on the cluster the point names; a key whose
// stored recipe still sets model: is refused naming file:line and the key,
// and nothing is written.
func TestSampleKeys(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	masterPath := filepath.Join(root, "configs", "nvidia-master.yaml")
	for _, key := range []string{"dsr1-fp8-h200-dynamo-sglang", "minimaxm3-fp8-h200-vllm-agentic-mtp"} {
		t.Run(key, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			m, err := RunFiles(context.Background(), FileOptions{Master: masterPath, Out: out, Keys: []string{key}})
			if err != nil {
				t.Fatal(err)
			}
			facts := &Today{Master: masterPath, Root: root}
			pts, err := facts.Points(context.Background(), []string{key})
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Recipes) != len(pts) || len(pts) == 0 {
				t.Fatalf("%d records for %d points", len(m.Recipes), len(pts))
			}
			for i, rec := range m.Recipes {
				want, err := FileName(key, rec.Matrix, rec.Variant)
				if err != nil || rec.File != want {
					t.Errorf("record %d: file %s, want %s (%v)", i, rec.File, want, err)
				}
				var row map[string]any
				if err := json.Unmarshal(rec.Matrix, &row); err != nil {
					t.Fatal(err)
				}
				data, err := os.ReadFile(filepath.Join(out, rec.File))
				if err != nil {
					t.Fatal(err)
				}
				var doc struct {
					Model struct{ Path string } `yaml:"model"`
				}
				if err := yaml.Unmarshal(data, &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Model.Path != "hf:"+row["model"].(string) {
					t.Errorf("%s: model.path %q, want hf:%s", rec.File, doc.Model.Path, row["model"])
				}
				if rec.Cluster == nil {
					t.Errorf("%s: no cluster, the runner label %s names one", rec.File, row["runner"])
				}
			}
		})
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err := RunFiles(context.Background(), FileOptions{Master: masterPath, Out: out, Keys: []string{"dsr1-fp8-b300-sglang"}})
	var bk *fragment.BoundKeyError
	if !errors.As(err, &bk) || !strings.HasSuffix(bk.File, "8k1k.yaml") || bk.Keys[0].Line == 0 || !strings.HasSuffix(bk.Keys[0].Field, "model.path") {
		t.Errorf("want the stored recipe refused for model.path with its line, got %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused key wrote %s", out)
	}
}

// TestSampleKeyByKey runs generate over each key of the sample's NVIDIA
// master config on its own and holds the figures docs/recipes.md states:
// keys that generate whole (and their bound recipes), keys with a missing
// input (those of them with points written all the same, and theirs, and
// those missing a setup_script), keys stopped at a refused point.
func TestSampleKeyByKey(t *testing.T) {
	if testing.Short() {
		t.Skip("149 generate runs")
	}
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	masterPath := filepath.Join(root, "configs", "nvidia-master.yaml")
	data, err := os.ReadFile(masterPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	type tally struct{ whole, wholeRecipes, missing, partial, partialRecipes, setup, refused int }
	var got tally
	top := doc.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		key := top.Content[i].Value
		m, err := RunFiles(context.Background(), FileOptions{Master: masterPath, Out: filepath.Join(t.TempDir(), "out"), Keys: []string{key}})
		var mi *MissingInputsError
		switch {
		case err == nil:
			got.whole++
			got.wholeRecipes += len(m.Recipes)
		case errors.As(err, &mi):
			got.missing++
			if mi.Written > 0 {
				got.partial++
				got.partialRecipes += mi.Written
			}
			for _, x := range mi.Missing {
				if strings.HasPrefix(x.Input, "setup_script ") {
					got.setup++
					break
				}
			}
		default:
			got.refused++
		}
	}
	// docs/recipes.md § InferenceX recipe fragments: "38 of its 149 keys
	// generate whole (372 bound recipes); 76 lack an input (… for 3 keys a
	// setup_script …), 5 of them with points written all the same (19 bound
	// recipes); 35 stop at a refused point".
	want := tally{whole: 38, wholeRecipes: 372, missing: 76, partial: 5, partialRecipes: 19, setup: 3, refused: 35}
	if got != want {
		t.Errorf("key by key: %+v, want %+v (docs/recipes.md)", got, want)
	}
}
