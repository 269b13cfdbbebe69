package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemps fails if a temporary file was left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), TempPrefix) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteFileNeverOverwritesSilently(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	if err := WriteFile(path, []byte("one"), Options{}); err != nil {
		t.Fatal(err)
	}
	st1, _ := os.Stat(path)

	// Identical content: fine, and the file is left as it was.
	if err := WriteFile(path, []byte("one"), Options{}); err != nil {
		t.Errorf("identical rewrite: %v", err)
	}
	st2, _ := os.Stat(path)
	if !os.SameFile(st1, st2) {
		t.Error("identical rewrite replaced the file")
	}

	// Different content: an error naming the path, the old content kept.
	err := WriteFile(path, []byte("two"), Options{})
	var ee *ExistsError
	if !errors.As(err, &ee) || ee.Path != path || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("different rewrite: error = %v, want *ExistsError for %s", err, path)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the path", err)
	}
	if got := read(t, path); got != "one" {
		t.Errorf("content = %q after a refused write", got)
	}
	// Same size, different bytes: still refused.
	if err := WriteFile(path, []byte("onf"), Options{}); !errors.As(err, &ee) {
		t.Errorf("same-size different content: %v", err)
	}

	// Explicit overwrite replaces.
	if err := WriteFile(path, []byte("two"), Options{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, path); got != "two" {
		t.Errorf("content = %q after overwrite", got)
	}
	noTemps(t, dir)
}

func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "half.json")
	err := Write(path, Options{}, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return errors.New("disk on fire")
	})
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("error = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a failed write left %s: %v", path, err)
	}
	noTemps(t, dir)
}

func TestWriteRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, []byte("x"), Options{Overwrite: true}); err == nil {
		t.Error("writing over a directory succeeded")
	}
}

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.WriteFile(src, []byte(strings.Repeat("x", 200<<10)), 0o600)
	dst := filepath.Join(dir, "dst")
	if err := CopyFile(src, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	if read(t, dst) != read(t, src) {
		t.Error("copy differs")
	}
	if st, _ := os.Stat(dst); st.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", st.Mode().Perm())
	}
	if err := CopyFile(src, dst, Options{}); err != nil {
		t.Errorf("identical copy: %v", err)
	}
	os.WriteFile(src, []byte("changed"), 0o600)
	if err := CopyFile(src, dst, Options{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("copy over a different file: %v", err)
	}
	if err := CopyFile(dir, filepath.Join(dir, "d2"), Options{}); err == nil {
		t.Error("copying a directory succeeded")
	}
	noTemps(t, dir)
}

// TestWriteNameAtNameMax: the temporary name does not grow with the final
// one, so a result name bounded to NAME_MAX (255 bytes) can still be written
// and replaced; a ".<name>.tmp-*" temporary could not.
func TestWriteNameAtNameMax(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, strings.Repeat("n", 250)+".json")
	for _, content := range []string{"first", "second"} {
		if err := WriteFile(path, []byte(content), Options{Overwrite: true}); err != nil {
			t.Fatalf("writing a 255-byte name: %v", err)
		}
		if got := read(t, path); got != content {
			t.Errorf("content %q, want %q", got, content)
		}
	}
	noTemps(t, dir)
}
