package schema2

import (
	"errors"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree/yamltreetest"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The node transform on its own; package recipe's schema2_test.go holds the
// rules as a recipe read sees them (decoded, validated, spelled).

func noKeyCheck(*yaml.Node) error { return nil }

// at renders the value at a dotted path of doc, "" when absent.
func at(doc *yaml.Node, path string) string {
	n := doc
	for _, p := range strings.Split(path, ".") {
		if n = yamltree.DeAlias(yamltree.Get(n, p)); n == nil {
			return ""
		}
	}
	return yamltree.PyStr(n)
}

// TestNormalizeMovesKeys: the schema-2 vocabulary lands in the v1 keys, on
// the lines the user wrote, each spelled back as written; the input tree is
// not edited.
func TestNormalizeMovesKeys(t *testing.T) {
	src := yamltreetest.Parse(t, `schema: 2
name: a
engine: {type: sglang, served_model_name: m}
roles:
  prefill: {nodes: 2, workers: 4, gpus: 4, env: {A: "1"}, args: {tp: 4}}
  decode: {nodes: colocate, workers: 1, gpus: 4}
frontend: {placement: {node: dedicated}}
dynamo: {source: {git: https://x/y.git, rev: abc}}
telemetry: {collect_interval_ms: 1500}
services:
  - {name: etcd, type: etcd, placement: {node: dedicated}}
  - {name: nats, type: nats, placement: {node: dedicated}, options: {max_payload_mb: 8}}
`)
	before := at(src, "roles.prefill.nodes")
	doc, spelling, warnings, err := Normalize("r.yaml", src, noKeyCheck)
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"backend.type": "sglang", "backend.served_model_name": "m",
		"resources.prefill_nodes": "2", "resources.prefill_workers": "4", "resources.gpus_per_prefill": "4",
		"resources.decode_nodes": "0", "backend.prefill_environment": `{"A": "1"}`, "backend.sglang_config.prefill": `{"tp": 4}`,
		"frontend.dedicated_node": "True", "dynamo.hash": "abc", "telemetry.default_frequency": "1.5",
		"infra.etcd_nats_dedicated_node": "True", "infra.nats_max_payload_mb": "8",
		"schema": "", "engine": "", "roles": "",
	} {
		if got := at(doc, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if at(src, "roles.prefill.nodes") != before || at(src, "schema") != "2" {
		t.Error("the input tree was edited")
	}
	if k, _ := yamltree.KeyValue(yamltree.Get(doc, "resources"), "prefill_workers"); k == nil || k.Line != 5 {
		t.Errorf("resources.prefill_workers key line %v, want 5 (where roles.prefill.workers is)", k)
	}
	for internal, want := range map[string]string{
		"resources.prefill_workers": "roles.prefill.workers", "backend.type": "engine.type",
		"backend.sglang_config.prefill.tp": "roles.prefill.args.tp", "frontend.dedicated_node": "frontend.placement.node",
		"dynamo.hash": "dynamo.source.rev", "infra.nats_max_payload_mb": "services[nats].options.max_payload_mb",
		"model.path": "model.path",
	} {
		if got := spelling.Of(internal); got != want {
			t.Errorf("spelling of %s = %q, want %q", internal, got, want)
		}
	}
	if len(warnings) != 0 {
		t.Errorf("warnings %q", warnings)
	}
}

// TestNormalizeErrorKinds: each refusal is an *Error of the kind the
// reader maps onto its own error types, at the line and field written.
func TestNormalizeErrorKinds(t *testing.T) {
	cases := []struct {
		name, text string
		kind       Kind
		line       int // in text; the document adds a schema: line above
		field, msg string
	}{
		{"decode nodes 0", "engine: sglang\nroles:\n  decode: {nodes: 0}\n", Invalid, 3, "roles.decode.nodes", "0 is not accepted"},
		{"legacy key beside roles", "engine: sglang\nresources:\n  prefill_workers: 2\nroles:\n  prefill: {workers: 1}\n", Invalid, 3, "resources.prefill_workers", "roles.prefill.workers (line 6)"},
		{"sidecar", "engine: sglang\nroles:\n  agg: {nodes: 1, sidecar: true}\n", Unsupported, 3, "roles.agg.sidecar", "is " + NotSupported},
		{"frontend type not run", "frontend: {type: llm-d}\n", Unsupported, 1, "frontend.type", "frontend type \"llm-d\" is " + NotSupported},
		{"fork-only engine knob", "engine: {type: tilert, weights_dir: /w}\n", SrtctlRefuses, 1, "engine.weights_dir", "SemiAnalysisAI fork"},
		{"conflict spelled as written", "engine: {type: sglang, served_model_name: a}\nbackend: {served_model_name: b}\n", Invalid, 1, "engine.served_model_name", "conflicts with backend.served_model_name (line 3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, _, err := Normalize("r.yaml", yamltreetest.Parse(t, "schema: 2\n"+c.text), noKeyCheck)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%T %v, want *Error", err, err)
			}
			if e.Kind != c.kind || e.Err.File != "r.yaml" || e.Err.Line != c.line+1 || e.Err.Field != c.field || !strings.Contains(e.Err.Msg, c.msg) {
				t.Errorf("got kind %d %s:%d %s: %s; want kind %d line %d %s containing %q", e.Kind, e.Err.File, e.Err.Line, e.Err.Field, e.Err.Msg, c.kind, c.line+1, c.field, c.msg)
			}
		})
	}
}

// TestNormalizeKeyCheck: the reader's key check sees the flattened
// document (merge keys applied) before anything moves, after the legacy
// keys are handled, and its error comes back unchanged.
func TestNormalizeKeyCheck(t *testing.T) {
	stop := errors.New("the reader's key check")
	var seen *yaml.Node
	check := func(doc *yaml.Node) error { seen = doc; return stop }
	_, _, _, err := Normalize("r.yaml", yamltreetest.Parse(t, "schema: 2\nx: &x {nodes: 1}\nroles:\n  agg:\n    <<: *x\n    workers: 1\n"), check)
	if err != stop { //nolint:errorlint // the same error value must come back
		t.Fatalf("err %v, want the check's own", err)
	}
	if at(seen, "roles.agg.nodes") != "1" || at(seen, "schema") != "" || yamltree.HasMerge(yamltree.DeAlias(yamltree.Get(yamltree.Get(seen, "roles"), "agg"))) {
		t.Errorf("the check saw an unflattened or already moved document")
	}
	called := false
	_, _, _, err = Normalize("r.yaml", yamltreetest.Parse(t, "schema: 2\nengine: sglang\nresources: {agg_nodes: 1}\nroles:\n  agg: {nodes: 1}\n"), func(*yaml.Node) error { called = true; return nil })
	var e *Error
	if !errors.As(err, &e) || called {
		t.Errorf("a legacy collision must be reported before the key check: err %v, check called %v", err, called)
	}
}

// TestNormalizeLegacyWarns: a v1 spelling that roles: does not also set
// loads, with a warning naming its schema-2 spelling.
func TestNormalizeLegacyWarns(t *testing.T) {
	doc, _, warnings, err := Normalize("r.yaml", yamltreetest.Parse(t, "schema: 2\nbenchmark: {client_placement: head}\n"), noKeyCheck)
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 1 || !strings.HasPrefix(warnings[0], "r.yaml:2: benchmark.client_placement: ") || !strings.Contains(warnings[0], "write benchmark.placement.node") {
		t.Errorf("warnings %q", warnings)
	}
	if at(doc, "benchmark.client_placement") != "head" {
		t.Error("the legacy key was not kept")
	}
}

// TestFlattenMerge: YAML merge order — a mapping's own keys win, then the
// earlier merge sources; aliases are followed into copies.
func TestFlattenMerge(t *testing.T) {
	doc := flatten(yamltreetest.Parse(t, "a: &a {x: 1, y: 1}\nb: &b {y: 2, z: 2}\nc:\n  <<: [*a, *b]\n  x: 3\nd: *a\n"))
	for path, want := range map[string]string{"c.x": "3", "c.y": "1", "c.z": "2", "d.x": "1"} {
		if got := at(doc, path); got != want {
			t.Errorf("%s = %q, want %q", path, got, want)
		}
	}
	if yamltree.HasMerge(yamltree.Get(doc, "c")) || yamltree.Get(doc, "d").Kind == yaml.AliasNode {
		t.Error("merge key or alias left in the flattened tree")
	}
}

func TestSpellingOf(t *testing.T) {
	s := Spelling{"backend": "engine", "backend.sglang_config.prefill": "roles.prefill.args"}
	for in, want := range map[string]string{
		"backend.type": "engine.type", "backend.sglang_config.prefill.tp": "roles.prefill.args.tp",
		"backendx": "backendx", "model": "model",
	} {
		if got := s.Of(in); got != want {
			t.Errorf("Of(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Spelling(nil).Of("a.b"); got != "a.b" {
		t.Errorf("nil spelling: %q", got)
	}
}
