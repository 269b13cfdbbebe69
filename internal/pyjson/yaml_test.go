package pyjson

import (
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestYAMLObject: YAML values come out as Python's json.dumps writes what
// PyYAML parsed, compact (", ", ": ") or indented, keys in document order.
func TestYAMLObject(t *testing.T) {
	cases := []struct {
		yaml   string
		indent int
		want   string
	}{
		{"{b: 1, a: [1, 2.5], c: {}}", 0, `{"b": 1, "a": [1, 2.5], "c": {}}`},
		{"{f: 1e-05, g: 1.0e16, h: 0.1, i: 3.0, j: .nan, k: -.inf}", 0, `{"f": 1e-05, "g": 1e+16, "h": 0.1, "i": 3.0, "j": NaN, "k": -Infinity}`},
		{"{s: 'x\"y\\\\', u: 'é€😀', t: true, n: null, y: yes, o: 0x10}", 0, `{"s": "x\"y\\\\", "u": "\u00e9\u20ac\ud83d\ude00", "t": true, "n": null, "y": true, "o": 16}`},
		{"{a: [1, {b: []}], c: x}", 2, "{\n  \"a\": [\n    1,\n    {\n      \"b\": []\n    }\n  ],\n  \"c\": \"x\"\n}"},
	}
	for _, tc := range cases {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tc.yaml), &n); err != nil {
			t.Fatal(err)
		}
		fields, err := YAMLFields(n.Content[0])
		if err != nil {
			t.Fatal(err)
		}
		got, err := YAMLObject(tc.indent, fields)
		if err != nil || got != tc.want {
			t.Errorf("%s (indent %d):\n got %s, %v\nwant %s", tc.yaml, tc.indent, got, err, tc.want)
		}
	}
}
