package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// TestMigrateGolden migrates each testdata/migrate/*.v1.yaml and compares
// the document, then the notes, with the golden *.v2.yaml (-update
// rewrites them). The inputs cover every rule: roles from resources,
// backend env/extra_args/<engine>_config, decode_nodes 0 → colocate,
// placement of frontend and benchmark, infra → etcd/nats services (and
// left alone under a frontend without a discovery plane), dynamo.source
// from hash+cargo_patches, wheel and version (top_of_tree left), unused
// benchmark keys removed, mooncake_kv_store → a service plus role env,
// kv_events_config → roles.*.kv_events, backend → engine (string or
// mapping), v1 frontend.type sglang → sglang-router, anchors, comments, and
// override files section by section.
func TestMigrateGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "migrate", "*.v1.yaml"))
	if err != nil || len(inputs) < 5 {
		t.Fatalf("inputs %v: %v", inputs, err)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Migrate(in, data, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Changed {
				t.Error("not changed")
			}
			out := strings.TrimSuffix(in, ".v1.yaml")
			golden.Assert(t, out+".v2.yaml", res.Text)
			golden.Assert(t, out+".notes", []byte(strings.Join(res.Notes, "\n")+"\n"))
			// The output is YAML that parses, declares schema 2 first, and
			// keeps every comment of the input.
			var root yaml.Node
			if err := yaml.Unmarshal(res.Text, &root); err != nil {
				t.Fatalf("migrated document does not parse: %v", err)
			}
			if k := root.Content[0].Content[0]; k.Value != "schema" || root.Content[0].Content[1].Value != "2" {
				t.Errorf("first key %q, want schema: 2", k.Value)
			}
			for _, c := range comments(data) {
				if !strings.Contains(string(res.Text), c) {
					t.Errorf("comment %q lost", c)
				}
			}
			// No v1 spelling is left (infra.etcd_nats_dedicated_node stays
			// on purpose under a frontend without etcd/NATS, dynamo.version
			// beside top_of_tree, as srtctl leaves them).
			for _, legacy := range []string{"prefill_nodes", "decode_workers", "_environment", "sglang_config:", "orchestrator_placement", "client_placement", "client_dedicated_node", "\n  dedicated_node:", "hash:", "\n  wheel:", "version:", "backend:", "mooncake_kv_store", "kv_events_config", "nats_max_payload_mb"} {
				if strings.Contains(string(res.Text), legacy) && !(legacy == "version:" && strings.Contains(in, "top-of-tree")) {
					t.Errorf("v1 spelling %q left in the migration", legacy)
				}
			}
			// Migrating is idempotent in the sense srtctl's is: the result
			// is schema 2, which Migrate refuses.
			if _, err := Migrate(in, res.Text, Options{}); !errors.Is(err, ErrAlreadySchema2) {
				t.Errorf("migrating the migration: %v, want ErrAlreadySchema2", err)
			}
		})
	}
}

// comments returns the comment texts of a YAML file, each from its '#'.
func comments(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if i := strings.Index(l, "#"); i >= 0 && !strings.Contains(l[:i], "'") && !strings.Contains(l[:i], "\"") {
			out = append(out, strings.TrimSpace(l[i:]))
		}
	}
	sort.Strings(out)
	return out
}

// TestMigrateRefuses: what Migrate will not rewrite, and why.
func TestMigrateRefuses(t *testing.T) {
	cases := []struct {
		name, text string
		check      func(error) bool
		want       string
	}{
		{"already schema 2", "schema: 2\nname: a\nengine: sglang\n", func(err error) bool { return errors.Is(err, ErrAlreadySchema2) }, "already schema 2"},
		{"unknown schema", "schema: 3\nname: a\n", func(err error) bool { var e *recipe.Error; return errors.As(err, &e) && e.Field == "schema" }, `"3" is not a supported schema version`},
		{"not a recipe", "dsr1-fp4-key:\n  image: x\n", func(err error) bool { var e *NotRecipeError; return errors.As(err, &e) }, "not a recipe"},
		{"duplicate key", "name: a\nname: b\n", func(err error) bool { var e *recipe.DuplicateKeyError; return errors.As(err, &e) }, "set twice"},
		{"two documents", "name: a\n---\nname: b\n", func(err error) bool { var e *recipe.Error; return errors.As(err, &e) }, "second YAML document"},
		{"bad --set", "name: a\n", func(err error) bool { var e *recipe.OverrideError; return errors.As(err, &e) }, "did you mean"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{}
			if tc.name == "bad --set" {
				opt.Overrides = overrides(t, "--set health_check.max_attemps=1")
			}
			_, err := Migrate("/r.yaml", []byte(tc.text), opt)
			if err == nil || !tc.check(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	// A duplicate key is migrated, last value kept, when allowed.
	res, err := Migrate("/r.yaml", []byte("name: a\nname: b\nmodel: {path: m}\n"), Options{AllowDuplicateKeys: true})
	if err != nil || !strings.Contains(string(res.Text), "name: b") || strings.Contains(string(res.Text), "name: a") {
		t.Errorf("allowed duplicate: %v\n%s", err, res.Text)
	}
	// --set edits the original before it is migrated, and lands at its v2 place.
	res, err = Migrate("/r.yaml", []byte("name: a\nresources:\n  prefill_nodes: 1\n"), Options{Overrides: overrides(t, "--set resources.prefill_nodes=3")})
	if err != nil || !strings.Contains(string(res.Text), "roles:\n  prefill:\n    nodes: 3\n") || len(res.Applied) != 1 {
		t.Errorf("--set before migrating: %v\n%s", err, res.Text)
	}
}

// TestMigrateCorpus migrates every recipe of InferenceX's schema-1 tree
// (keeping the last of a key set twice, as srtctl reads them): each
// migrates, the result is schema 2 that the reader reads as such (every
// config of an override file), and every comment of the original is in
// it, also those on keys the migration replaced.
func TestMigrateCorpus(t *testing.T) {
	files := corpusFiles(t)
	comm, read := 0, 0
	for _, f := range files {
		rel, _ := filepath.Rel(corpusDir(t), f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Migrate(f, data, Options{AllowDuplicateKeys: true})
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		for _, c := range comments(data) {
			comm++
			if !strings.Contains(string(res.Text), c) {
				t.Errorf("%s: comment %q lost", rel, c)
			}
		}
		opt := recipe.Options{AllowDuplicateKeys: true}
		r, err := recipe.ParseWith(f, res.Text, opt)
		var ve *recipe.VariantError
		if errors.As(err, &ve) {
			for _, v := range ve.Variants {
				opt.Variant = v
				if r, err = recipe.ParseWith(f, res.Text, opt); err != nil {
					break
				}
			}
		}
		switch {
		case err == nil && r.SchemaVersion == 2:
			read++
		case err == nil:
			t.Errorf("%s: the migration was read as schema %d", rel, r.SchemaVersion)
		default:
			// A typed refusal is the original's too (TestMigrationEquivalence
			// in package launcher compares the outcomes); any other error is
			// the migration's fault.
			var ue *recipe.UnsupportedError
			var se *recipe.SrtctlRefusalError
			if !errors.As(err, &ue) && !errors.As(err, &se) {
				t.Errorf("%s: the migration does not read: %v", rel, err)
			}
		}
	}
	t.Logf("migrated %d recipes; %d read back as schema 2; %d comments kept", len(files), read, comm)
	// The corpus's 469 recipes hold 1468 comments; each migration reads
	// back (the 4 the original refuses for benchmark.aiperf_server_metrics
	// too: an sa-bench key srt-slurm 2.x refuses, which the migration drops).
	if len(files) != 469 || comm != 1468 || read != 469 {
		t.Errorf("%d recipes, %d comments, %d read back as schema 2; want 469, 1468, 469", len(files), comm, read)
	}
}
