package results

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestBundleDirNeverFollowsASwappedSymlink: a log swapped for a symlink
// (and back) while runs are bundled never puts the link target's bytes
// into a bundle. BundleDir checked with lstat and then opened by path, so
// a symlink swapped in between was followed (3 of 400 bundles carried the
// target's bytes).
func TestBundleDirNeverFollowsASwappedSymlink(t *testing.T) {
	root := t.TempDir()
	src := filepath.Join(root, "run")
	secret := filepath.Join(root, "secret")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(src, "log")
	plain, link := filepath.Join(root, "plain"), filepath.Join(root, "link")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.WriteFile(plain, []byte("mine!!"), 0o644)
			_ = os.Rename(plain, log)
			_ = os.Symlink(secret, link)
			_ = os.Rename(link, log)
		}
	})
	leaked, bundled := 0, 0
	for i := range 400 {
		dst := filepath.Join(root, "b.tar.gz")
		if err := BundleDir(src, dst, BundleOptions{Overwrite: true}); err != nil {
			continue // refusing a swapped file is fine; archiving its target is not
		}
		bundled++
		if bundleHolds(t, dst, "SECRET") {
			leaked++
			t.Logf("bundle %d carries the symlink target's bytes", i)
		}
	}
	close(stop)
	wg.Wait()
	if bundled == 0 {
		t.Error("no bundle was written: the race refused every one")
	}
	if leaked > 0 {
		t.Errorf("%d of %d bundles carried the target of a swapped-in symlink", leaked, bundled)
	}
}

func bundleHolds(t *testing.T, path, want string) bool {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		if _, err := tr.Next(); err != nil {
			return false
		}
		b, _ := io.ReadAll(tr)
		if strings.Contains(string(b), want) {
			return true
		}
	}
}
