package configsdir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestStage: /configs is srt-slurm's configs/ with the recipe
// mirror's copied over it (a mirror file wins), links kept as links and
// modes kept; a second staging replaces the first whole; a workspace with
// neither source stages an empty directory.
func TestStage(t *testing.T) {
	ws := t.TempDir()
	put := func(rel, body string, mode os.FileMode) {
		t.Helper()
		p := filepath.Join(ws, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	srt, mirror := Sources[0], Sources[1]
	put(srt+"/rebuild-deepep.sh", "srt\n", 0o755)
	put(srt+"/vllm-router.sh", "srt's\n", 0o644)
	put(srt+"/patches/fix.sh", "patch\n", 0o644)
	put(mirror+"/vllm-router.sh", "mirror's\n", 0o755)
	put(mirror+"/minimaxm3-mooncake/setup-disagg.sh", "nested\n", 0o644)
	if err := os.Symlink("rebuild-deepep.sh", filepath.Join(ws, srt, "alias.sh")); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(ws, ".slurmbench", "configs")
	if err := Stage(context.Background(), ws, dest); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"rebuild-deepep.sh":                  "srt\n",
		"vllm-router.sh":                     "mirror's\n",
		"patches/fix.sh":                     "patch\n",
		"minimaxm3-mooncake/setup-disagg.sh": "nested\n",
	}
	for rel, body := range want {
		b, err := os.ReadFile(filepath.Join(dest, rel))
		if err != nil || string(b) != body {
			t.Errorf("%s: %q, %v; want %q", rel, b, err, body)
		}
	}
	if st, err := os.Stat(filepath.Join(dest, "vllm-router.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("vllm-router.sh mode: %v, %v; want the mirror's 0755", st, err)
	}
	if link, err := os.Readlink(filepath.Join(dest, "alias.sh")); err != nil || link != "rebuild-deepep.sh" {
		t.Errorf("alias.sh: %q, %v; want the link as it is", link, err)
	}
	if st, err := os.Stat(dest); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("staged directory: %v, %v; want 0755 (the job's user reads it)", st, err)
	}

	// Staged again after the mirror dropped a file: the copy follows.
	if err := os.RemoveAll(filepath.Join(ws, mirror)); err != nil {
		t.Fatal(err)
	}
	if err := Stage(context.Background(), ws, dest); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "vllm-router.sh")); string(b) != "srt's\n" {
		t.Errorf("restaged vllm-router.sh %q, want srt-slurm's own", b)
	}
	if _, err := os.Stat(filepath.Join(dest, "minimaxm3-mooncake")); !os.IsNotExist(err) {
		t.Errorf("restaged: the mirror's old directory is still there (%v)", err)
	}
	left, _ := filepath.Glob(filepath.Join(ws, ".slurmbench", ".configs-*"))
	if len(left) != 0 {
		t.Errorf("temporary trees left: %v", left)
	}

	// Neither source: an empty directory.
	empty := t.TempDir()
	if err := Stage(context.Background(), empty, filepath.Join(empty, "c")); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(filepath.Join(empty, "c")); err != nil || len(ents) != 0 {
		t.Errorf("no sources: %v, %v", ents, err)
	}

	// A cancelled context stops the copy.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Stage(ctx, ws, dest); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}

	// A source that is a file is the workspace's error, named.
	if err := os.RemoveAll(filepath.Join(ws, srt)); err != nil {
		t.Fatal(err)
	}
	put(srt, "", 0o644)
	err := Stage(context.Background(), ws, dest)
	if err == nil || exitcode.Of(err) != exitcode.Config {
		t.Errorf("a file for %s: %v (exit %d), want a config error", srt, err, exitcode.Of(err))
	}
}
