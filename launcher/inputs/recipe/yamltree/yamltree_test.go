package yamltree

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree/yamltreetest"

	"go.yaml.in/yaml/v3"
)

func render(t *testing.T, n *yaml.Node) string {
	t.Helper()
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPyStr: a value renders as Python's str() of what PyYAML parses.
func TestPyStr(t *testing.T) {
	for text, want := range map[string]string{
		"v: true": "True", "v: False": "False", "v: ~": "None", "v: 0x10": "16", "v: 1_000": "1000",
		"v: 1.0": "1.0", "v: 1e20": "1e+20", "v: -.inf": "-inf", "v: .NaN": "nan", "v: abc": "abc",
		`v: [1, "a", {k: null}]`: `[1, "a", {"k": null}]`, "v: {b: 2, a: 1.5}": `{"a": 1.5, "b": 2}`,
	} {
		if got := PyStr(Get(yamltreetest.Parse(t, text), "v")); got != want {
			t.Errorf("%s: %q, want %q", text, got, want)
		}
	}
	if PyStr(nil) != "None" {
		t.Error("nil is not None")
	}
	if b, ok := Bool(Get(yamltreetest.Parse(t, "v: TRUE"), "v")); !b || !ok {
		t.Error("TRUE is not a true boolean")
	}
	if _, ok := Bool(Get(yamltreetest.Parse(t, "v: 'true'"), "v")); ok {
		t.Error("a quoted string is a boolean")
	}
	if got := Clip(strings.Repeat("x", 100)); len(got) != 82 || !strings.HasSuffix(got, `..."`) {
		t.Errorf("clip: %s", got)
	}
}

// TestSetPath: a dotted path is set or removed in place; a block shared
// through an anchor or a merge key is copied first, so the anchor's other
// users keep their value; what is in the way is named.
func TestSetPath(t *testing.T) {
	doc := yamltreetest.Parse(t, "a: &a {x: 1, y: 'q'} # c\nb: *a\nc:\n  <<: *a\n  z: 3\n")
	val := func(s string) *yaml.Node { return yamltreetest.Parse(t, "v: "+s).Content[1] }
	for _, e := range []struct {
		path  string
		value *yaml.Node
	}{
		{"b.x", val("2")}, {"c.y", val("r")}, {"a.y", val("s")}, {"d.e.f", val("[1]")}, {"a.x", nil}, {"nothing.here", nil},
	} {
		if err := SetPath(doc, strings.Split(e.path, "."), e.value); err != nil {
			t.Fatalf("%s: %v", e.path, err)
		}
	}
	// b and c became copies (b's keeps the anchor's comment), c's merged
	// keys explicit after its own; the quoting of a replaced string stays.
	want := "a: &a {y: 's'} # c\nb: {x: 2, y: 'q'} # c\nc:\n    z: 3\n    x: 1\n    y: 'r'\nd:\n    e:\n        f: [1]\n"
	if got := render(t, doc); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if !Touches(Get(doc, "c"), []string{"y", "deeper"}) || Touches(Get(doc, "c"), []string{"w"}) {
		t.Error("Touches")
	}
	for path, msg := range map[string]string{"c.z.k": "c.z is not a mapping (line 5)"} {
		if err := SetPath(doc, strings.Split(path, "."), val("1")); err == nil || err.Error() != msg {
			t.Errorf("%s: %v, want %q", path, err, msg)
		}
	}
	// A key the top level only merges cannot be removed there (a block
	// below is made explicit by its copy instead).
	merged := yamltreetest.Parse(t, "<<: {k: 1}\nm: 2\n")
	if err := SetPath(merged, []string{"k"}, nil); err == nil || !strings.Contains(err.Error(), "k comes from a merge key (<<) at line 1") {
		t.Errorf("unset through a merge key: %v", err)
	}
}

func TestFieldAtLine(t *testing.T) {
	doc := yamltreetest.Parse(t, "a:\n  b: 1\n  c: {d: 2, e: 3}\nf: [\n  1]\n")
	lines := map[string]int{}
	IndexLines(doc, "", lines)
	if lines["a.b"] != 2 || lines["a.c.e"] != 3 || lines["f"] != 4 {
		t.Errorf("lines %v", lines)
	}
	for line, want := range map[int]string{0: "", 2: "a.b", 3: "a.c", 5: "f"} {
		if got := FieldAtLine(doc, line); got != want {
			t.Errorf("line %d: %q, want %q", line, got, want)
		}
	}
}
