package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// mockV2 is testdata/render/recipes/mock-2p1d.yaml in schema 2.
const mockV2 = `schema: 2
name: mock-2p1d
model:
  path: mock
  container: mock-image
  precision: fp8
resources:
  gpu_type: mock
  gpus_per_node: 4
frontend:
  type: dynamo
  enable_multiple_frontends: false
engine: mock
roles:
  prefill:
    nodes: 2
    workers: 2
    args:
      served-model-name: mock/DeepSeek-R1
      ttft: 50ms
  decode:
    nodes: 1
    workers: 1
    args:
      served-model-name: mock/DeepSeek-R1
      ttft: 50ms
      itl: 10ms
health_check:
  max_attempts: 60
  interval_seconds: 1
`

// TestRenderSchema2: render reads a schema-2 recipe, says so in the text
// and the JSON, and plans the same processes as the schema-1 recipe it
// spells differently; schema 3 is exit 2 naming the supported schemas.
func TestRenderSchema2(t *testing.T) {
	clearRenderEnv(t)
	dir := t.TempDir()
	prof := filepath.Join(renderData(t), "profile.toml")
	v1Text, err := os.ReadFile(filepath.Join(renderData(t), "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The schema-1 recipe's benchmark block, so both plan the same points.
	bench := string(v1Text[strings.Index(string(v1Text), "benchmark:"):])
	v2 := filepath.Join(dir, "mock-v2.yaml")
	if err := os.WriteFile(v2, []byte(mockV2+bench), 0o644); err != nil {
		t.Fatal(err)
	}
	type plan struct {
		Recipe    struct{ Schema int }
		Processes []struct {
			Name  string
			Nodes []int
			Argv  []string
		}
	}
	render := func(recipe string) (plan, string) {
		out, stderr, code := runRender(t, "--profile", prof, "--recipe", recipe, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", recipe, code, stderr)
		}
		var p plan
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p, out
	}
	p2, _ := render(v2)
	p1, _ := render(filepath.Join(renderData(t), "recipes", "mock-2p1d.yaml"))
	if p2.Recipe.Schema != 2 || p1.Recipe.Schema != 1 {
		t.Errorf("recipe.schema %d and %d, want 2 and 1", p2.Recipe.Schema, p1.Recipe.Schema)
	}
	if len(p1.Processes) == 0 || len(p1.Processes) != len(p2.Processes) {
		t.Fatalf("%d processes from schema 1, %d from schema 2", len(p1.Processes), len(p2.Processes))
	}
	for i := range p1.Processes {
		a, b := p1.Processes[i], p2.Processes[i]
		if a.Name != b.Name || strings.Join(a.Argv, " ") != strings.Join(b.Argv, " ") || !reflect.DeepEqual(a.Nodes, b.Nodes) {
			t.Errorf("process %d: schema 1 %s %q, schema 2 %s %q", i, a.Name, a.Argv, b.Name, b.Argv)
		}
	}
	out, stderr, code := runRender(t, "--profile", prof, "--recipe", v2)
	if code != 0 || !strings.Contains(out, "mock-v2.yaml (schema 2)") {
		t.Errorf("text render (exit %d) does not say schema 2:\n%s%s", code, out, stderr)
	}
	bad := filepath.Join(dir, "s3.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(mockV2, "schema: 2", "schema: 3", 1)+bench), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runRender(t, "--profile", prof, "--recipe", bad)
	if code != exitcode.Config || !strings.Contains(stderr, `s3.yaml:1: schema: "3" is not a recipe schema`) || !strings.Contains(stderr, "supported: 1") {
		t.Errorf("schema 3: exit %d, %s", code, stderr)
	}
}
