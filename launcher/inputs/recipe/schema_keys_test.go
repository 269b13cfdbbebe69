package recipe

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/schema2"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// schemaPaths walks srt-slurm's recipe JSON schema from its Recipe
// definition: every property, through $ref, anyOf/oneOf/allOf, array items
// (path[]) and free-form maps (path.*), each with the type a value of it
// has (for a sample).
func schemaPaths(t *testing.T, file string) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	defs, _ := s["$defs"].(map[string]any)
	out := map[string]string{}
	var walk func(n map[string]any, prefix string, seen map[string]bool)
	walk = func(n map[string]any, prefix string, seen map[string]bool) {
		if r, ok := n["$ref"].(string); ok {
			name := r[strings.LastIndex(r, "/")+1:]
			if seen[name] {
				return
			}
			next := map[string]bool{name: true}
			for k := range seen {
				next[k] = true
			}
			walk(defs[name].(map[string]any), prefix, next)
			return
		}
		for _, k := range []string{"anyOf", "oneOf", "allOf"} {
			l, _ := n[k].([]any)
			for _, x := range l {
				walk(x.(map[string]any), prefix, seen)
			}
		}
		props, _ := n["properties"].(map[string]any)
		for k, v := range props {
			q := yamltree.JoinField(prefix, k)
			if _, ok := out[q]; !ok {
				out[q] = jsonType(v.(map[string]any), defs)
			}
			walk(v.(map[string]any), q, seen)
		}
		if it, ok := n["items"].(map[string]any); ok {
			walk(it, prefix+"[]", seen)
		}
		if ap, ok := n["additionalProperties"].(map[string]any); ok {
			walk(ap, prefix+".*", seen)
		}
	}
	walk(defs["Recipe"].(map[string]any), "", map[string]bool{})
	return out
}

// jsonType is the first non-null type a schema node allows.
func jsonType(n map[string]any, defs map[string]any) string {
	switch ty := n["type"].(type) {
	case string:
		return ty
	case []any:
		for _, x := range ty {
			if x != "null" {
				return x.(string)
			}
		}
	}
	if r, ok := n["$ref"].(string); ok {
		return jsonType(defs[r[strings.LastIndex(r, "/")+1:]].(map[string]any), defs)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		l, _ := n[k].([]any)
		for _, x := range l {
			if ty := jsonType(x.(map[string]any), defs); ty != "null" && ty != "" {
				return ty
			}
		}
	}
	if _, ok := n["properties"]; ok {
		return "object"
	}
	if e, ok := n["enum"].([]any); ok && len(e) > 0 {
		if _, num := e[0].(float64); num {
			return "integer"
		}
	}
	return "string"
}

// keysRecipe is a schema-2 recipe the reader plans; each key is set on
// a copy of it.
const keysRecipe = `schema: 2
name: keys
model: {path: /models/m, container: img, precision: fp8}
resources: {gpu_type: h100, gpus_per_node: 4}
engine: mock
roles:
  prefill: {nodes: 1, workers: 1, gpus: 4, args: {served-model-name: m}}
  decode: {nodes: 1, workers: 1, gpus: 4, args: {served-model-name: m}}
frontend: {type: dynamo}
benchmark: {type: sa-bench, isl: 1024, osl: 128, concurrencies: "8"}
`

// sampleValues are values of planned keys that the reader accepts, where
// a value of the key's type alone would be refused for what it says.
var sampleValues = map[string]string{
	"schema": "2", "engine": "mock", "engine.type": "mock", "roles.*.engine": "mock", "roles.*.engine.type": "mock",
	"frontend.type": "dynamo", "benchmark.type": "sa-bench", "benchmark.dataset_name": "random",
	"engine.set_visible_devices": "false", "engine.publish_events_and_metrics": "false",
}

// engineTypes are schema 2's engine types: an engine.* option is one
// engine's (the schema's *Backend definitions), so each is tried.
var engineTypes = []string{"mock", "sglang", "vllm", "trtllm", "mocker"}

// TestSchemaKeysPlannedOrRefused holds schema2.Keys to srt-slurm's newest
// stored recipe schema: every key it has is planned (read into the plan),
// of no effect (dropped with a warning) or refused by name; every entry
// names a key the schema has; and the reader does what the entry says: a
// refused key set on a recipe the reader plans is refused as unsupported,
// naming the key, a no-effect key is warned about, and a planned key is
// never called unknown or unsupported.
func TestSchemaKeysPlannedOrRefused(t *testing.T) {
	paths := schemaPaths(t, shareddata.Path(t, "research", "srt-slurm-2", "docs", "schema", "recipe.schema.json"))
	if len(paths) < 400 {
		t.Fatalf("%d schema paths: the walk lost the schema", len(paths))
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	used := map[string]bool{}
	counts := map[schema2.Plan]int{}
	for _, p := range sorted {
		k, ok := schema2.KeyFor(p)
		if !ok {
			t.Errorf("%s: neither planned nor refused (no entry in schema2.Keys)", p)
			continue
		}
		used[k.Path] = true
		counts[k.Plan]++
		checkKeyBehaviour(t, p, paths[p], k)
	}
	for _, k := range schema2.Keys {
		if !used[k.Path] {
			t.Errorf("schema2.Keys entry %s names no key of the schema", k.Path)
		}
		if k.Plan != schema2.Planned && k.Why == "" {
			t.Errorf("%s: refused or dropped without a reason", k.Path)
		}
	}
	t.Logf("%d schema keys: %d planned, %d of no effect, %d refused", len(paths), counts[schema2.Planned], counts[schema2.NoEffect], counts[schema2.Refused])
}

// checkKeyBehaviour sets schema path p on keysRecipe and reads it.
func checkKeyBehaviour(t *testing.T, p, typ string, k schema2.Key) {
	t.Helper()
	if err := tryEngine(t, p, typ, k, ""); err != nil {
		t.Error(err)
	}
}

// tryEngine is checkKeyBehaviour with engine as the engine type of an
// engine.* key; the error says what the reader did against the entry.
func tryEngine(t *testing.T, p, typ string, k schema2.Key, engine string) error {
	t.Helper()
	if strings.Contains(p, ".*") && !strings.HasPrefix(p, "roles.*") || strings.Contains(p, "[].") && strings.Count(p, "[]") > 1 {
		return nil // a free-form map's entries or a list in a list: the entry above decides
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(keysRecipe), &doc); err != nil {
		t.Fatal(err)
	}
	m := doc.Content[0]
	target, rest := m, strings.Split(strings.Replace(p, "roles.*", "roles.prefill", 1), ".")
	switch {
	case strings.HasPrefix(p, "services[]."):
		var svc yaml.Node
		_ = yaml.Unmarshal([]byte(`[{name: svc, type: generic, command: ["true"]}]`), &svc)
		m.Content = append(m.Content, yamltree.StrKey("services"), svc.Content[0])
		target, rest = svc.Content[0].Content[0], strings.Split(strings.TrimPrefix(p, "services[]."), ".")
	case strings.Contains(p, "[]"):
		return nil
	case strings.HasPrefix(p, "engine.") && engine == "":
		// An engine option is one engine type's: it behaves as its entry
		// says under one of them.
		var last error
		for _, ty := range engineTypes {
			if last = tryEngine(t, p, typ, k, ty); last == nil {
				return nil
			}
		}
		return last
	case strings.HasPrefix(p, "engine."):
		_ = yamltree.SetPath(m, []string{"engine"}, sampleNode(t, "{type: "+engine+"}"))
	}
	src, ok := sampleValues[p]
	if !ok {
		if src, ok = map[string]string{"integer": "1", "number": "1", "boolean": "true", "array": "[]", "object": "{}"}[typ]; !ok {
			src = "x"
		}
	}
	if err := yamltree.SetPath(target, rest, sampleNode(t, src)); err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	data, err := yaml.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse("/keys/recipe.yaml", data)
	leaf := lastLiteral(k.Path)
	switch k.Plan {
	case schema2.Refused:
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), leaf) {
			return fmt.Errorf("%s (refused: %s): want an unsupported error naming %s, got %w", p, k.Why, leaf, err)
		}
	case schema2.NoEffect:
		if err != nil || !strings.Contains(strings.Join(r.Warnings, "\n"), p) {
			return fmt.Errorf("%s (no effect): want it read with a warning naming it, got %w", p, err)
		}
	default:
		if err != nil && (errors.Is(err, ErrUnsupported) || strings.Contains(err.Error(), "unknown key")) {
			return fmt.Errorf("%s (planned): the reader refuses it: %w", p, err)
		}
	}
	return nil
}

func sampleNode(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		t.Fatal(err)
	}
	return n.Content[0]
}

// lastLiteral is the last segment of an entry path that is not *.
func lastLiteral(p string) string {
	segs := strings.Split(p, ".")
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i] != "*" {
			return strings.TrimSuffix(segs[i], "[]")
		}
	}
	return p
}

// TestSetSchemaKeysDecidedByName: --set of a key the table drops or
// refuses is taken, and the reader then drops it with a warning or refuses
// it by name with why, as if the file set it (InferenceX's launcher sets
// benchmark.stream_output); a key the schema lacks is still "no key".
func TestSetSchemaKeysDecidedByName(t *testing.T) {
	for _, tc := range []struct {
		set, warn, refuse, noKey string
	}{
		{set: "benchmark.stream_output=true", warn: "benchmark.stream_output: dropped"},
		{set: "reporting.s3.bucket=x", refuse: "reporting: srtctl's reporting"},
		{set: "roles.decode.restart.policy=always", refuse: "roles.decode.restart: restarting a worker"},
		{set: "benchmark.no_such_key=1", noKey: `no key "no_such_key"`},
	} {
		t.Run(tc.set, func(t *testing.T) {
			o, err := ParseSet(tc.set)
			if err != nil {
				t.Fatal(err)
			}
			r, err := ParseWith("/keys/recipe.yaml", []byte(keysRecipe), Options{Overrides: []Override{o}})
			switch {
			case tc.warn != "":
				if err != nil || !strings.Contains(strings.Join(r.Warnings, "\n"), tc.warn) {
					t.Errorf("want a warning %q, got %v", tc.warn, err)
				}
			case tc.refuse != "":
				if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tc.refuse) {
					t.Errorf("want refused %q, got %v", tc.refuse, err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tc.noKey) {
					t.Errorf("want %q, got %v", tc.noKey, err)
				}
			}
		})
	}
}
