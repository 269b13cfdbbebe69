package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadHints (issue #25 row 12): an unknown key names its line and the
// key meant; a recipe given as the profile says the flags look swapped.
func TestLoadHints(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"p.toml", "[slurm]\nrest_url = \"http://h:6820\"\nparition = \"debug\"\n", []string{"line 3: unknown key slurm.parition; did you mean slurm.partition?"}},
		{"q.toml", "[slurm]\nrest_url = \"http://h:6820\"\n\n[pahts]\nruns_dir = \"r\"\n", []string{"line 4: unknown key pahts; did you mean paths?"}},
		{"d.toml", "slurm.gpus_per_nod = 4\n", []string{"line 1: unknown key slurm.gpus_per_nod; did you mean slurm.gpus_per_node?"}},
		{"z.toml", "[slurm]\nzzzzzzzz = 1\n", []string{"line 2: unknown key slurm.zzzzzzzz"}},
		{"r.yaml", "name: mock\nmodel:\n  path: m\nresources:\n  gpu_type: h100\n", []string{"this looks like a recipe (YAML), not a cluster profile (TOML): did you swap --profile (-p) and --recipe (-r)?"}},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, []byte(tt.text), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		for _, w := range tt.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q", tt.name, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "zzzz") && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: a suggestion for a key close to nothing: %v", tt.name, err)
		}
	}
}
