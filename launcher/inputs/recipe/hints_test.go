package recipe

import (
	"strings"
	"testing"
)

// TestParseHints (issue #25 row 12): a tab in the indentation says tabs
// are not allowed, with its line; a profile given as the recipe says the
// flags look swapped.
func TestParseHints(t *testing.T) {
	for _, tt := range []struct {
		path, text string
		want       string
	}{
		{"r.yaml", "name: x\nmodel:\n\tpath: y\n", "r.yaml:3: tabs are not allowed in YAML: indent with spaces"},
		{"r.yaml", "name: x\nmodel:\n  path: y\n  \tprecision: fp8\n", "tabs are not allowed in YAML"},
		{"p.toml", "[slurm]\nrest_url = \"http://h:6820\"\npartition = \"debug\"\n", "this looks like a cluster profile (TOML), not a recipe (YAML): did you swap --profile (-p) and --recipe (-r)?"},
		{"p.txt", "# profile\n[slurm]\nrest_url = \"http://h:6820\"\n\n[paths]\nruns_dir = \"runs\"\n", "did you swap --profile (-p) and --recipe (-r)?"},
	} {
		_, err := Parse(tt.path, []byte(tt.text))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s, %q) = %v, want %q", tt.path, tt.text, err, tt.want)
		}
	}
}
