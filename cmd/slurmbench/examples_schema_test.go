package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
)

// TestExampleSchemasPlanAlike: the demo recipe is schema 2
// (examples/mock-2p1d.yaml) and its schema-1 spelling is kept
// (examples/mock-2p1d-v1.yaml); render reads each as the schema it is, and
// the two plan the same run, byte for byte but for the recipe source.
func TestExampleSchemasPlanAlike(t *testing.T) {
	clearRenderEnv(t)
	root := repoRoot(t)
	plans := map[int]map[string]any{}
	for _, f := range []struct {
		file   string
		schema int
	}{{"mock-2p1d.yaml", 2}, {"mock-2p1d-v1.yaml", 1}} {
		out, errOut, code := runRender(t, "-p", filepath.Join(root, "profiles", "testcluster.toml"),
			"-r", filepath.Join(root, "examples", f.file), "--json")
		if code != 0 {
			t.Fatalf("render %s: exit %d\n%s", f.file, code, errOut)
		}
		var pl map[string]any
		if err := json.Unmarshal([]byte(out), &pl); err != nil {
			t.Fatal(err)
		}
		src, _ := pl["recipe"].(map[string]any)
		if got, _ := src["schema"].(float64); int(got) != f.schema {
			t.Errorf("%s read as schema %v, want %d", f.file, src["schema"], f.schema)
		}
		delete(pl, "recipe")
		plans[f.schema] = pl
	}
	if !reflect.DeepEqual(plans[1], plans[2]) {
		a, _ := json.MarshalIndent(plans[1], "", " ")
		b, _ := json.MarshalIndent(plans[2], "", " ")
		t.Errorf("the schema-1 and schema-2 examples plan differently: %s", firstDiffLine(a, b))
	}
}
