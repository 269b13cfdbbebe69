package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// overrideRecipe turns the mock recipe into an srtctl override file: the
// recipe as base:, one override_ and one zip_override_ section.
func overrideRecipe(t *testing.T, dir string) string {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(renderData(t), "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("base:\n")
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		if !strings.HasPrefix(line, "#") {
			b.WriteString("  " + line + "\n")
		}
	}
	b.WriteString("override_fast:\n  benchmark:\n    concurrencies: \"4\"\n")
	b.WriteString("zip_override_osl:\n  name: [osl-a, osl-b]\n  benchmark:\n    osl: [64, 256]\n")
	path := filepath.Join(dir, "ov.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenderOverrideVariant: an override file plans the config --variant
// (or path:SELECTOR) names, says which section set what, and without a
// selector lists the configs it expands to.
func TestRenderOverrideVariant(t *testing.T) {
	clearRenderEnv(t)
	dir := t.TempDir()
	ov := overrideRecipe(t, dir)
	prof := filepath.Join(renderData(t), "profile.toml")
	for _, args := range [][]string{
		{"--recipe", ov, "--variant", "zip_override_osl[1]"},
		{"--recipe", ov + ":zip_override_osl[1]"},
	} {
		out, stderr, code := runRender(t, append([]string{"--profile", prof, "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		var pl struct {
			Name   string
			Recipe struct {
				Variant string
				Origins map[string]string
			}
			Benchmark struct{ OSL int }
		}
		if err := json.Unmarshal([]byte(out), &pl); err != nil {
			t.Fatal(err)
		}
		if pl.Name != "osl-b" || pl.Benchmark.OSL != 256 || pl.Recipe.Variant != "zip_override_osl[1]" ||
			pl.Recipe.Origins["benchmark.osl"] != "zip_override_osl[1]" {
			t.Errorf("%v: plan %+v", args, pl)
		}
	}
	out, stderr, code := runRender(t, "--profile", prof, "--recipe", ov, "--variant", "override_fast")
	if code != 0 || !strings.Contains(out, "variant  override_fast of "+ov) || !strings.Contains(out, "benchmark.concurrencies ← override_fast") {
		t.Errorf("human render of a variant: exit %d %s\n%s", code, stderr, out)
	}
	_, stderr, code = runRender(t, "--profile", prof, "--recipe", ov)
	if code != exitcode.Config || !strings.Contains(stderr, "expands to 3 configs") || !strings.Contains(stderr, "override_fast, zip_override_osl[0], zip_override_osl[1]") {
		t.Errorf("no variant: exit %d, stderr %q", code, stderr)
	}
}

// TestRenderAllowDuplicateKeys: a key set twice with different values is
// refused, naming both lines and values; --allow-duplicate-keys keeps the
// last as srtctl does, warns on stderr and records it in the plan.
func TestRenderAllowDuplicateKeys(t *testing.T) {
	clearRenderEnv(t)
	text, err := os.ReadFile(filepath.Join(renderData(t), "recipes", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "dup.yaml")
	dup := strings.Replace(string(text), "  osl: 128\n", "  osl: 128\n  osl: 64\n", 1)
	if err := os.WriteFile(path, []byte(dup), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(renderData(t), "profile.toml")
	_, stderr, code := runRender(t, "--profile", prof, "--recipe", path)
	if code != exitcode.Config || !strings.Contains(stderr, `benchmark.osl: set twice with different values: "128" (line 34) then "64" (line 35)`) {
		t.Errorf("conflict: exit %d, stderr %q", code, stderr)
	}
	out, stderr, code := runRender(t, "--profile", prof, "--recipe", path, "--allow-duplicate-keys", "--json")
	if code != 0 || !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, "the last wins as in srtctl") {
		t.Fatalf("--allow-duplicate-keys: exit %d, stderr %q", code, stderr)
	}
	var pl struct {
		Recipe    struct{ Warnings []string }
		Benchmark struct{ OSL int }
	}
	if err := json.Unmarshal([]byte(out), &pl); err != nil {
		t.Fatal(err)
	}
	if pl.Benchmark.OSL != 64 || len(pl.Recipe.Warnings) != 1 || !strings.Contains(pl.Recipe.Warnings[0], "benchmark.osl") {
		t.Errorf("plan: %+v", pl)
	}
}
