package fingerprint

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// point is a built row of a power multi-node point and its composed,
// bound recipe as a cluster-free binder leaves it.
func point(conc []int, cluster string) (map[string]any, map[string]any) {
	row := map[string]any{
		"image": "lmsysorg/sglang:v0.5", "model": "deepseek-ai/DeepSeek-R1", "model-prefix": "dsr1",
		"precision": "fp8", "framework": "dynamo-sglang", "runner": "cluster:gb300-nv", "isl": 8192, "osl": 1024,
		"spec-decoding": "none", "conc": conc, "max-model-len": 9472, "exp-name": "dsr1_8k1k", "disagg": true,
		"run-eval": false, "power": true, "node-count": 3, "kv-p2p-transfer": "nixl",
		"srt-recipe": "benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300/8k1k/a.yaml:override_x",
		"prefill":    map[string]any{"num-worker": 1, "tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 4, "dp-attn": true},
		"decode":     map[string]any{"num-worker": 1, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 8, "dp-attn": true},
	}
	concs := make([]any, len(conc))
	for i, c := range conc {
		concs[i] = c
	}
	port := map[string]int{"gb300-nv": 9400, "b300-dsxe": 19401}[cluster]
	recipe := map[string]any{
		"name":   "dsr1-" + cluster + "-job",
		"schema": 2,
		"model":  map[string]any{"path": "hf:deepseek-ai/DeepSeek-R1", "container": "lmsysorg/sglang:v0.5", "precision": "fp8"},
		"roles": map[string]any{
			"prefill": map[string]any{"nodes": 1, "workers": 1, "args": map[string]any{"tp-size": 4, "mem-fraction-static": 0.8}},
			"decode":  map[string]any{"nodes": 2, "workers": 1, "args": map[string]any{"tp-size": 8, "disaggregation-ib-device": "@fabric.ib-devices"}},
		},
		"benchmark": map[string]any{
			"type": "sa-bench", "concurrencies": concs,
			"env": map[string]any{"ISL": "8192", "OSL": "1024", "CONC": "x", "CONC_LIST": "y", "RANDOM_RANGE_RATIO": "0.8"},
		},
		"telemetry": map[string]any{"enabled": true, "dcgm_exporter": map[string]any{"port": port, "interval_ms": 100}},
	}
	return row, recipe
}

// TestSameRecipeOneFingerprint: the same recipe at two concurrency lists
// and on two clusters (job name and exporter port differ) hashes the same.
func TestSameRecipeOneFingerprint(t *testing.T) {
	row1, rec1 := point([]int{16, 32}, "gb300-nv")
	row2, rec2 := point([]int{256}, "b300-dsxe")
	row2["exp-name"] = "other"
	env := rec2["benchmark"].(map[string]any)["env"].(map[string]any)
	env["CONC"], env["CONC_LIST"] = "256", "256"
	a, err := Recipe(row1, rec1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Recipe(row2, rec2)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("one recipe, two fingerprints: %s / %s", a, b)
	}
	if len(a) != 64 {
		t.Errorf("fingerprint %q is not 64 hex digits", a)
	}
	// The caller's maps are left as they were.
	if _, ok := rec1["name"]; !ok {
		t.Error("Recipe removed name from the caller's recipe")
	}
	if _, ok := row1["conc"]; !ok {
		t.Error("Recipe removed conc from the caller's row")
	}
}

// TestAnyChangeChangesTheFingerprint: every recipe or row field outside the
// exclusions moves the fingerprint.
func TestAnyChangeChangesTheFingerprint(t *testing.T) {
	row0, rec0 := point([]int{16}, "gb300-nv")
	base, err := Recipe(row0, rec0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(row, rec map[string]any)
	}{
		{"recipe arg", func(_, r map[string]any) {
			r["roles"].(map[string]any)["prefill"].(map[string]any)["args"].(map[string]any)["mem-fraction-static"] = 0.85
		}},
		{"recipe node count", func(_, r map[string]any) { r["roles"].(map[string]any)["decode"].(map[string]any)["nodes"] = 3 }},
		{"fabric reference", func(_, r map[string]any) {
			r["roles"].(map[string]any)["decode"].(map[string]any)["args"].(map[string]any)["disaggregation-ib-device"] = "mlx5_0"
		}},
		{"benchmark env ISL", func(_, r map[string]any) { r["benchmark"].(map[string]any)["env"].(map[string]any)["ISL"] = "1024" }},
		{"telemetry interval", func(_, r map[string]any) {
			r["telemetry"].(map[string]any)["dcgm_exporter"].(map[string]any)["interval_ms"] = 200
		}},
		{"telemetry off", func(_, r map[string]any) { delete(r, "telemetry") }},
		{"an added key", func(_, r map[string]any) { r["frontend"] = map[string]any{"type": "sglang"} }},
		{"int becomes string", func(_, r map[string]any) { r["schema"] = "2" }},
		{"row image", func(row, _ map[string]any) { row["image"] = "lmsysorg/sglang:v0.6" }},
		{"row selector", func(row, _ map[string]any) { row["srt-recipe"] = row["srt-recipe"].(string) + "y" }},
		{"row eval recipe", func(row, _ map[string]any) { row["eval-srt-recipe"] = "benchmarks/multi_node/srt-slurm-recipes/x.yaml" }},
		{"row power", func(row, _ map[string]any) { delete(row, "power") }},
		{"row run-eval", func(row, _ map[string]any) { row["run-eval"] = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			row, rec := point([]int{16}, "gb300-nv")
			c.edit(row, rec)
			got, err := Recipe(row, rec)
			if err != nil {
				t.Fatal(err)
			}
			if got == base {
				t.Errorf("%s: fingerprint unchanged", c.name)
			}
		})
	}
}

func TestRowWithoutRecipe(t *testing.T) {
	row, rec := point([]int{16}, "gb300-nv")
	delete(row, "srt-recipe")
	a, err := Recipe(row, rec)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Row(row)
	if err != nil {
		t.Fatal(err)
	}
	if a != b {
		t.Errorf("a row without srt-recipe hashes its fields alone: %s != %s", a, b)
	}
	row["conc"] = []int{1, 2, 3}
	if c, _ := Row(row); c != b {
		t.Error("conc moved the row fingerprint")
	}
	row, _ = point([]int{16}, "gb300-nv")
	if _, err := Recipe(row); err == nil {
		t.Error("a row naming srt-recipe fingerprinted without its recipe")
	}
}

func TestCanonical(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{map[string]any{"b": 1, "a": []any{true, nil, "x"}, "é": 0.5}, `{"a":[true,null,"x"],"b":1,"\u00e9":0.5}`},
		{map[string]any{"f": 1.0, "g": 1e16, "h": 1e-05, "n": int64(-3)}, `{"f":1.0,"g":1e+16,"h":1e-05,"n":-3}`},
		{[]any{"<&>", "\n", map[string]any{}}, `["<&>","\n",{}]`},
		{[]int{1, 2}, `[1,2]`},
	} {
		got, err := Canonical(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("Canonical(%v) = %s, want %s", c.v, got, c.want)
		}
	}
	if _, err := Canonical(map[string]any{"x": struct{}{}}); err == nil || !strings.Contains(err.Error(), "x:") {
		t.Errorf("a Go struct: err = %v", err)
	}
}

// TestFromYAMLTypesAsPyYAML: the scalars YAML 1.1 and 1.2 type differently.
func TestFromYAMLTypesAsPyYAML(t *testing.T) {
	const doc = `
a: yes
b: "yes"
c: 1e5
d: 1.0e+5
e: 0o17
f: 017
g: 1:30
h: 0x1F
i: ~
j: .inf
k: 1_000
l: on
m: 3.
n: !!str 12
base: &b {x: 1, y: 2}
o:
  <<: *b
  y: 3
`
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatal(err)
	}
	got, err := Canonical(&n)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":true,"b":"yes","base":{"x":1,"y":2},"c":"1e5","d":100000.0,"e":"0o17","f":15,"g":90,"h":31,"i":null,"j":Infinity,"k":1000,"l":true,"m":3.0,"n":"12","o":{"x":1,"y":3}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if err := yaml.Unmarshal([]byte("d: 2026-01-02\n"), &n); err != nil {
		t.Fatal(err)
	}
	if _, err := Canonical(&n); err == nil || !strings.Contains(err.Error(), "timestamp") {
		t.Errorf("a timestamp: err = %v", err)
	}
}

// TestRecordedPythonOutput compares with what Python's
// json.dumps(yaml.safe_load(doc), sort_keys=True, separators=(",", ":"),
// ensure_ascii=True) printed for these documents (Python 3.11.7, PyYAML
// 6.0.3: the planner's serialization), recorded here as facts.
func TestRecordedPythonOutput(t *testing.T) {
	for _, c := range []struct{ doc, python string }{
		{"name: x\nbenchmark: {concurrencies: [1, 2], env: {CONC: '3', ISL: '8192'}}\nroles: {prefill: {args: {f: 0.85, s: \"é€😀\", n: null, t: True}}}\n",
			`{"benchmark":{"concurrencies":[1,2],"env":{"CONC":"3","ISL":"8192"}},"name":"x","roles":{"prefill":{"args":{"f":0.85,"n":null,"s":"\u00e9\u20ac\ud83d\ude00","t":true}}}}`},
		{"a: [1.5e+3, -0.0, 10000000000000000.0, 0.1, 123456789.125]\nb: {z: 1, A: 2, _: 3, é: 4}\nc: 0b101\nd: '1e5'\n",
			`{"a":[1500.0,-0.0,1e+16,0.1,123456789.125],"b":{"A":2,"_":3,"z":1,"\u00e9":4},"c":5,"d":"1e5"}`},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(c.doc), &n); err != nil {
			t.Fatal(err)
		}
		got, err := Canonical(&n)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.python {
			t.Errorf("%q:\n got    %s\n python %s", c.doc, got, c.python)
		}
	}
}

// TestNormalize: after Normalize, yaml.v3 decodes values as PyYAML does.
func TestNormalize(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte("a: yes\nb: 'yes'\nc: 1:30\nd: 0o17\ne: 1e5\nf: [on, Off, 3]\ng: ~\nyes: 1\nh: .inf\nr: {x: 1, x: 2}\n"), &n); err != nil {
		t.Fatal(err)
	}
	Normalize(&n)
	var got map[string]any
	if err := n.Decode(&got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"a": true, "b": "yes", "c": 90, "d": "0o17", "e": "1e5", "f": []any{true, false, 3}, "g": nil, "yes": 1,
		"r": map[string]any{"x": 2}}
	for k, w := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(w) || fmt.Sprintf("%T", got[k]) != fmt.Sprintf("%T", w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
	if f, ok := got["h"].(float64); !ok || !math.IsInf(f, 1) {
		t.Errorf("h = %#v, want +Inf", got["h"])
	}
}

// TestBuiltNodes: scalars a composer builds in Go keep the type it gave
// them where YAML 1.2 would read their text otherwise ("8192" written as
// a string stays a string), and a recipe mixing parsed and built nodes
// hashes as Python hashes the same values.
func TestBuiltNodes(t *testing.T) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	env := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		str("ISL"), str("8192"), str("USE_CHAT_TEMPLATE"), str("false"), str("MODEL"), str("org/m"),
		str("N"), {Kind: yaml.ScalarNode, Tag: "!!int", Value: "3"}, str("E"), str(""),
	}}
	got, err := Canonical(env)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"E":"","ISL":"8192","MODEL":"org/m","N":3,"USE_CHAT_TEMPLATE":"false"}`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
