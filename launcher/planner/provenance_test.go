package planner

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// TestRecipeProvenance: the plan records how its recipe was read — a key
// kept last, the requested but uncollected telemetry — and render and the
// results manifest show it.
func TestRecipeProvenance(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("testdata", "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(string(text), "  osl: ", "  osl: 64\n  osl: ", 1) +
		"telemetry:\n  enabled: true\n  dcgm_exporter: {container_image: dcgm-exporter, port: 9401}\n"
	path := filepath.Join(t.TempDir(), "r.yaml")
	r, err := recipe.ParseWith(path, []byte(src), recipe.Options{AllowDuplicateKeys: true})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := Build(inputs(loadProfile(t, filepath.Join("testdata", "profiles", "mock4.toml")), r))
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Recipe.Warnings) != 1 || pl.Recipe.Telemetry == nil || pl.Recipe.Telemetry.ExporterPort != 9401 {
		t.Errorf("recipe source %+v", pl.Recipe)
	}
	var out bytes.Buffer
	if err := pl.WriteHuman(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"warning  " + path, "benchmark.osl: set twice", "telemetry dcgm-power collected (required: false, every 1s, 12 GPUs on nodes [0 1 2], exporter dcgm-exporter port 9401)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("render lacks %q:\n%s", want, out.String())
		}
	}
	if extra := pl.Recipe.ManifestExtra(); !strings.Contains(extra["recipe_warnings"], "benchmark.osl") || extra["recipe_variant"] != "" {
		t.Errorf("manifest extra %v", extra)
	}
	edited := plan.Source{Overrides: []string{"--set health_check.max_attempts=720", "--unset benchmark.req_rate"}}
	if got := edited.ManifestExtra()["recipe_overrides"]; got != "--set health_check.max_attempts=720\n--unset benchmark.req_rate" {
		t.Errorf("manifest recipe_overrides %q", got)
	}
	if (plan.Source{}).ManifestExtra() != nil {
		t.Error("a plain recipe adds to the manifest")
	}
}
