package recipe

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// overrides parses "--set K=V" / "--unset K" strings.
func overrides(t *testing.T, flags ...string) []Override {
	t.Helper()
	var out []Override
	for _, f := range flags {
		var o Override
		var err error
		if rest, ok := strings.CutPrefix(f, "--unset "); ok {
			o, err = ParseUnset(rest)
		} else {
			o, err = ParseSet(strings.TrimPrefix(f, "--set "))
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, o)
	}
	return out
}

// applyText applies flags to a YAML document and returns it re-encoded.
func applyText(t *testing.T, text string, flags ...string) (string, error) {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		t.Fatal(err)
	}
	applied, err := ApplyOverrides(root.Content[0], overrides(t, flags...))
	if err != nil {
		return "", err
	}
	if len(applied) != len(flags) {
		t.Errorf("applied %q, want one per flag %q", applied, flags)
	}
	var out strings.Builder
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		t.Fatal(err)
	}
	return out.String(), nil
}

// TestApplyOverrides edits documents on the node tree: values land at their
// path with the file's comments and order kept, blocks are created where
// missing, and aliased or merged blocks are copied before an edit so the
// anchor's other users keep their value.
func TestApplyOverrides(t *testing.T) {
	cases := []struct {
		name, in string
		flags    []string
		want     string
	}{
		{"replace keeps comments and order",
			"name: a # the name\nhealth_check:\n  # how long\n  max_attempts: 60\n  interval_seconds: 1\n",
			[]string{"--set health_check.max_attempts=720"},
			"name: a # the name\nhealth_check:\n  # how long\n  max_attempts: 720\n  interval_seconds: 1\n"},
		{"new blocks are created",
			"name: a\n",
			[]string{"--set backend.sglang_config.prefill.dist-timeout=1800"},
			"name: a\nbackend:\n  sglang_config:\n    prefill:\n      dist-timeout: 1800\n"},
		{"a null block becomes a mapping",
			"health_check:\n",
			[]string{"--set health_check.max_attempts=5"},
			"health_check:\n  max_attempts: 5\n"},
		{"flow list value",
			"benchmark:\n  concurrencies: 8x32\n",
			[]string{"--set benchmark.concurrencies=[4, 16]"},
			"benchmark:\n  concurrencies: [4, 16]\n"},
		{"a mapping value stays literal text",
			"name: a\n",
			[]string{"--set name={x: 1}"},
			"name: '{x: 1}'\n"},
		{"empty value is null",
			"model:\n  stage_dir: /raid\n",
			[]string{"--set model.stage_dir="},
			"model:\n  stage_dir: null\n"},
		{"quoting of a same-typed scalar is kept",
			"model:\n  precision: \"fp8\"\n",
			[]string{"--set model.precision=fp4"},
			"model:\n  precision: \"fp4\"\n"},
		{"unset removes the key",
			"name: a\nhealth_check:\n  max_attempts: 60\n",
			[]string{"--unset health_check"},
			"name: a\n"},
		{"unset of an absent key does nothing",
			"name: a\n",
			[]string{"--unset health_check.max_attempts"},
			"name: a\n"},
		{"applied in order",
			"name: a\n",
			[]string{"--set health_check.max_attempts=5", "--unset health_check", "--set health_check.interval_seconds=2"},
			"name: a\nhealth_check:\n  interval_seconds: 2\n"},
		{"an aliased block is copied, the anchor unchanged",
			"frontend:\n  env: &e\n    A: \"1\"\nbenchmark:\n  env: *e\n",
			[]string{"--set benchmark.env.A=2"},
			"frontend:\n  env: &e\n    A: \"1\"\nbenchmark:\n  env:\n    A: 2\n"},
		{"a merged block is flattened, the anchor unchanged",
			"frontend:\n  env: &e\n    A: \"1\"\n    B: \"1\"\nbenchmark:\n  env:\n    <<: *e\n    B: \"3\"\n",
			[]string{"--set benchmark.env.A=2"},
			"frontend:\n  env: &e\n    A: \"1\"\n    B: \"1\"\nbenchmark:\n  env:\n    B: \"3\"\n    A: 2\n"},
		{"override file: base and the sections that set the path",
			"base:\n  name: a\n  health_check:\n    max_attempts: 60\noverride_x:\n  health_check:\n    max_attempts: 90\noverride_y:\n  name: b\n",
			[]string{"--set health_check.max_attempts=720"},
			"base:\n  name: a\n  health_check:\n    max_attempts: 720\noverride_x:\n  health_check:\n    max_attempts: 720\noverride_y:\n  name: b\n"},
		{"override file: a zip section gets a list as a one-element list",
			"base:\n  benchmark:\n    concurrencies: [8]\nzip_override_c:\n  benchmark:\n    concurrencies: [[4], [8]]\n",
			[]string{"--set benchmark.concurrencies=[1, 2]"},
			"base:\n  benchmark:\n    concurrencies: [1, 2]\nzip_override_c:\n  benchmark:\n    concurrencies:\n      - [1, 2]\n"},
		{"override file: unset everywhere",
			"base:\n  name: a\n  health_check:\n    max_attempts: 60\noverride_x:\n  health_check:\n    max_attempts: 90\n  name: b\n",
			[]string{"--unset health_check"},
			"base:\n  name: a\noverride_x:\n  name: b\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := applyText(t, tc.in, tc.flags...)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestOverrideErrors: a path the schema does not have names the nearest
// one it has; a value of the wrong type, and a path through a single
// value, are refused naming the flag.
func TestOverrideErrors(t *testing.T) {
	cases := []struct{ flag, want, suggestion string }{
		{"--set health_check.max_attemps=5", `no key "max_attemps" in health_check`, "health_check.max_attempts"},
		{"--set resource.prefill_nodes=2", `no key "resource" in the recipe's top level`, "resources.prefill_nodes"},
		{"--set backend.sglang_confg.prefill.tp=4", `no key "sglang_confg" in backend`, "backend.sglang_config.prefill.tp"},
		{"--set max_attempts=5", `no key "max_attempts"`, "health_check.max_attempts"},
		{"--set zzzzzzzz=1", `no key "zzzzzzzz"`, ""},
		{"--set resources.prefill_nodes=two", "wrong type", ""},
		{"--set resources.prefill_nodes=[1]", "wrong type", ""},
		{"--set resources=3", "wrong type", ""},
		{"--set health_check.max_attempts=true", "wrong type", ""},
		{"--set name.first=a", "name is a single value", ""},
		{"--unset resources.prefil_nodes", `no key "prefil_nodes" in resources`, "resources.prefill_nodes"},
		{"--set srun_options.mem=[1, 2]", "wrong type", ""},
	}
	for _, tc := range cases {
		t.Run(tc.flag, func(t *testing.T) {
			_, err := applyText(t, "name: a\n", tc.flag)
			var oe *OverrideError
			if !errors.As(err, &oe) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), tc.flag+": ") {
				t.Fatalf("err = %v, want an *OverrideError naming %q with %q", err, tc.flag, tc.want)
			}
			if oe.Suggestion != tc.suggestion {
				t.Errorf("suggestion %q, want %q (%v)", oe.Suggestion, tc.suggestion, err)
			}
		})
	}
	// A schema-2 document is checked against schema 2's keys.
	v2 := "schema: 2\nname: a\nroles:\n  prefill:\n    workers: 1\n"
	if got, err := applyText(t, v2, "--set roles.prefill.workers=2", "--set roles.decode.args.tp=4", "--set engine=vllm"); err != nil ||
		!strings.Contains(got, "  prefill:\n    workers: 2\n  decode:\n    args:\n      tp: 4\n") || !strings.Contains(got, "engine: vllm") {
		t.Errorf("schema 2: %v\n%s", err, got)
	}
	var oe *OverrideError
	if _, err := applyText(t, v2, "--set roles.prefil.workers=2"); !errors.As(err, &oe) || oe.Suggestion != "roles.prefill.workers" {
		t.Errorf("schema 2 typo: %v", err)
	}
	if _, err := applyText(t, v2, "--set roles.prefill.workers=many"); err == nil || !strings.Contains(err.Error(), "wrong type") {
		t.Errorf("schema 2 wrong type: %v", err)
	}
	// ... and a schema-1 one against schema 1's: roles is no key of it.
	if _, err := applyText(t, "name: a\n", "--set roles.prefill.workers=2"); !errors.As(err, &oe) || !strings.Contains(err.Error(), `no key "roles"`) {
		t.Errorf("schema 1 roles: %v", err)
	}
	for _, bad := range []string{"noequals", "a..b=1", "=1"} {
		if _, err := ParseSet(bad); err == nil {
			t.Errorf("ParseSet(%q) accepted", bad)
		}
	}
	// A path into a scalar the document has (not the schema) is refused too.
	if _, err := applyText(t, "backend:\n  sglang_config:\n    prefill: 5\n", "--set backend.sglang_config.prefill.tp=4"); err == nil || !strings.Contains(err.Error(), "is not a mapping (line 3)") {
		t.Errorf("through a scalar: %v", err)
	}
}

// TestParseWithOverrides: the edits are decoded and validated as if the
// file said them, reach every config of an override file, and are recorded.
func TestParseWithOverrides(t *testing.T) {
	r, err := ParseWith("/recipes/r.yaml", []byte(base), Options{Overrides: overrides(t, "--set resources.decode_workers=2", "--set benchmark.concurrencies=[4, 16]")})
	if err != nil {
		t.Fatal(err)
	}
	if *r.Resources.DecodeWorkers != 2 || len(r.Benchmark.Concurrencies.Values) != 2 || r.Benchmark.Concurrencies.Values[1] != 16 {
		t.Errorf("decoded %+v %+v", r.Resources, r.Benchmark.Concurrencies)
	}
	if strings.Join(r.Overrides, "|") != "--set resources.decode_workers=2|--set benchmark.concurrencies=[4, 16]" {
		t.Errorf("recorded %q", r.Overrides)
	}
	// Validation sees the edited value.
	if _, err := ParseWith("/recipes/r.yaml", []byte(base), Options{Overrides: overrides(t, "--set resources.gpus_per_node=0")}); err == nil || !strings.Contains(err.Error(), "resources.gpus_per_node") {
		t.Errorf("invalid value accepted: %v", err)
	}
	// An override file: every variant gets the value, also one whose section set it.
	bundle := "base:\n" + indent(base, "  ") + "override_a:\n  health_check:\n    max_attempts: 9\noverride_b:\n  name: other\n"
	for _, v := range []string{"override_a", "override_b", "base"} {
		r, err := ParseWith("/recipes/r.yaml", []byte(bundle), Options{Variant: v, Overrides: overrides(t, "--set health_check.max_attempts=720")})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if r.Health == nil || *r.Health.MaxAttempts != 720 {
			t.Errorf("%s: health_check %+v", v, r.Health)
		}
	}
}
