package profile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeepNestingIsAnError: a profile of deeply nested arrays fails to
// load naming the limit; it crashed the binary with a Go stack overflow
// inside the TOML library.
func TestDeepNestingIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deep.toml")
	const n = 1_500_000
	body := "x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") {
		t.Fatalf("Load = %v, want the nesting limit named", err)
	}
}

// TestNestingScanSkipsStringsAndComments: brackets inside strings and
// comments do not count; real nesting up to the limit passes.
func TestNestingScanSkipsStringsAndComments(t *testing.T) {
	deep := strings.Repeat("[", 70)
	for _, ok := range []string{
		`a = "` + deep + `"`,
		`a = '` + deep + `'`,
		"a = \"\"\"\n" + deep + "\n\"\"\"",
		"a = '''" + deep + "'''",
		"# " + deep,
		`a = "\"` + deep + `"`,
		"[slurm]\nx = [[1, 2], {a = [3]}]\n[[containers]]\n",
		"a = " + strings.Repeat("[", MaxNesting) + strings.Repeat("]", MaxNesting),
	} {
		if err := checkNesting([]byte(ok)); err != nil {
			t.Errorf("checkNesting(%.40q) = %v", ok, err)
		}
	}
	if err := checkNesting([]byte("\n\na = " + strings.Repeat("{a=", MaxNesting+1))); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("inline tables too deep: %v", err)
	}
}

// TestLongDottedKeyIsAnError: a 40 KB profile holding one dotted key of
// 20,000 parts (bare, quoted, spaced, or as a table header) is refused
// before the TOML library, whose load time grows with the square of the
// parts, sees it (audit #33 row 7); keys up to the limit and dotted values
// (floats, times) in arrays and tables load.
func TestLongDottedKeyIsAnError(t *testing.T) {
	key := func(part, sep string, n int) string {
		return strings.TrimSuffix(strings.Repeat(part+sep, n), sep)
	}
	for _, tt := range []struct {
		name, body string
	}{
		{"bare", key("a", ".", 20000) + " = 1\n"},
		{"quoted", key(`"a"`, ".", 10000) + " = 1\n"},
		{"spaced", key("a", " . ", 10000) + " = 1\n"},
		{"header", "[" + key("a", ".", 20000) + "]\n"},
		{"inline table", "x = {" + key("a", ".", 20000) + " = 1}\n"},
		{"just past the limit", "\n" + key("a", ".", MaxKeyParts+1) + " = 1\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dotted.toml")
			if err := os.WriteFile(path, []byte(tt.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), "a dotted key of more than 64 parts") {
				t.Fatalf("Load = %v, want the key-parts limit named", err)
			}
		})
	}
	for _, ok := range []string{
		key("a", ".", MaxKeyParts) + " = 1",
		"x = [1.5, 2.5, 3.5, 4.5]\ny = 1979-05-27T07:32:00.999\n[a.b]\nc.d = 0.5",
		"x = [\n" + strings.Repeat("1.5,\n", 200) + "]",
		`"` + strings.Repeat(".", 200) + `" = 1`,
	} {
		if err := checkNesting([]byte(ok)); err != nil {
			t.Errorf("checkNesting(%.40q) = %v", ok, err)
		}
	}
}
