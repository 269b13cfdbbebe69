package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRenderNetworkInterface: the profile's slurm.network_interface reaches
// the plan (slurm.network_interface) and the human view says the job asks
// each node on it; without it neither says anything.
func TestRenderNetworkInterface(t *testing.T) {
	clearRenderEnv(t)
	data := renderData(t)
	text, err := os.ReadFile(filepath.Join(data, "profile.toml"))
	if err != nil {
		t.Fatal(err)
	}
	abs := func(rel string) string { return `"` + filepath.Join(data, rel) + `"` }
	base := strings.NewReplacer(`"runs"`, abs("runs"), `"squash"`, abs("squash"), `"recipes"`, abs("recipes"), `"models/mock"`, abs("models/mock"),
		`"cache:`, `"`+filepath.Join(data, "cache")+`:`).Replace(string(text))
	recipe := filepath.Join(data, "recipes", "mock-2p1d.yaml")
	for _, tc := range []struct{ name, line, want string }{
		{name: "named", line: `network_interface = "eno0,eth1"`, want: "eno0,eth1"},
		{name: "unset", line: "", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof := filepath.Join(t.TempDir(), "p.toml")
			if err := os.WriteFile(prof, []byte(strings.Replace(base, "[slurm]\n", "[slurm]\n"+tc.line+"\n", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, stderr, code := runRender(t, "--json", "-p", prof, "-r", recipe)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var v struct {
				Slurm struct {
					NetworkInterface *string `json:"network_interface"`
				} `json:"slurm"`
			}
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatal(err)
			}
			switch got := v.Slurm.NetworkInterface; {
			case tc.want == "" && got != nil:
				t.Errorf("slurm.network_interface %q in the plan, want none", *got)
			case tc.want != "" && (got == nil || *got != tc.want):
				t.Errorf("slurm.network_interface %v, want %q", got, tc.want)
			}
			human, stderr, code := runRender(t, "-p", prof, "-r", recipe)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			line := "  network  each node's address on " + tc.want + ", asked of the node"
			if has := strings.Contains(human, "  network  "); has != (tc.want != "") || tc.want != "" && !strings.Contains(human, line) {
				t.Errorf("human view, want %q (%v):\n%s", line, tc.want != "", human)
			}
		})
	}
}
