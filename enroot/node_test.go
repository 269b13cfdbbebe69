package enroot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/enroot/enroottest"
)

// TestNodeImport: each node imports into its own node-local directory
// (created when missing) under its own lock; concurrent steps on one node
// import once; a squash the node already holds is reused; a broken one is
// imported again; a plan whose squash path the import would not produce,
// a relative directory and a local squash file are refused.
func TestNodeImport(t *testing.T) {
	const image = "nvcr.io#nvidia/sglang:0.5.1"
	ref, err := ParseRef(image)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		nodes   int // node-local directories
		perNode int // concurrent steps on each node
		prior   func(t *testing.T, dir string)
		image   string
		squash  func(dir string) string
		wantErr string
		// wantImports is enroot imports in all; wantAction each result's.
		wantImports int
		wantAction  Action
	}{
		{name: "two nodes import one each", nodes: 2, perNode: 1, wantImports: 2, wantAction: ActionImported},
		{name: "three steps on one node import once", nodes: 1, perNode: 3, wantImports: 1},
		{name: "a node that holds the image reuses it", nodes: 1, perNode: 1, wantImports: 0, wantAction: ActionValidated,
			prior: func(t *testing.T, dir string) {
				if err := enroottest.WriteSquash(filepath.Join(dir, ref.SquashName()), 1<<16); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a broken squash is imported again", nodes: 1, perNode: 1, wantImports: 1, wantAction: ActionImported,
			prior: func(t *testing.T, dir string) {
				if err := writeFileForTest(filepath.Join(dir, ref.SquashName()), "not a squashfs"); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "the plan names another file", nodes: 1, perNode: 1, squash: func(dir string) string { return filepath.Join(dir, "other.sqsh") },
			wantErr: "the plan starts containers from"},
		{name: "a local squash file", nodes: 1, perNode: 1, image: "/srv/x.sqsh", wantErr: "nothing to import"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "enroot.log")
			img := image
			if tc.image != "" {
				img = tc.image
			}
			var mu sync.Mutex
			var out bytes.Buffer
			var wg sync.WaitGroup
			var errs []error
			var results []Result
			for node := range tc.nodes {
				// A node-local root whose cache directory does not exist yet.
				dir := filepath.Join(t.TempDir(), "squash")
				if tc.prior != nil {
					if err := mkdirForTest(dir); err != nil {
						t.Fatal(err)
					}
					tc.prior(t, dir)
				}
				squash := filepath.Join(dir, ref.SquashName())
				if tc.squash != nil {
					squash = tc.squash(dir)
				}
				for range tc.perNode {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var w bytes.Buffer
						n := NodeImport{SquashDir: dir, Squash: squash, Enroot: enroottest.StandinPath(t), LockTimeout: time.Minute,
							Host: fmt.Sprintf("node%d", node), Log: &w,
							Runner: envRunner{env: []string{"ENROOT_STANDIN_LOG=" + log, "ENROOT_STANDIN_IMPORT_DELAY=0.2"}}}
						res, err := n.Run(context.Background(), img)
						mu.Lock()
						defer mu.Unlock()
						out.Write(w.Bytes())
						errs = append(errs, err)
						results = append(results, res)
					}()
				}
			}
			wg.Wait()
			for _, err := range errs {
				switch {
				case tc.wantErr == "" && err != nil:
					t.Fatal(err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
			}
			if tc.wantErr != "" {
				return
			}
			calls, err := enroottest.ReadCalls(log)
			if err != nil {
				t.Fatal(err)
			}
			if got := enroottest.Count(calls, "import"); got != tc.wantImports {
				t.Errorf("enroot import ran %d times, want %d\n%s", got, tc.wantImports, out.String())
			}
			for _, r := range results {
				if tc.wantAction != "" && r.Action != tc.wantAction {
					t.Errorf("action %s, want %s", r.Action, tc.wantAction)
				}
				if _, err := ValidateSquash(r.Path); err != nil {
					t.Errorf("%s: %v", r.Path, err)
				}
			}
			for node := range tc.nodes {
				if !strings.Contains(out.String(), fmt.Sprintf("node%d: ", node)) {
					t.Errorf("no line names node%d:\n%s", node, out.String())
				}
			}
		})
	}
}

func writeFileForTest(path, text string) error { return os.WriteFile(path, []byte(text), 0o644) }

func mkdirForTest(dir string) error { return os.MkdirAll(dir, 0o755) }

// TestNodeImportLockFile: a node import takes the lock file it is given
// (a squash policy's locks directory, created when missing) instead of
// the one beside the squash: held elsewhere, it makes the import wait and
// give up after LockTimeout naming that file, while the default lock is
// free; free, the import runs and leaves the lock there. A relative lock
// file is refused.
func TestNodeImportLockFile(t *testing.T) {
	const image = "nvcr.io#nvidia/sglang:0.5.1"
	ref, err := ParseRef(image)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		lockFile    func(dir string) string
		hold        bool
		wantErr     string
		wantImports int
	}{
		{name: "held elsewhere: the import waits and gives up", hold: true, wantErr: "300ms",
			lockFile: func(dir string) string { return filepath.Join(dir, ".locks", "nvcr.io_nvidia_sglang_0.5.1.lock") }},
		{name: "free: imported, the lock in its new directory", wantImports: 1,
			lockFile: func(dir string) string { return filepath.Join(dir, ".locks", "nvcr.io_nvidia_sglang_0.5.1.lock") }},
		{name: "relative", wantErr: "is not absolute",
			lockFile: func(string) string { return filepath.Join(".locks", "x.lock") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "squash")
			lock := tc.lockFile(dir)
			if tc.hold {
				if err := mkdirForTest(filepath.Dir(lock)); err != nil {
					t.Fatal(err)
				}
				holdLock(t, lock)
			}
			log := filepath.Join(t.TempDir(), "enroot.log")
			n := NodeImport{SquashDir: dir, Squash: filepath.Join(dir, ref.SquashName()), Enroot: enroottest.StandinPath(t),
				LockTimeout: 300 * time.Millisecond, LockFile: lock, Host: "node0", Log: &bytes.Buffer{},
				Runner: envRunner{env: []string{"ENROOT_STANDIN_LOG=" + log}}}
			_, err := n.Run(context.Background(), image)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if tc.hold && (!errors.Is(err, ErrLockTimeout) || !strings.Contains(err.Error(), lock)) {
					t.Errorf("err %v: want the lock timeout naming %s", err, lock)
				}
			case err != nil:
				t.Fatal(err)
			default:
				if _, err := os.Stat(lock); err != nil {
					t.Errorf("the lock file: %v", err)
				}
				if _, err := os.Stat(n.Squash + ".lock"); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("a lock beside the squash too: %v", err)
				}
			}
			calls, _ := enroottest.ReadCalls(log)
			if got := enroottest.Count(calls, "import"); got != tc.wantImports {
				t.Errorf("enroot import ran %d times, want %d", got, tc.wantImports)
			}
		})
	}
}
