package yamldoc

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree/yamltreetest"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"go.yaml.in/yaml/v3"
)

// Package recipe's load_test.go and hints_test.go hold these rules as a
// recipe read sees them; here each is held on its own.

func TestParse(t *testing.T) {
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+", ", 9) + "*" + prev + "]\n"
		prev = n
	}
	for _, c := range []struct {
		name, path, text string
		line             int
		msg              string
	}{
		{"empty", "r.yaml", "# nothing\n", 0, "empty recipe"},
		{"not a mapping", "r.yaml", "- a\n", 1, "a recipe must be a YAML mapping"},
		{"second document", "r.yaml", "a: 1\n---\nb: 2\n", 3, "a second YAML document"},
		{"syntax error after the first document", "r.yaml", "a: 1\n---\nb: [\n", 3, "after the first document: "},
		{"alias bomb", "r.yaml", bomb, 1, "YAML aliases expand to more than 200000 nodes"},
		{"tab", "r.yaml", "a:\n\tb: 1\n", 2, "tabs are not allowed in YAML: indent with spaces ("},
		{"profile as recipe", "p.toml", "[slurm]\nrest_url = \"http://h:6820\"\npartition = \"debug\"\n", 1, "this looks like a cluster profile (TOML)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.path, []byte(c.text))
			var e *yamltree.Error
			if !errors.As(err, &e) || e.File != c.path || e.Line != c.line || !strings.Contains(e.Msg, c.msg) || strings.Contains(e.Msg, "yaml: ") {
				t.Errorf("%v, want an *yamltree.Error at %s:%d with %q", err, c.path, c.line, c.msg)
			}
		})
	}
	doc, err := Parse("r.yaml", []byte("a: &x {b: 1}\nc: *x\n"))
	if err != nil || doc.Kind != yaml.MappingNode || len(doc.Content) != 4 {
		t.Errorf("a valid document: %v", err)
	}
}

// TestResolveDuplicates: the last occurrence wins as in PyYAML, identical
// values warn, different ones are refused unless allowed; lists of
// mappings and merge keys are handled.
func TestResolveDuplicates(t *testing.T) {
	doc := yamltreetest.Parse(t, "a: 1\nb: [{x: 1, x: 1}]\n<<: {a: 0}\n<<: {c: 0}\na: 1\n")
	w, err := ResolveDuplicates("r.yaml", doc, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`r.yaml:5: a: set twice to the same value "1" (lines 1 and 5)`, `r.yaml:2: b[].x: set twice to the same value "1" (lines 2 and 2)`}
	if !reflect.DeepEqual(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
	var keys []string
	for i := 0; i < len(doc.Content); i += 2 {
		keys = append(keys, doc.Content[i].Value)
	}
	if strings.Join(keys, " ") != "b << << a" {
		t.Errorf("keys left %q, want b << << a (merge keys are not duplicates; the last a stays)", keys)
	}

	text := "m:\n  k: 8\n  k: 4\n"
	_, err = ResolveDuplicates("r.yaml", yamltreetest.Parse(t, text), false)
	var de *DuplicateError
	if !errors.As(err, &de) || de.Err.Field != "m.k" || de.Err.Line != 3 || de.FirstLine != 2 || de.FirstValue != "8" || de.SecondValue != "4" || !strings.Contains(de.Err.Msg, "--allow-duplicate-keys") {
		t.Errorf("different values: %v", err)
	}
	doc = yamltreetest.Parse(t, text)
	w, err = ResolveDuplicates("r.yaml", doc, true)
	if err != nil || len(w) != 1 || !strings.Contains(w[0], `set twice, "8" (line 2) then "4" (line 3); the last wins`) || len(doc.Content[1].Content) != 2 || doc.Content[1].Content[1].Value != "4" {
		t.Errorf("allowed: %v %q", err, w)
	}
}

type Inner struct {
	Self selfDecoding `yaml:"self"`
	N    int          `yaml:"n"`
}

type selfDecoding struct{}

func (*selfDecoding) UnmarshalYAML(*yaml.Node) error { return nil }

type outer struct {
	Inner `yaml:",inline"`
	Named string           `yaml:"named"`
	New   *Inner           `yaml:"new" schema:"2"`
	Map   map[string]Inner `yaml:"map"`
	List  []Inner          `yaml:"list"`
	Skip  string           `yaml:"-"`
	Lower string
}

// TestCheckKeys: every key is one the type reads at the schema version,
// through inline structs, maps, lists and merge keys; a self-decoding type
// is not looked into; the first unknown key is reported where it is.
func TestCheckKeys(t *testing.T) {
	type call struct{ typ, field, key string }
	var got call
	unknown := func(typ reflect.Type, field, key string) string {
		got = call{typ.Name(), field, key}
		return "unknown " + key
	}
	for _, c := range []struct {
		text   string
		schema int
		field  string // the error's; "" for none
		line   int
		call   call
	}{
		{"n: 1\nself: {anything: 1}\nnamed: x\nlower: y\nmap: {a: {n: 1}}\nlist: [{n: 2}]\n", 1, "", 0, call{}},
		{"new: {n: 1}\n", 2, "", 0, call{}},
		{"new: {n: 1}\n", 1, "new", 1, call{"outer", "", "new"}},
		{"map:\n  a: {m: 1}\n", 1, "map.a.m", 2, call{"Inner", "map.a", "m"}},
		{"list:\n  - {n: 1}\n  - {skip: 1}\n", 1, "list.skip", 3, call{"Inner", "list", "skip"}},
		{"x: &x {bad: 1}\n", 1, "x", 1, call{"outer", "", "x"}},
		{"map:\n  a:\n    <<: {bad: 1}\n", 1, "map.a.bad", 3, call{"Inner", "map.a", "bad"}},
		{"Lower: y\n", 1, "Lower", 1, call{"outer", "", "Lower"}},
	} {
		got = call{}
		err := CheckKeys("r.yaml", yamltreetest.Parse(t, c.text), reflect.TypeOf(outer{}), "", c.schema, unknown)
		var e *yamltree.Error
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%q (schema %d): %v", c.text, c.schema, err)
		case c.field != "" && (!errors.As(err, &e) || e.Field != c.field || e.Line != c.line || e.Msg != "unknown "+c.call.key || got != c.call):
			t.Errorf("%q (schema %d): %v (unknown called with %+v), want %s at line %d (%+v)", c.text, c.schema, err, got, c.field, c.line, c.call)
		}
	}
	fields, open := Fields(reflect.TypeOf(outer{}), 1)
	if open || fields["n"] == nil || fields["lower"] == nil || fields["new"] != nil || fields["-"] != nil || fields["Skip"] != nil {
		t.Errorf("fields %v open %v", fields, open)
	}
}

func TestMessagesAndLine(t *testing.T) {
	var v struct {
		A int `yaml:"a"`
		B int `yaml:"b"`
	}
	err := yaml.Unmarshal([]byte("a: x\nb: y\n"), &v)
	if got := Messages(err); len(got) != 2 || strings.HasPrefix(got[0], "line") || !strings.Contains(got[1], "`y`") || Line(err) != 1 {
		t.Errorf("messages %q line %d", got, Line(err))
	}
	err = yaml.Unmarshal([]byte("a: [\n"), &v)
	if got := Messages(err); len(got) != 1 || strings.HasPrefix(got[0], "yaml: ") || Line(err) == 0 {
		t.Errorf("syntax: messages %q line %d", got, Line(err))
	}
}
