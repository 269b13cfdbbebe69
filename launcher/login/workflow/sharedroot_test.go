package workflow

import (
	"path/filepath"
	"testing"
)

// TestExcluded checks the workspace copy's exclusions as rsync matches
// them: by name at any depth, "x/" patterns only for directories.
func TestExcluded(t *testing.T) {
	for _, tc := range []struct {
		rel   string
		dir   bool
		want  bool
		cause string
	}{
		{".git", true, true, ".git/"},
		{".git", false, false, "a file named .git is no directory"},
		{"sub/.git", true, true, "at any depth"},
		{"utils/srt-slurm", true, true, "srt-slurm*/"},
		{"benchmarks/multi_node/srt-slurm-recipes", true, true, "srt-slurm*/ (the mirror)"},
		{"benchmarks/multi_node/srt-slurm-recipes.md", false, false, "a file"},
		{"outputs", true, true, "outputs/"},
		{"a/LOGS", true, true, "LOGS/"},
		{"LOGS", false, false, "a file"},
		{"images/x.sqsh", false, true, "*.sqsh"},
		{"images/x.sqsh.lock", false, false, "another suffix"},
		{".slurmbench", true, true, "login-side files"},
		{"slurmbench-runs", true, true, "run directories"},
		{"benchmarks/multi_node/srt_eval.sh", false, false, "kept"},
		{"configs", true, false, "kept"},
	} {
		if got := excluded(tc.rel, tc.dir); got != tc.want {
			t.Errorf("excluded(%q, dir %v) = %v, want %v (%s)", tc.rel, tc.dir, got, tc.want, tc.cause)
		}
	}
	for runner, want := range map[string]string{
		"gb200-nv_03": "infmax-workspace-gb200-nv_03",
		"a/b":         "infmax-workspace-a_b",
		"..":          "infmax-workspace-_..",
	} {
		if got := filepath.Base(SharedWorkspaceDir("/shared", runner)); got != want {
			t.Errorf("SharedWorkspaceDir(%q) ends %q, want %q", runner, got, want)
		}
	}
}
