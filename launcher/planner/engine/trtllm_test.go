package engine

import (
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"go.yaml.in/yaml/v3"
)

// TestTRTLLMConfigYAML: the engine YAML reads back (as YAML 1.1 would) to
// the recipe's values and types, keys sorted, list items at their key's
// indent as PyYAML writes them.
func TestTRTLLMConfigYAML(t *testing.T) {
	var cfg recipe.EngineConfig
	src := "b: 0.9\na: {x: 1, y: [1, 2], z: '16', w: 1e-05, v: [{k: on}]}\nc: null\nd: true\ne: DEFAULT\nf: 1e-05\ng: 'yes'\nh: 2.0\n"
	if err := yaml.Unmarshal([]byte(src), &cfg); err != nil {
		t.Fatal(err)
	}
	got, err := trtllmConfigYAML(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := `a:
  v:
  - k: "on"
  w: 1.0e-05
  x: 1
  "y":
  - 1
  - 2
  z: "16"
b: 0.9
c: null
d: true
e: DEFAULT
f: 1.0e-05
g: "yes"
h: 2.0
`
	if got != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", got, want)
	}
	var back map[string]any
	if err := yaml.Unmarshal([]byte(got), &back); err != nil {
		t.Fatal(err)
	}
	a := back["a"].(map[string]any)
	if a["z"] != "16" || a["x"] != 1 || a["w"] != 1e-05 || back["h"] != 2.0 || back["c"] != nil || back["g"] != "yes" {
		t.Errorf("read back %#v", back)
	}
	if empty, err := trtllmConfigYAML(nil); err != nil || empty != "{}\n" {
		t.Errorf("empty config %q, %v", empty, err)
	}
}
