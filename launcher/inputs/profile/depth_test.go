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
