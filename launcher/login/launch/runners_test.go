package launch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunnersFile: --runners as given; else configs/runners.yaml in the
// workspace, then in its inferencex-e2e/, then beside the master config;
// a candidate that is not a file is skipped.
func TestRunnersFile(t *testing.T) {
	root := t.TempDir()
	touch := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	inWS := touch("ws/configs/runners.yaml")
	inTree := touch("repo/inferencex-e2e/configs/runners.yaml")
	beside := touch("other/configs/runners.yaml")
	master := touch("other/configs/nvidia-master.yaml")
	if err := os.MkdirAll(filepath.Join(root, "dirws", "configs", "runners.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		src  ProfileSource
		want string
	}{
		{"flag wins", ProfileSource{Runners: "x.yaml", Workspace: filepath.Join(root, "ws"), Master: master}, "x.yaml"},
		{"workspace", ProfileSource{Workspace: filepath.Join(root, "ws"), Master: master}, inWS},
		{"checkout root", ProfileSource{Workspace: filepath.Join(root, "repo"), Master: master}, inTree},
		{"beside the master", ProfileSource{Workspace: filepath.Join(root, "empty"), Master: master}, beside},
		{"a directory is no file", ProfileSource{Workspace: filepath.Join(root, "dirws")}, ""},
		{"nothing", ProfileSource{}, ""},
	} {
		if got := tt.src.RunnersFile(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// --runners beside a profile that extends no record is refused.
	prof, err := filepath.Abs(filepath.Join("..", "..", "..", "profiles", "testcluster.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProfileFrom(context.Background(), ProfileSource{Profile: prof, Runners: inWS}); err == nil || !strings.Contains(err.Error(), "extends no runners.yaml record") {
		t.Errorf("--runners with a plain profile: %v", err)
	}
	if _, err := LoadProfileFrom(context.Background(), ProfileSource{Profile: prof, Workspace: filepath.Join(root, "ws")}); err != nil {
		t.Errorf("a found runners.yaml beside a plain profile: %v", err)
	}
	// Without a profile or a runners.yaml the refusal names both ways.
	if _, err := LoadProfileFrom(context.Background(), ProfileSource{}); err == nil || !strings.Contains(err.Error(), "--profile: required") || !strings.Contains(err.Error(), "--runners") {
		t.Errorf("no profile: %v", err)
	}
}
