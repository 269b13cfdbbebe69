package results

import (
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

// TestCopyTreeSymlinks: a link pointing outside the copied tree is refused
// (it would publish its target); a link inside it is recreated; nothing is
// written through a symlinked directory at the destination.
func TestCopyTreeSymlinks(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	writeFile(t, filepath.Join(logs, "a", "x.log"), "x")
	if err := os.Symlink("a/x.log", filepath.Join(logs, "inside.log")); err != nil {
		t.Fatal(err)
	}
	if err := CopyTree(logs, filepath.Join(t.TempDir(), "LOGS"), false); err != nil {
		t.Fatalf("an inside link: %v", err)
	}
	for _, target := range []string{"/etc/passwd", "../../escape"} {
		bad := filepath.Join(t.TempDir(), "logs")
		writeFile(t, filepath.Join(bad, "ok.log"), "ok")
		if err := os.Symlink(target, filepath.Join(bad, "leak.log")); err != nil {
			t.Fatal(err)
		}
		if err := CopyTree(bad, filepath.Join(t.TempDir(), "LOGS"), false); err == nil || !strings.Contains(err.Error(), "leak.log") {
			t.Errorf("link to %s: %v, want a refusal naming it", target, err)
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
	if err := CopyTree(logs, dst, true); err == nil || !strings.Contains(err.Error(), filepath.Join(dst, "a")) {
		t.Errorf("symlinked directory in the destination: %v", err)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("wrote %d files through the symlink", len(ents))
	}
}
