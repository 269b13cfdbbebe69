package matrix

import (
	"os"
	"path/filepath"
	"testing"
)

// A today's master's points get a workspace (GITHUB_WORKSPACE) so a
// runners.yaml record without a shared run root can plan: --workspace,
// else the InferenceX root; an older layout's profile names its own.
func TestWorkspaceDefault(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, "configs")
	if err := os.MkdirAll(cfg, 0o755); err != nil {
		t.Fatal(err)
	}
	masterPath := filepath.Join(cfg, "nvidia-master.yaml")
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"no runners.yaml", Options{Master: masterPath}, ""},
		{"a profile", Options{Master: masterPath, Profile: "p.toml", Runners: "r.yaml"}, ""},
		{"flag", Options{Master: masterPath, Workspace: "/ws"}, "/ws"},
		{"root flag", Options{Master: masterPath, Runners: "r.yaml", InferenceXRoot: "/ix"}, "/ix"},
		{"runners named", Options{Master: masterPath, Runners: "r.yaml"}, DefaultRoot(masterPath)},
	} {
		if got := c.o.workspace(); got != c.want {
			t.Errorf("%s: workspace %q, want %q", c.name, got, c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(cfg, "runners.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := (Options{Master: masterPath}).workspace(); got != DefaultRoot(masterPath) {
		t.Errorf("runners.yaml beside the master: workspace %q, want %q", got, DefaultRoot(masterPath))
	}
}
