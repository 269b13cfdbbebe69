package stagemodel

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// model lays out a small model directory: weights in a subdirectory, a
// config reached through a symbolic link (as HF caches store them) and a
// linked directory.
func model(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	src := filepath.Join(root, "model")
	write(t, filepath.Join(src, "weights", "a.safetensors"), strings.Repeat("w", 4096))
	write(t, filepath.Join(src, "tokenizer.json"), "{}")
	write(t, filepath.Join(root, "blobs", "config"), `{"layers":2}`)
	write(t, filepath.Join(root, "shared", "extra.bin"), "xyz")
	if err := os.Symlink(filepath.Join(root, "blobs", "config"), filepath.Join(src, "config.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "shared"), filepath.Join(src, "linked")); err != nil {
		t.Fatal(err)
	}
	return src
}

// TestStage: a cold node gets every file as a real file and the manifest
// verified; a warm node whose copy matches is skipped; a partial or stale
// copy is finished; a destination holding a file the source lacks fails
// the step; a missing source fails before anything is written.
func TestStage(t *testing.T) {
	cases := []struct {
		name    string
		prepare func(t *testing.T, src, dest string)
		skipped bool
		err     string
	}{
		{name: "cold node"},
		{name: "warm node", prepare: func(t *testing.T, src, dest string) {
			if _, err := Run(context.Background(), Options{Source: src, Dest: dest, Log: &bytes.Buffer{}}); err != nil {
				t.Fatal(err)
			}
		}, skipped: true},
		{name: "partial copy", prepare: func(t *testing.T, src, dest string) {
			write(t, filepath.Join(dest, "weights", "a.safetensors"), "short")
		}},
		{name: "leftover temporary file", prepare: func(t *testing.T, src, dest string) {
			write(t, filepath.Join(dest, "weights", ".slurmbench-tmp-123"), "half")
		}},
		{name: "stray file", prepare: func(t *testing.T, src, dest string) {
			write(t, filepath.Join(dest, "stray.bin"), "x")
		}, err: "stray.bin is not in the source"},
		{name: "no source", prepare: func(t *testing.T, src, dest string) {
			if err := os.RemoveAll(src); err != nil {
				t.Fatal(err)
			}
		}, err: "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := model(t)
			dest := filepath.Join(t.TempDir(), "local", "model")
			if tc.prepare != nil {
				tc.prepare(t, src, dest)
			}
			var log bytes.Buffer
			res, err := Run(context.Background(), Options{Source: src, Dest: dest, Parallel: 2, Host: "node7", Log: &log})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			if res.Skipped != tc.skipped || res.Files != 4 {
				t.Errorf("result %+v, want skipped %v and 4 files", res, tc.skipped)
			}
			want := map[string]string{"weights/a.safetensors": strings.Repeat("w", 4096), "tokenizer.json": "{}",
				"config.json": `{"layers":2}`, "linked/extra.bin": "xyz"}
			for rel, content := range want {
				p := filepath.Join(dest, rel)
				st, err := os.Lstat(p)
				if err != nil || !st.Mode().IsRegular() {
					t.Errorf("%s: %v, want a regular file", rel, err)
					continue
				}
				if b, _ := os.ReadFile(p); string(b) != content {
					t.Errorf("%s holds %q", rel, b)
				}
			}
			word := "manifest verified"
			if tc.skipped {
				word = "manifest hit"
			}
			if !strings.Contains(log.String(), "[stage:node7] ") || !strings.Contains(log.String(), word) {
				t.Errorf("log lacks %q:\n%s", word, log.String())
			}
		})
	}
}

// TestManifest: relative paths and sizes, sorted, links followed, a
// dangling link left out and a loop refused.
func TestManifest(t *testing.T) {
	src := model(t)
	if err := os.Symlink(filepath.Join(src, "gone"), filepath.Join(src, "dangling")); err != nil {
		t.Fatal(err)
	}
	got, err := Manifest(src)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"config.json", 12}, {"linked/extra.bin", 3}, {"tokenizer.json", 2}, {"weights/a.safetensors", 4096}}
	if len(got) != len(want) {
		t.Fatalf("manifest %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %v, want %v", i, got[i], want[i])
		}
	}
	if err := os.Symlink(src, filepath.Join(src, "weights", "loop")); err != nil {
		t.Fatal(err)
	}
	if _, err := Manifest(src); err == nil || !strings.Contains(err.Error(), "loops back") {
		t.Errorf("loop: %v", err)
	}
}
