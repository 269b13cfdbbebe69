package runner

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

func TestImageDigestPrefersTheImportedDigest(t *testing.T) {
	const (
		imported = "sha256:1111111111111111111111111111111111111111111111111111111111111111"
		pinned   = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
	)
	dir := t.TempDir()
	withSidecar := filepath.Join(dir, "a.sqsh")
	if err := os.WriteFile(withSidecar+".json", []byte(`{"ref":"r","digest":"`+imported+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	noDigest := filepath.Join(dir, "b.sqsh")
	if err := os.WriteFile(noDigest+".json", []byte(`{"ref":"r"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, ref, squash, want string
	}{
		{"sidecar names the imported digest", "reg.example:5000/img:tag", withSidecar, imported},
		{"sidecar wins over the pin", "reg.example:5000/img:tag@" + pinned, withSidecar, imported},
		{"no digest in the sidecar: the pin", "reg.example:5000/img:tag@" + pinned, noDigest, pinned},
		{"no sidecar: the pin", "reg.example:5000/img@" + pinned, filepath.Join(dir, "none.sqsh"), pinned},
		{"tag only, no sidecar", "reg.example:5000/img:tag", filepath.Join(dir, "none.sqsh"), ""},
		{"local squash", "", filepath.Join(dir, "none.sqsh"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &plan.Plan{Image: plan.Image{Ref: tc.ref, Squash: tc.squash}}
			if got := ImageDigest(pl); got != tc.want {
				t.Errorf("ImageDigest = %q, want %q", got, tc.want)
			}
		})
	}
}
