package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestRenderSetUnset: --set/--unset change the plan, are applied in the
// order given, and the plan records them; a path the schema lacks or a
// value of the wrong type is exit 2 naming the flag (and the nearest key).
func TestRenderSetUnset(t *testing.T) {
	clearRenderEnv(t)
	root := repoRoot(t)
	args := []string{"render", "-p", filepath.Join(root, "profiles", "testcluster.toml"), "-r", filepath.Join(root, "examples", "mock-2p1d.yaml")}
	out, errOut, code := runCLI(t, append(args, "--json", "--set", "benchmark.concurrencies=[4, 16]", "--unset", "health_check", "--set", "health_check.max_attempts=7")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var pl struct {
		Recipe struct{ Overrides []string } `json:"recipe"`
		Health struct {
			MaxAttempts int `json:"max_attempts"`
		} `json:"health"`
	}
	if err := json.Unmarshal([]byte(out), &pl); err != nil {
		t.Fatal(err)
	}
	if want := "--set benchmark.concurrencies=[4, 16]|--unset health_check|--set health_check.max_attempts=7"; strings.Join(pl.Recipe.Overrides, "|") != want {
		t.Errorf("recipe.overrides = %q, want %q", pl.Recipe.Overrides, want)
	}
	if pl.Health.MaxAttempts != 7 {
		t.Errorf("health.max_attempts = %d, want 7 (--unset then --set, in order)", pl.Health.MaxAttempts)
	}
	if !strings.Contains(out, "results_concurrency_16_") || strings.Contains(out, "results_concurrency_32_") {
		t.Errorf("the plan does not run the --set concurrencies")
	}
	human, _, code := runCLI(t, append(args, "--set", "benchmark.concurrencies=[4, 16]")...)
	if code != 0 || !strings.Contains(human, "override --set benchmark.concurrencies=[4, 16]") {
		t.Errorf("the human plan does not show the override (exit %d)", code)
	}
	for _, tc := range []struct{ flag, value, want string }{
		{"--set", "health_check.max_attemps=5", "did you mean health_check.max_attempts?"},
		{"--unset", "resource.prefill_nodes", "did you mean resources.prefill_nodes?"},
		{"--set", "resources.prefill_nodes=two", "wrong type"},
		{"--set", "nothing", "want KEY=VALUE"},
	} {
		_, errOut, code := runCLI(t, append(args, tc.flag, tc.value)...)
		if code != exitcode.Config || !strings.Contains(errOut, tc.flag+" "+tc.value) || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s %s: exit %d, %q; want exit 2 naming the flag and %q", tc.flag, tc.value, code, errOut, tc.want)
		}
	}
}
