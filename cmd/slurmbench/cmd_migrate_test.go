package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/migrate"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

// copyExample copies examples/NAME into dir with mode perm.
func copyExample(t *testing.T, dir, name string, perm os.FileMode) (path string, data []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, name)
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestMigrateFile: -f FILE prints the migration and changes nothing;
// --in-place replaces the file whole, keeping its mode, and then refuses
// it (already schema 2) with exit 2, leaving it as it is.
func TestMigrateFile(t *testing.T) {
	dir := t.TempDir()
	path, orig := copyExample(t, dir, "mock-2p1d-v1.yaml", 0o640)
	want, err := migrate.Migrate(path, orig, migrate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCLI(t, "migrate", "-f", path)
	if code != 0 || out != string(want.Text) {
		t.Fatalf("print: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
	if !strings.Contains(errOut, "backend -> engine") {
		t.Errorf("notes not listed: %q", errOut)
	}
	if now, _ := os.ReadFile(path); string(now) != string(orig) {
		t.Fatal("printing changed the file")
	}

	out, errOut, code = runCLI(t, "migrate", "-q", "-f", path, "--in-place")
	if code != 0 || out != "" {
		t.Fatalf("in place: exit %d, %q %q", code, out, errOut)
	}
	now, _ := os.ReadFile(path)
	if string(now) != string(want.Text) {
		t.Errorf("in place wrote:\n%s", now)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), atomicfile.TempPrefix) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	_, errOut, code = runCLI(t, "migrate", "-f", path, "--in-place")
	if code != exitcode.Config || !strings.Contains(errOut, "already schema 2") {
		t.Errorf("second --in-place: exit %d, %q; want exit 2, already schema 2", code, errOut)
	}
	if again, _ := os.ReadFile(path); string(again) != string(now) {
		t.Error("a refused --in-place changed the file")
	}
	// Printing a schema-2 file prints it as it is.
	if out, _, code := runCLI(t, "migrate", "-f", path); code != 0 || out != string(now) {
		t.Errorf("print of a schema-2 file: exit %d", code)
	}
	// --set edits the original first; a bad one is exit 2 and writes nothing.
	path2, orig2 := copyExample(t, t.TempDir(), "mock-2p1d-v1.yaml", 0o644)
	out, _, code = runCLI(t, "migrate", "-q", "-f", path2, "--set", "resources.prefill_workers=1")
	if code != 0 || !strings.Contains(out, "  prefill:\n    nodes: 2\n    workers: 1\n") {
		t.Errorf("--set: exit %d\n%s", code, out)
	}
	// ... and --verify plans the edited original against the migration.
	out, errOut, code = runCLI(t, "migrate", "-f", path2, "--verify", "--set", "resources.prefill_workers=1", "--set", "resources.prefill_nodes=1")
	if code != 0 || !strings.Contains(errOut, "verified: 1 config(s) plan alike") || !strings.Contains(out, "    nodes: 1\n    workers: 1\n") {
		t.Errorf("--verify --set: exit %d %q\n%s", code, errOut, out)
	}
	_, errOut, code = runCLI(t, "migrate", "-f", path2, "--in-place", "--set", "resources.prefil_workers=1")
	if code != exitcode.Config || !strings.Contains(errOut, "did you mean resources.prefill_workers?") {
		t.Errorf("bad --set: exit %d %q", code, errOut)
	}
	if now, _ := os.ReadFile(path2); string(now) != string(orig2) {
		t.Error("a refused --in-place changed the file")
	}
}

// TestMigrateDir: -f DIR lists each file's status and writes nothing;
// with --in-place it writes every file only when all of them migrate.
func TestMigrateDir(t *testing.T) {
	dir := t.TempDir()
	a, _ := copyExample(t, dir, "mock-2p1d-v1.yaml", 0o644)
	_, master := copyExample(t, dir, "mock-master.yaml", 0o644)
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	b, origB := copyExample(t, sub, "mock-2p1d-v1.yaml", 0o644)
	out, errOut, code := runCLI(t, "migrate", "-f", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"mock-2p1d-v1.yaml: migrate (", "mock-master.yaml: not a recipe, skipped", "sub/mock-2p1d-v1.yaml: migrate (", "3 file(s): 2 to migrate, 0 already schema 2, 1 not recipes, 0 failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if now, _ := os.ReadFile(b); string(now) != string(origB) {
		t.Fatal("a listing changed a file")
	}
	if _, _, code := runCLI(t, "migrate", "-f", dir, "--set", "name=x"); code != exitcode.Config {
		t.Errorf("--set on a directory: exit %d, want 2", code)
	}

	// One bad file: nothing is written.
	bad := filepath.Join(sub, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: a\nname: b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = runCLI(t, "migrate", "-f", dir, "--in-place")
	if code != exitcode.Config || !strings.Contains(out, "bad.yaml: error:") {
		t.Errorf("a failing file: exit %d\n%s", code, out)
	}
	if now, _ := os.ReadFile(a); strings.HasPrefix(string(now), "schema: 2") || strings.Contains(string(now), "\nschema: 2") {
		t.Fatal("a file was written although another failed")
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runCLI(t, "migrate", "-q", "-f", dir, "--in-place")
	if code != 0 || !strings.Contains(out, "2 file(s) migrated in place") {
		t.Fatalf("in place: exit %d %s %s", code, out, errOut)
	}
	for _, f := range []string{a, b} {
		if now, _ := os.ReadFile(f); !strings.Contains(string(now), "\nschema: 2\n") {
			t.Errorf("%s not migrated", f)
		}
	}
	if now, _ := os.ReadFile(filepath.Join(dir, "mock-master.yaml")); string(now) != string(master) {
		t.Error("the master config was touched")
	}
	// A second run finds everything migrated.
	out, _, code = runCLI(t, "migrate", "-f", dir, "--in-place")
	if code != 0 || !strings.Contains(out, "2 already schema 2") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}

// TestReplaceFile: a file that changed since it was read, or a symlink, is
// left alone; a replacement is whole and keeps the mode.
func TestReplaceFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.yaml")
	if err := os.WriteFile(path, []byte("edited by someone\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := launch.ReplaceFile(path, []byte("as read\n"), []byte("migrated\n")); err == nil || !strings.Contains(err.Error(), "changed while it was being migrated") {
		t.Errorf("changed file: %v", err)
	}
	if now, _ := os.ReadFile(path); string(now) != "edited by someone\n" {
		t.Errorf("changed file overwritten: %q", now)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := launch.ReplaceFile(link, []byte("edited by someone\n"), []byte("migrated\n")); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("symlink: %v", err)
	}
	if err := launch.ReplaceFile(path, []byte("edited by someone\n"), []byte("migrated\n")); err != nil {
		t.Fatal(err)
	}
	if now, _ := os.ReadFile(path); string(now) != "migrated\n" {
		t.Errorf("replaced with %q", now)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
}
