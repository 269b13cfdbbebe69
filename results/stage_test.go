package results

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStageRefusesSymlinks: a symbolic link among the run's files is not
// followed out of the run directory (a 0600 file elsewhere was staged
// 0644), and nothing is written through a link already in the stage
// directory; either is refused naming it, and nothing is staged.
func TestStageRefusesSymlinks(t *testing.T) {
	logs := runDir(t, map[int]map[string]any{8: nil}, p4p1d)
	coll, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: []int{8}})
	if err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("private"), 0o600); err != nil {
		t.Fatal(err)
	}
	evalDir := t.TempDir()
	link := filepath.Join(evalDir, "eval_results.json")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "ws")
	_, err = Stage(coll.Points, StageOptions{ResultFilename: "RF", Dest: dest, Extra: []string{link}})
	if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("symlinked artifact: %v, want a refusal naming %s", err, link)
	}
	if ents, _ := os.ReadDir(dest); len(ents) != 0 {
		t.Errorf("staged %d files after a refusal, want none", len(ents))
	}

	// A link at a staged name in the stage dir: not written through.
	name, _ := StagedName("RF", coll.Points[0].Config, coll.Points[0].Point)
	outside := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(outside, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dest, name)); err != nil {
		t.Fatal(err)
	}
	for _, overwrite := range []bool{false, true} {
		if _, err := Stage(coll.Points, StageOptions{ResultFilename: "RF", Dest: dest, Overwrite: overwrite}); err == nil {
			t.Errorf("overwrite=%v: staged through a symlink in the stage dir", overwrite)
		}
		if b, _ := os.ReadFile(outside); string(b) != "keep" {
			t.Fatalf("the link's target was written: %q", b)
		}
	}
}

// TestStageChecksEveryFileFirst: a refused overwrite of one file stages
// none (the first point used to be staged before the second was refused).
func TestStageChecksEveryFileFirst(t *testing.T) {
	logs := runDir(t, map[int]map[string]any{8: nil, 16: nil}, p4p1d)
	coll, err := Collect(CollectOptions{ResultsDir: logs, Concurrencies: []int{8, 16}})
	if err != nil {
		t.Fatal(err)
	}
	dest := t.TempDir()
	second, _ := StagedName("RF", coll.Points[1].Config, coll.Points[1].Point)
	writeFile(t, filepath.Join(dest, second), "{}")
	if _, err := Stage(coll.Points, StageOptions{ResultFilename: "RF", Dest: dest}); err == nil || !strings.Contains(err.Error(), second) {
		t.Fatalf("err = %v, want a refusal naming %s", err, second)
	}
	first, _ := StagedName("RF", coll.Points[0].Config, coll.Points[0].Point)
	if _, err := os.Lstat(filepath.Join(dest, first)); err == nil {
		t.Error("the first point was staged before the refusal")
	}
}

// TestCopyTreeSymlinks: a link whose target leaves the copied tree is
// left out and returned as refused (it would publish its target); a link
// inside it is recreated; nothing is written through a symlinked
// directory at the destination.
func TestCopyTreeSymlinks(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	writeFile(t, filepath.Join(logs, "a", "x.log"), "x")
	if err := os.Symlink("a/x.log", filepath.Join(logs, "inside.log")); err != nil {
		t.Fatal(err)
	}
	if refused, err := CopyTree(logs, filepath.Join(t.TempDir(), "LOGS"), false); err != nil || len(refused) != 0 {
		t.Fatalf("an inside link: %v, refused %v", err, refused)
	}
	for _, target := range []string{"/etc/passwd", "../../escape"} {
		bad := filepath.Join(t.TempDir(), "logs")
		writeFile(t, filepath.Join(bad, "ok.log"), "ok")
		if err := os.Symlink(target, filepath.Join(bad, "leak.log")); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(t.TempDir(), "LOGS")
		refused, err := CopyTree(bad, dst, false)
		if err != nil || len(refused) != 1 || refused[0].Path != "leak.log" || refused[0].Target != target {
			t.Errorf("link to %s: %v, refused %+v; want it left out and named", target, err, refused)
		}
		if _, err := os.Lstat(filepath.Join(dst, "leak.log")); err == nil {
			t.Errorf("link to %s was recreated", target)
		}
		if _, err := os.Stat(filepath.Join(dst, "ok.log")); err != nil {
			t.Errorf("the rest was not copied: %v", err)
		}
	}
	dst := filepath.Join(t.TempDir(), "LOGS")
	elsewhere := t.TempDir()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(dst, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := CopyTree(logs, dst, true); err == nil || !strings.Contains(err.Error(), filepath.Join(dst, "a")) {
		t.Errorf("symlinked directory in the destination: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("wrote %d files through the symlink", len(ents))
	}
}

// TestCopyTreeResolvesLinkChains: a chain of in-tree links ("s -> ." at
// each level, then "s/../s/../…/../../secret") reads as staying inside
// when its text is cleaned, but the kernel resolves each s to a real
// directory before each "..", and the chain climbs out of the tree (audit
// #33 row 1: the staged LOGS/…/worker.log read a 0600 file elsewhere on
// the login node). Links are resolved link by link inside the tree: such a
// chain is left out, listed as refused (also by EscapingLinks, for the
// manifest); chains that stay inside, and dangling names inside, are
// copied.
func TestCopyTreeResolvesLinkChains(t *testing.T) {
	for depth := 1; depth <= 4; depth++ {
		t.Run(fmt.Sprintf("depth %d", depth), func(t *testing.T) {
			top := t.TempDir()
			writeFile(t, filepath.Join(top, "secret"), "secret")
			logs := filepath.Join(top, "logs")
			dir := logs
			for i := range depth {
				dir = filepath.Join(dir, fmt.Sprintf("d%d", i))
				writeFile(t, filepath.Join(dir, "ok.log"), "ok")
				if err := os.Symlink(".", filepath.Join(dir, "s")); err != nil {
					t.Fatal(err)
				}
			}
			climb := strings.Repeat("s/../", depth) + "../secret"
			inside := strings.Repeat("s/../", depth-1) + "s/ok.log" // d0/ok.log, really
			for name, target := range map[string]string{"worker.log": climb, "fine.log": inside, "later.log": "not-yet.log", "loop": "loop2"} {
				if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink("loop", filepath.Join(dir, "loop2")); err != nil {
				t.Fatal(err)
			}
			// The chain does climb out on the real tree, though its text
			// cleans to a path inside.
			if b, err := os.ReadFile(filepath.Join(dir, "worker.log")); err != nil || string(b) != "secret" {
				t.Fatalf("the planted chain does not escape (%q, %v): the test builds the wrong tree", b, err)
			}
			if rel, _ := filepath.Rel(logs, filepath.Join(dir, climb)); !filepath.IsLocal(rel) {
				t.Fatalf("the chain %s does not look inside lexically", climb)
			}
			dst := filepath.Join(t.TempDir(), "LOGS")
			refused, err := CopyTree(logs, dst, false)
			if err != nil {
				t.Fatal(err)
			}
			relDir, _ := filepath.Rel(logs, dir)
			got := map[string]bool{}
			for _, r := range refused {
				got[r.Path] = true
			}
			want := map[string]bool{filepath.ToSlash(filepath.Join(relDir, "worker.log")): true,
				filepath.ToSlash(filepath.Join(relDir, "loop")): true, filepath.ToSlash(filepath.Join(relDir, "loop2")): true}
			if !maps.Equal(got, want) {
				t.Errorf("refused %v, want %v", got, want)
			}
			staged := filepath.Join(dst, relDir)
			if b, err := os.ReadFile(filepath.Join(staged, "worker.log")); err == nil {
				t.Errorf("the staged worker.log reads %q", b)
			}
			if b, err := os.ReadFile(filepath.Join(staged, "fine.log")); err != nil || string(b) != "ok" {
				t.Errorf("the inside chain: %q, %v", b, err)
			}
			if l, err := os.Readlink(filepath.Join(staged, "later.log")); err != nil || l != "not-yet.log" {
				t.Errorf("the dangling inside link: %q, %v", l, err)
			}
			listed, err := EscapingLinks(logs, "LOGS/")
			if err != nil || len(listed) != len(want) {
				t.Fatalf("EscapingLinks = %+v, %v", listed, err)
			}
			for _, r := range listed {
				if !want[strings.TrimPrefix(r.Path, "LOGS/")] || r.Why == "" {
					t.Errorf("EscapingLinks listed %+v", r)
				}
			}
		})
	}
}

// TestBundleLeavesOutEscapingLinks: the logs bundle keeps the links that
// stay inside and leaves out a chain that climbs out, as CopyTree does.
func TestBundleLeavesOutEscapingLinks(t *testing.T) {
	top := t.TempDir()
	logs := filepath.Join(top, "logs")
	writeFile(t, filepath.Join(logs, "d", "ok.log"), "ok")
	writeFile(t, filepath.Join(top, "secret"), "secret")
	for _, l := range [][2]string{{".", "d/s"}, {"s/../s/../secret", "d/worker.log"}, {"ok.log", "d/fine.log"}} {
		if err := os.Symlink(l[0], filepath.Join(logs, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	dst := filepath.Join(top, "b.tar.gz")
	if err := BundleDir(logs, dst, BundleOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	names := map[string]bool{}
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names[h.Name] = true
	}
	if names["logs/d/worker.log"] || !names["logs/d/fine.log"] || !names["logs/d/s"] {
		t.Errorf("bundle holds %v: want the escaping worker.log left out, the inside links kept", names)
	}
}
