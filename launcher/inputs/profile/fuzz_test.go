package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoad: any profile text loads into a profile with absolute paths or
// gives an error naming the profile — never a panic. Seeded from the
// repository's profiles; `make test` runs it for a bounded time.
func FuzzLoad(f *testing.F) {
	for _, glob := range []string{"../../../profiles/*.toml", "../../planner/testdata/profiles/*.toml", "../../../cmd/slurmbench/testdata/render/*.toml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Add([]byte("[slurm]\nrest_url = \"http://x:1\"\npartition = \"p\"\ngpus_per_node = 4\n[paths]\nruns_dir = \"$HOME/runs\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "p.toml")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := Load(path)
		if err != nil {
			if !strings.Contains(err.Error(), "profile") {
				t.Fatalf("error does not name the profile: %v", err)
			}
			return
		}
		for _, d := range []string{p.Paths.RunsDir, p.Paths.SquashDir} {
			if d != "" && !filepath.IsAbs(d) {
				t.Fatalf("loaded a relative path %q", d)
			}
		}
	})
}
