package recipe

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/recipetest"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
)

// base is a small valid disaggregated recipe; cases edit it.
const base = recipetest.Base

func parse(t *testing.T, text string) (*Recipe, error) {
	t.Helper()
	return Parse("/recipes/r.yaml", []byte(text))
}

func mustParse(t *testing.T, text string) *Recipe {
	t.Helper()
	r, err := parse(t, text)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, text)
	}
	return r
}

// edit replaces old by new in base, failing if old is not there.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if !strings.Contains(base, old) {
		t.Fatalf("test bug: %q not in base recipe", old)
	}
	return strings.Replace(base, old, new, 1)
}

func TestParseBase(t *testing.T) {
	r := mustParse(t, base)
	if r.Name != "test-1p1d" || r.Model.Path != "dsr1" || *r.Resources.PrefillNodes != 1 || !r.Resources.Disaggregated() {
		t.Errorf("decoded %+v", r)
	}
	if r.Path != "/recipes/r.yaml" || len(r.SHA256) != 64 {
		t.Errorf("path %q sha %q", r.Path, r.SHA256)
	}
	if got := r.Line("resources.prefill_nodes"); got != 9 {
		t.Errorf("line of resources.prefill_nodes = %d, want 9", got)
	}
}

func TestConcurrencyForms(t *testing.T) {
	good := []struct {
		yaml string
		want []int
	}{
		{`"16x32"`, []int{16, 32}},
		{`"1x4x8x16x32x64x256"`, []int{1, 4, 8, 16, 32, 64, 256}},
		{`'2048'`, []int{2048}},
		{`2048`, []int{2048}},
		{`[4, 8, 16]`, []int{4, 8, 16}},
		{"\n    - 32\n    - 64", []int{32, 64}},
		{`"8 16"`, []int{8, 16}},
		{`"8,16"`, []int{8, 16}},
	}
	for _, tc := range good {
		r := mustParse(t, edit(t, `concurrencies: "16x32"`, "concurrencies: "+tc.yaml))
		if !reflect.DeepEqual(r.Benchmark.Concurrencies.Values, tc.want) {
			t.Errorf("concurrencies: %s = %v, want %v", tc.yaml, r.Benchmark.Concurrencies.Values, tc.want)
		}
	}
	bad := []struct{ yaml, want string }{
		{`"16xabc"`, "not a whole number"},
		{`""`, "empty"},
		{`[]`, "empty list"},
		{`[0, 8]`, "must be positive"},
		{`"-4"`, "must be positive"},
		{`[1.5]`, "not a whole number"},
		{`{a: 1}`, "want a list"},
		{`[[1]]`, "not a whole number"},
	}
	for _, tc := range bad {
		_, err := parse(t, edit(t, `concurrencies: "16x32"`, "concurrencies: "+tc.yaml))
		if err == nil {
			t.Errorf("concurrencies: %s accepted", tc.yaml)
			continue
		}
		if !strings.Contains(err.Error(), "benchmark.concurrencies") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("concurrencies: %s: error %q, want benchmark.concurrencies ... %s", tc.yaml, err, tc.want)
		}
	}
}

// flagsOf renders the prefill sglang_config written as YAML lines.
func flagsOf(t *testing.T, cfg string) []string {
	t.Helper()
	var b strings.Builder
	b.WriteString(base)
	b.WriteString("  # trailing\n")
	text := strings.Replace(b.String(), "  type: sglang\n", "  type: sglang\n  sglang_config:\n    prefill:\n"+indent(cfg, "      "), 1)
	r := mustParse(t, text)
	return Flags(r.Backend.SGLangConfig.Prefill)
}

func indent(s, pre string) string {
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		out.WriteString(pre + line + "\n")
	}
	return out.String()
}

// TestFlagsRule is srtctl's _config_to_cli_args, case by case, with the
// string Python's str() gives for each parsed YAML value.
func TestFlagsRule(t *testing.T) {
	cases := []struct {
		name string
		cfg  string
		want []string
	}{
		{"true is a bare flag", "trust-remote-code: true", []string{"--trust-remote-code"}},
		{"True is a bare flag", "trust-remote-code: True", []string{"--trust-remote-code"}},
		{"false is omitted", "disable-cuda-graph: false", nil},
		{"null is omitted", "a: null\nb: ~\nc:", nil},
		{"underscores become dashes", "mem_fraction_static: 0.85", []string{"--mem-fraction-static", "0.85"}},
		{"float 0.85", "mem-fraction-static: 0.85", []string{"--mem-fraction-static", "0.85"}},
		{"float 1.0 keeps .0", "x: 1.0", []string{"--x", "1.0"}},
		{"float 2.50 canonical", "x: 2.50", []string{"--x", "2.5"}},
		{"float 1e-05 exponent", "x: 1.0e-05", []string{"--x", "1e-05"}},
		{"int", "max-prefill-tokens: 32768", []string{"--max-prefill-tokens", "32768"}},
		{"negative int", "x: -1", []string{"--x", "-1"}},
		{"quoted int stays text", "x: '1800'", []string{"--x", "1800"}},
		{"quoted true is text", "x: \"true\"", []string{"--x", "true"}},
		{"string", "attention-backend: trtllm_mla", []string{"--attention-backend", "trtllm_mla"}},
		{"string with spaces is one argv item", "x: \"a b\"", []string{"--x", "a b"}},
		{"list repeated", "cuda-graph-bs: [1, 2, 4]", []string{"--cuda-graph-bs", "1", "2", "4"}},
		{"block list", "x:\n  - a\n  - 0.5\n  - true", []string{"--x", "a", "0.5", "True"}},
		{"mapping as JSON", "x: {b: 1, a: \"s\", c: [true, 0.5]}", []string{"--x", `{"a": "s", "b": 1, "c": [true, 0.5]}`}},
		{"keys sorted", "zeta: 1\nalpha: 2\nmid: true", []string{"--alpha", "2", "--mid", "--zeta", "1"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := flagsOf(t, tc.cfg)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Flags(%s) = %q, want %q", tc.cfg, got, tc.want)
			}
		})
	}
}

func TestPyFloat(t *testing.T) {
	cases := map[float64]string{0.85: "0.85", 1: "1.0", 0: "0.0", 100: "100.0", 1e-05: "1e-05", 0.0001: "0.0001", 1e16: "1e+16", 123456789012345.0: "123456789012345.0", -2.5: "-2.5"}
	for f, want := range cases {
		if got := pyfloat.Repr(f); got != want {
			t.Errorf("pyfloat.Repr(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestEnvValuesArePythonStrings(t *testing.T) {
	r := mustParse(t, base+"environment:\n  A: 1\n  B: true\n  C: 0.5\n  D: 'x y'\n  E: null\n  F: False\n")
	got := r.Env.Strings()
	want := map[string]string{"A": "1", "B": "True", "C": "0.5", "D": "x y", "E": "", "F": "False"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("env = %v, want %v", got, want)
	}
}

// Anchors, aliases and merge keys are how corpus recipes share blocks.
func TestAnchorsAliasesAndMergeKeys(t *testing.T) {
	text := strings.Replace(base, "  type: sglang\n", `  type: sglang
  prefill_environment: &env
    PYTHONUNBUFFERED: '1'
    NCCL_CUMEM_ENABLE: '1'
  decode_environment: *env
  sglang_config:
    prefill: &common
      trust-remote-code: true
      mem-fraction-static: 0.85
      tensor-parallel-size: 8
    decode:
      <<: *common
      mem-fraction-static: 0.75
      cuda-graph-max-bs: 256
`, 1)
	r := mustParse(t, text)
	if !reflect.DeepEqual(r.Backend.PrefillEnv.Strings(), r.Backend.DecodeEnv.Strings()) || len(r.Backend.DecodeEnv) != 2 {
		t.Errorf("aliased env: prefill %v decode %v", r.Backend.PrefillEnv.Strings(), r.Backend.DecodeEnv.Strings())
	}
	got := Flags(r.Backend.SGLangConfig.Decode)
	want := []string{"--cuda-graph-max-bs", "256", "--mem-fraction-static", "0.75", "--tensor-parallel-size", "8", "--trust-remote-code"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged decode flags = %q, want %q", got, want)
	}
	if got := Flags(r.Backend.SGLangConfig.Prefill); !reflect.DeepEqual(got, []string{"--mem-fraction-static", "0.85", "--tensor-parallel-size", "8", "--trust-remote-code"}) {
		t.Errorf("prefill flags changed by the merge: %q", got)
	}
	// A merge key does not count as a duplicate, but a key set twice next to it does.
	dup := strings.Replace(text, "      mem-fraction-static: 0.75\n", "      mem-fraction-static: 0.75\n      mem-fraction-static: 0.7\n", 1)
	if _, err := parse(t, dup); err == nil || !strings.Contains(err.Error(), "backend.sglang_config.decode.mem-fraction-static") {
		t.Errorf("duplicate beside a merge key: err = %v", err)
	}
}

func TestUnknownKeyHasFileAndLine(t *testing.T) {
	cases := []struct {
		text, key string
		line      int
	}{
		{edit(t, "  prefill_nodes: 1\n", "  prefil_nodes: 1\n"), "prefil_nodes", 9},
		{base + "colour: red\n", "colour", 20},
		{edit(t, "  precision: fp4\n", "  precision: fp4\n  revision: main\n"), "revision", 6},
		{edit(t, "  isl: 1024\n", "  isl: 1024\n  concurency: 4\n"), "concurency", 18},
	}
	for _, tc := range cases {
		_, err := parse(t, tc.text)
		if err == nil {
			t.Errorf("unknown key %s accepted", tc.key)
			continue
		}
		want := fmt.Sprintf("/recipes/r.yaml:%d:", tc.line)
		if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `"`+tc.key+`"`) {
			t.Errorf("unknown key %s: error %q, want %q and the key", tc.key, err, want)
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("unknown key %s: error spans lines: %q", tc.key, err)
		}
	}
}

func TestDuplicateKeyRefused(t *testing.T) {
	_, err := parse(t, edit(t, "  decode_workers: 1\n", "  decode_workers: 1\n  decode_workers: 2\n"))
	var de *DuplicateKeyError
	if !errors.As(err, &de) || de.Err.Field != "resources.decode_workers" || de.Err.Line != 13 || de.FirstLine != 12 ||
		!strings.Contains(de.Err.Msg, `"1" (line 12) then "2" (line 13)`) {
		t.Fatalf("err = %#v", err)
	}
}

func TestWrongTypesNamed(t *testing.T) {
	cases := []struct{ old, new, field, want string }{
		{"  prefill_nodes: 1\n", "  prefill_nodes: one\n", "resources.prefill_nodes", "want an integer"},
		{"  prefill_nodes: 1\n", "  prefill_nodes: [1]\n", "resources.prefill_nodes", "want an integer"},
		{"  prefill_nodes: 1\n", "  prefill_nodes:\n    - 1\n", "resources.prefill_nodes", "want an integer"},
		{"  path: dsr1\n", "  path: {a: 1}\n", "model.path", "want a string"},
		{"  type: sglang\n", "  type: sglang\n  prefill_environment: [A]\n", "backend.prefill_environment", "want a mapping"},
		{"  isl: 1024\n", "  isl: 1024\n  use_chat_template: maybe\n", "benchmark.use_chat_template", "want true or false"},
		// Several keys on one line: the error names their common parent.
		{"resources:\n  gpu_type: b200\n  gpus_per_node: 8\n  prefill_nodes: 1\n  prefill_workers: 1\n  decode_nodes: 1\n  decode_workers: 1\n",
			"resources: {gpus_per_node: 8, prefill_nodes: x, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}\n", "resources", "want an integer"},
	}
	for _, tc := range cases {
		_, err := parse(t, edit(t, tc.old, tc.new))
		var re *Error
		if !errors.As(err, &re) {
			t.Errorf("%q: err = %v, want an *Error", tc.new, err)
			continue
		}
		if re.Field != tc.field || re.Line == 0 || !strings.Contains(re.Msg, tc.want) {
			t.Errorf("%q: field %q line %d msg %q; want field %s and %q", tc.new, re.Field, re.Line, re.Msg, tc.field, tc.want)
		}
		if !strings.Contains(err.Error(), "/recipes/r.yaml:") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %q is not one line with file:line", tc.new, err)
		}
	}
	// Unknown keys are named with their block too.
	_, err := parse(t, edit(t, "  prefill_nodes: 1\n", "  prefil_nodes: 1\n"))
	var re *Error
	if !errors.As(err, &re) || re.Field != "resources.prefil_nodes" {
		t.Errorf("unknown key: %#v", err)
	}
}

// TestInvalidValuesNameField: malformed values are refused with the field.
func TestInvalidValuesNameField(t *testing.T) {
	cases := []struct{ name, old, new, field string }{
		{"no name", "name: test-1p1d\n", "", "name"},
		{"name with slash", "name: test-1p1d\n", "name: a/b\n", "name"},
		{"name with NUL", "name: test-1p1d\n", "name: \"a\\0b\"\n", "name"},
		{"name with space", "name: test-1p1d\n", "name: a b\n", "name"},
		{"name leading dot", "name: test-1p1d\n", "name: .hidden\n", "name"},
		{"no model path", "  path: dsr1\n", "", "model.path"},
		{"no container", "  container: lmsysorg/sglang:v0.5.12\n", "", "model.container"},
		{"container with space", "  container: lmsysorg/sglang:v0.5.12\n", "  container: \"lmsysorg/sglang v1\"\n", "model.container"},
		{"zero prefill nodes", "  prefill_nodes: 1\n", "  prefill_nodes: 0\n", "resources.prefill_nodes"},
		{"negative decode nodes", "  decode_nodes: 1\n", "  decode_nodes: -1\n", "resources.decode_nodes"},
		{"zero prefill workers", "  prefill_workers: 1\n", "  prefill_workers: 0\n", "resources.prefill_workers"},
		{"missing decode workers", "  decode_workers: 1\n", "", "resources.decode_workers"},
		{"zero gpus per node", "  gpus_per_node: 8\n", "  gpus_per_node: 0\n", "resources.gpus_per_node"},
		{"negative gpus per prefill", "  gpus_per_node: 8\n", "  gpus_per_node: 8\n  gpus_per_prefill: -8\n", "resources.gpus_per_prefill"},
		{"agg mixed with disagg", "  decode_workers: 1\n", "  decode_workers: 1\n  agg_nodes: 1\n", "resources.agg_nodes"},
		{"no topology", "  prefill_nodes: 1\n  prefill_workers: 1\n  decode_nodes: 1\n  decode_workers: 1\n", "", "resources"},
		{"bad backend", "  type: sglang\n", "  type: tgi\n", "backend.type"},
		{"bad frontend", "benchmark:\n", "frontend:\n  type: nginx\nbenchmark:\n", "frontend.type"},
		{"zero isl", "  isl: 1024\n", "  isl: 0\n", "benchmark.isl"},
		{"bad req_rate", "  osl: 1024\n", "  osl: 1024\n  req_rate: fast\n", "benchmark.req_rate"},
		{"bad range ratio", "  osl: 1024\n", "  osl: 1024\n  random_range_ratio: 1.5\n", "benchmark.random_range_ratio"},
		{"bad env name", "  type: sglang\n", "  type: sglang\n  decode_environment:\n    BAD-NAME: 1\n", "backend.decode_environment"},
		{"bad extra mount", "benchmark:\n", "extra_mount: [\"/a\"]\nbenchmark:\n", "extra_mount"},
		{"two dynamo sources", "benchmark:\n", "dynamo:\n  hash: abc\n  wheel: 1.2.0\nbenchmark:\n", "dynamo"},
		{"bad request plane", "benchmark:\n", "dynamo:\n  request_plane: zmq\nbenchmark:\n", "dynamo.request_plane"},
		{"zero health attempts", "benchmark:\n", "health_check:\n  max_attempts: 0\nbenchmark:\n", "health_check.max_attempts"},
		{"req_rate with words", "  osl: 1024\n", "  osl: 1024\n  req_rate: \"5 per second\"\n", "benchmark.req_rate"},
		{"req_rate nan", "  osl: 1024\n", "  osl: 1024\n  req_rate: nan\n", "benchmark.req_rate"},
		{"req_rate +Inf", "  osl: 1024\n", "  osl: 1024\n  req_rate: \"+Inf\"\n", "benchmark.req_rate"},
		{"req_rate hex", "  osl: 1024\n", "  osl: 1024\n  req_rate: \"0x10\"\n", "benchmark.req_rate"},
		{"range ratio nan", "  osl: 1024\n", "  osl: 1024\n  random_range_ratio: .nan\n", "benchmark.random_range_ratio"},
		{"mount with comma", "benchmark:\n", "extra_mount: [\"/a,b:/b\"]\nbenchmark:\n", "extra_mount"},
		{"mount with space", "benchmark:\n", "extra_mount: [\"/a b:/b\"]\nbenchmark:\n", "extra_mount"},
		{"mount with 4 fields", "benchmark:\n", "extra_mount: [\"/a:/b:ro:x\"]\nbenchmark:\n", "extra_mount"},
		{"mount relative source", "benchmark:\n", "extra_mount: [\"data:/data\"]\nbenchmark:\n", "extra_mount"},
		{"container mount relative source", "benchmark:\n", "container_mounts: {data: /data}\nbenchmark:\n", "container_mounts"},
		{"custom without command", "  type: sa-bench\n", "  type: custom\n", "benchmark.command"},
		{"command without custom", "  type: sa-bench\n", "  type: sa-bench\n  command: bash x.sh\n", "benchmark.command"},
		{"bad client placement", "  type: sa-bench\n", "  type: sa-bench\n  client_placement: first_prefill\n", "benchmark.client_placement"},
		{"tokenizer with space", "  osl: 1024\n", "  osl: 1024\n  custom_tokenizer: a b\n", "benchmark.custom_tokenizer"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, edit(t, tc.old, tc.new))
			if err == nil {
				t.Fatal("accepted")
			}
			if errors.Is(err, ErrUnsupported) {
				t.Errorf("malformed value reported as unsupported: %v", err)
			}
			if !strings.Contains(err.Error(), ": "+tc.field+": ") {
				t.Errorf("error %q does not name %s", err, tc.field)
			}
		})
	}
}

// TestUnsupportedNamesField: valid srt-slurm features slurmbench does not
// run are refused with ErrUnsupported and the field, never ignored.
func TestUnsupportedNamesField(t *testing.T) {
	cases := []struct{ name, old, new, field string }{
		{"otel", "benchmark:\n", "observability:\n  enabled: false\n  enable_otel: true\nbenchmark:\n", "observability.enable_otel"},
		{"tachometer", "benchmark:\n", "observability:\n  tachometer:\n    enabled: true\nbenchmark:\n", "observability.tachometer.enabled"},
		{"het jobs", "  decode_workers: 1\n", "  decode_workers: 1\n  het_jobs: true\n", "resources.het_jobs"},
		{"no srtctl runner", "  type: sa-bench\n", "  type: gsm8k-bench\n", "benchmark.type"},
		{"observability", "benchmark:\n", "observability:\n  enabled: true\n  tachometer: {enabled: true}\nbenchmark:\n", "observability.enabled"},
		{"dedicated frontend node", "benchmark:\n", "frontend:\n  dedicated_node: true\nbenchmark:\n", "frontend.dedicated_node"},
		{"sweep", "name: test-1p1d\n", "name: test-1p1d\nsweep: {}\n", "sweep"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, edit(t, tc.old, tc.new))
			var ue *UnsupportedError
			if !errors.As(err, &ue) || !errors.Is(err, ErrUnsupported) {
				t.Fatalf("err = %v, want an *UnsupportedError", err)
			}
			if ue.Err.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", ue.Err.Field, tc.field, err)
			}
			if ue.Err.Line == 0 {
				t.Errorf("no line in %v", err)
			}
		})
	}
	// Disabled features are not refused.
	for _, off := range []string{"telemetry:\n  enabled: false\n", "profiling:\n  type: none\n"} {
		if _, err := parse(t, base+off); err != nil {
			t.Errorf("disabled %q refused: %v", off, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"a", "b200-fp4-dsr1_8k1k_mtp_4p1d_c2048", "x.y+z", strings.Repeat("n", 128)} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a/b", "a\x00b", "a b", ".a", "-a", "a\nb", "a:b", strings.Repeat("n", 129), "ü"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("CheckName(%q) accepted", bad)
		}
	}
}

func TestLoadReadsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.yaml")
	if err := os.WriteFile(path, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Load(path)
	if err != nil || r.Path != path {
		t.Fatalf("Load = %v, %v", r, err)
	}
	if _, err := Load(path + ".missing"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	for _, bad := range []string{"", "- a\n- b\n", "name: [\n"} {
		if _, err := Parse(path, []byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}
