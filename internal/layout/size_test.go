package layout

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Size limits a maintainer can hold in mind: no package over maxPackage
// lines of non-test Go, and a cmd that only parses (its help text is most
// of it) under maxCmd. docs/architecture.md states both.
const (
	maxPackage = 3000
	maxCmd     = 2500
	cmdPackage = "cmd/slurmbench"
)

// packageLines counts, per package directory under root, the lines of its
// non-test Go files (raw lines: comments and blank lines count).
func packageLines(t *testing.T, root string) map[string]int {
	t.Helper()
	out := map[string]int{}
	eachSourceFile(t, root, func(pkg, path string) error {
		b, err := os.ReadFile(path)
		out[pkg] += bytes.Count(b, []byte("\n"))
		return err
	})
	return out
}

// limit is a package's line limit.
func limit(pkg string) int {
	if pkg == cmdPackage {
		return maxCmd
	}
	return maxPackage
}

// oversized lists the packages over their limit, largest first.
func oversized(lines map[string]int) []string {
	var out []string
	for pkg, n := range lines {
		if n > limit(pkg) {
			out = append(out, pkg)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lines[out[i]] > lines[out[j]] })
	return out
}

func TestPackageSizes(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	lines := packageLines(t, root)
	if len(lines) < 40 || lines[cmdPackage] == 0 {
		t.Fatalf("counted %d packages (cmd: %d lines): not the module root?", len(lines), lines[cmdPackage])
	}
	for _, pkg := range oversized(lines) {
		t.Errorf("%s: %d lines of non-test Go, over its limit of %d: split it by what it does", pkg, lines[pkg], limit(pkg))
	}
	var largest []string
	for pkg := range lines {
		largest = append(largest, pkg)
	}
	sort.Slice(largest, func(i, j int) bool { return lines[largest[i]] > lines[largest[j]] })
	t.Logf("largest: %s %d, %s %d, %s %d; %s %d", largest[0], lines[largest[0]], largest[1], lines[largest[1]], largest[2], lines[largest[2]], cmdPackage, lines[cmdPackage])
}

// TestOversizedIsFound: the check reports a package over 3,000 lines and a
// cmd over 2,500, and nothing at the limits.
func TestOversizedIsFound(t *testing.T) {
	got := oversized(map[string]int{"a": maxPackage, "b": maxPackage + 1, cmdPackage: maxCmd + 1, "c": maxCmd + 1})
	if want := []string{"b", cmdPackage}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("oversized %v, want %v", got, want)
	}
	if got := oversized(map[string]int{"a": maxPackage, cmdPackage: maxCmd}); len(got) != 0 {
		t.Errorf("at the limits: %v", got)
	}
}
