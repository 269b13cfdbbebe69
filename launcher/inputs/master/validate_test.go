package master

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Built entries, one per model validation.py distinguishes; each case
// below breaks one rule of one of them.
const (
	validMultiDisagg = `mn:
  image: img
  model: org/m
  model-prefix: dsr1
  runner: cluster:gb300-nv
  precision: fp8
  framework: dynamo-sglang
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  srt-recipe-dir: dsr1/sglang/gb300
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [16, 32]
        srt-recipe: a.yaml:override_x
        eval-srt-recipe: e.yaml
        power: true
        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true, hardware: b200}
        decode: {num-worker: 2, tp: 8, ep: 8, dp-attn: false, hardware: h100, dcp-size: 2}
`
	validMultiAgg = `agg:
  image: img
  model: org/m
  model-prefix: kimik3
  runner: cluster:h200-dgxc
  precision: fp4
  framework: vllm
  multinode: true
  disagg: false
  router: {name: vllm-router, version: 0.1.9}
  srt-recipe-dir: kimik3/vllm
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - conc-list: [1, 2]
        num-nodes: 4
        kv-offloading: dram
        kv-offload-backend: {name: lmcache, version: 0.3.1}
        srt-recipe: agg.yaml:zip_override_c[1]
        worker: {num-worker: 2, tp: 16, ep: 32, dp-attn: true}
`
	validSingle = `sn:
  image: img
  model: org/m
  model-prefix: dsv4
  runner: cluster:b200-nscale
  precision: fp4
  framework: sglang
  multinode: false
  srt-recipe-dir: dsv4/sglang/b200
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - {tp: 8, ep: 1, conc-start: 4, conc-end: 64, srt-recipe: 1k1k.yaml, spec-decoding: mtp, pcp-size: 2}
    agentic-coding:
    - dram-utilization: 0.5
      search-space:
      - {tp: 4, kv-offloading: none, conc-list: [3], srt-recipe: agentic.yaml:base}
`
)

func validate(t *testing.T, doc string) []Issue {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatalf("test document: %v", err)
	}
	root := n.Content[0]
	var out []Issue
	for i := 0; i+1 < len(root.Content); i += 2 {
		out = append(out, ValidateEntry("m.yaml", root.Content[i].Value, root.Content[i+1])...)
	}
	return out
}

func TestValidEntriesPass(t *testing.T) {
	for _, doc := range []string{validMultiDisagg, validMultiAgg, validSingle} {
		if is := validate(t, doc); len(is) != 0 {
			t.Errorf("%s: %v", strings.SplitN(doc, ":", 2)[0], is)
		}
	}
}

// TestValidationRules: each case breaks one rule; the issue names the
// rule, the field and the line (a missing field: the first line of the
// mapping that lacks it).
func TestValidationRules(t *testing.T) {
	for _, c := range []struct {
		name, base, old, new string
		rule, field          string
		at                   string // text on the line the issue must name
	}{
		{"unknown entry field", validSingle, "  multinode: false\n", "  multinode: false\n  trace-source: x\n", "SingleNodeMasterConfigEntry forbids extra fields", "trace-source", "trace-source: x"},
		{"unknown row field", validMultiDisagg, "        power: true\n", "        power: true\n        CONFIG_FILE: x\n", "MultiNodeSearchSpaceEntry forbids extra fields", "search-space[0].CONFIG_FILE", "CONFIG_FILE: x"},
		{"unknown worker field", validMultiDisagg, "hardware: h100,", "hardware: h100, gpus: 3,", "WorkerConfig forbids extra fields", "decode.gpus", "gpus: 3"},
		{"unknown agentic scenario field", validMultiAgg, "    - dram-utilization: 0.8\n", "    - dram-utilization: 0.8\n      trace-source: weka\n", "AgenticCodingConfig forbids extra fields", "agentic-coding[0].trace-source", "trace-source: weka"},
		{"unknown router field", validMultiAgg, "version: 0.1.9}", "version: 0.1.9, url: x}", "ComponentMetadata forbids extra fields", "router.url", "url: x"},
		{"multinode required", validSingle, "  multinode: false\n", "", "field required", "multinode", "image: img"},
		{"single-node disagg", validSingle, "  multinode: false\n", "  multinode: false\n  disagg: true\n", "must be false on a single-node entry", "disagg", "disagg: true"},
		{"srt-recipe-dir required (single)", validSingle, "  srt-recipe-dir: dsv4/sglang/b200\n", "", "field required by SingleNodeMasterConfigEntry", "srt-recipe-dir", "image: img"},
		{"srt-recipe-dir required (multi)", validMultiDisagg, "  srt-recipe-dir: dsr1/sglang/gb300\n", "", "srt-slurm configs require srt-recipe-dir", "srt-recipe-dir", "image: img"},
		{"srt-recipe-dir not normalized", validSingle, "dsv4/sglang/b200", "dsv4/../b200", "must be a normalized relative path", "srt-recipe-dir", "srt-recipe-dir:"},
		{"srt-recipe absolute", validSingle, "srt-recipe: 1k1k.yaml", "srt-recipe: /x/1k1k.yaml", "must be a normalized relative path", "srt-recipe", "srt-recipe: /x"},
		{"bad selector", validMultiDisagg, "a.yaml:override_x", "a.yaml:variant_x", "must select base, override_<name> or zip_override_<name>[<index>]", "srt-recipe", "variant_x"},
		{"row without srt-recipe", validMultiDisagg, "        srt-recipe: a.yaml:override_x\n", "", "Every search-space entry requires srt-recipe", "srt-recipe", "- conc-list"},
		{"eval-srt-recipe on single-node", validSingle, "srt-recipe: agentic.yaml:base}", "srt-recipe: agentic.yaml:base, eval-srt-recipe: e.yaml}", "eval-srt-recipe is only valid for multinode configs", "eval-srt-recipe", "eval-srt-recipe: e.yaml"},
		{"CONFIG_FILE setting", validMultiDisagg, "dp-attn: true, hardware: b200}", "dp-attn: true, hardware: b200, additional-settings: [CONFIG_FILE=recipes/x.yaml]}", "CONFIG_FILE is not an additional-setting; use srt-recipe", "prefill.additional-settings", "CONFIG_FILE="},
		{"EVAL_CONFIG_FILE setting", validMultiDisagg, "dp-attn: true, hardware: b200}", "dp-attn: true, hardware: b200, additional-settings: [EVAL_CONFIG_FILE=x]}", "use eval-srt-recipe", "prefill.additional-settings", "EVAL_CONFIG_FILE="},
		{"llmd keeps CONFIG_FILE", validMultiDisagg, "framework: dynamo-sglang", "framework: llmd-vllm", "llmd-vllm selects recipes with CONFIG_FILE, not srt-recipe", "srt-recipe-dir", "srt-recipe-dir:"},
		{"conc list and range", validMultiDisagg, "conc-list: [16, 32]", "conc-list: [16, 32]\n        conc-start: 4\n        conc-end: 8", "Cannot specify both 'conc-list' list and 'conc-start'/'conc-end'", "search-space[0]", "- conc-list"},
		{"no concurrency", validMultiDisagg, "      - conc-list: [16, 32]\n        srt-recipe", "      - srt-recipe", "Must specify either 'conc-list' list or both 'conc-start' and 'conc-end'", "search-space[0]", "- srt-recipe"},
		{"conc range backwards", validSingle, "conc-start: 4, conc-end: 64", "conc-start: 64, conc-end: 4", "'conc-start' (64) must be <= 'conc-end' (4)", "search-space[0]", "conc-start: 64"},
		{"conc range zero", validSingle, "conc-start: 4,", "conc-start: 0,", "must be greater than 0", "search-space[0]", "conc-start: 0"},
		{"conc list zero", validMultiDisagg, "conc-list: [16, 32]", "conc-list: [16, 0]", "'conc-list' entries must be greater than 0", "conc-list", "[16, 0]"},
		{"conc list of strings", validMultiDisagg, "conc-list: [16, 32]", "conc-list: [16, x]", "must be an integer", "conc-list[1]", "[16, x]"},
		{"power not a bool", validMultiDisagg, "power: true", "power: 1", "must be true or false", "power", "power: 1"},
		{"power on single-node agentic", validSingle, "conc-list: [3],", "conc-list: [3], power: true,", "Only multinode entries measure DCGM power; remove power", "power", "power: true"},
		{"hardware on one side", validMultiDisagg, ", hardware: h100", "", "'hardware' must be specified for both 'prefill' and 'decode', or neither", "search-space[0]", "- conc-list"},
		{"hardware empty", validMultiDisagg, "hardware: h100", "hardware: ''", "must not be empty", "decode.hardware", "hardware: ''"},
		{"worker and prefill", validMultiAgg, "        worker:", "        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true}\n        worker:", "exactly one of tp, worker, or both prefill and decode", "search-space[0]", "- conc-list"},
		{"prefill alone", validMultiDisagg, "        decode: {num-worker: 2, tp: 8, ep: 8, dp-attn: false, hardware: h100, dcp-size: 2}\n", "", "either worker or both prefill and decode", "search-space[0]", "- conc-list"},
		{"tp not divisible by dcp", validMultiDisagg, "dcp-size: 2}", "dcp-size: 3}", "'tp' (8) must be divisible by 'dcp-size' (3)", "decode", "dcp-size: 3"},
		{"pp not positive", validMultiDisagg, "dcp-size: 2}", "dcp-size: 2, pp: 0}", "must be greater than 0", "decode.pp", "pp: 0"},
		{"ep required", validMultiDisagg, "tp: 4, ep: 4,", "tp: 4,", "field required by WorkerConfig", "prefill.ep", "prefill: {num-worker: 1, tp: 4, dp-attn"},
		{"spec-decoding enum", validSingle, "spec-decoding: mtp", "spec-decoding: eagle", "must be one of mtp, draft_model, none", "spec-decoding", "eagle"},
		{"router version an image", validMultiAgg, "version: 0.1.9", "version: 'image:vllm:0.1'", "not an image reference", "router.version", "image:vllm"},
		{"router without version", validMultiAgg, ", version: 0.1.9}", "}", "field required by ComponentMetadata", "router.version", "router: {name: vllm-router}"},
		{"router in both scopes", validMultiAgg, "        num-nodes: 4\n", "        num-nodes: 4\n        router: {name: r, version: '1'}\n", "router must be declared either at the top level or in search-space entries, not both", "router", "router: {name: r"},
		{"kv-p2p-transfer in both scopes", validMultiDisagg, "        power: true\n", "        power: true\n        kv-p2p-transfer: mooncake\n", "kv-p2p-transfer must be declared either at the top level", "kv-p2p-transfer", "kv-p2p-transfer: mooncake"},
		{"disagg without kv-p2p-transfer", validMultiDisagg, "  kv-p2p-transfer: nixl\n", "", "disagg=true requires kv-p2p-transfer at the top level or in every search-space entry", "disagg", "disagg: true"},
		{"kv-p2p-transfer empty", validMultiDisagg, "kv-p2p-transfer: nixl", "kv-p2p-transfer: ''", "must not be empty", "kv-p2p-transfer", "kv-p2p-transfer: ''"},
		{"kv-p2p-transfer single-node", validSingle, "srt-recipe: agentic.yaml:base}", "srt-recipe: agentic.yaml:base, kv-p2p-transfer: nixl}", "kv-p2p-transfer is only valid when multinode=true", "kv-p2p-transfer", "kv-p2p-transfer: nixl}"},
		{"aggregate without num-nodes", validMultiAgg, "        num-nodes: 4\n", "", "disagg=false requires num-nodes in every search-space entry", "search-space[0]", "- conc-list"},
		{"disagg with worker", validMultiDisagg, "        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true, hardware: b200}\n        decode: {num-worker: 2, tp: 8, ep: 8, dp-attn: false, hardware: h100, dcp-size: 2}\n", "        worker: {tp: 8, ep: 8, dp-attn: false}\n", "disagg=true requires prefill and decode and rejects worker and num-nodes", "search-space[0]", "- conc-list"},
		{"single-node with worker", validSingle, "{tp: 4, kv-offloading", "{tp: 4, num-nodes: 2, kv-offloading", "Single-node search-space entries must specify tp topology", "search-space[0]", "num-nodes: 2"},
		{"agentic runner label", validMultiAgg, "runner: cluster:h200-dgxc", "runner: h200", "Agentic master configs must use a 'cluster:<name>' runner", "runner", "runner: h200"},
		{"dram without utilization", validMultiAgg, "    - dram-utilization: 0.8\n      search-space:", "    - search-space:", "kv-offloading='dram' requires dram-utilization", "kv-offloading", "kv-offloading: dram"},
		{"dram utilization above 1", validMultiAgg, "dram-utilization: 0.8", "dram-utilization: 1.5", "must be greater than 0 and at most 1", "dram-utilization", "dram-utilization: 1.5"},
		{"dram without backend", validMultiAgg, "        kv-offload-backend: {name: lmcache, version: 0.3.1}\n", "", "kv-offload-backend is required when kv-offloading is 'dram'", "kv-offloading", "kv-offloading: dram"},
		{"backend with none", validSingle, "kv-offloading: none,", "kv-offloading: none, kv-offload-backend: {name: x},", "kv-offload-backend can only be set when kv-offloading is not 'none'", "kv-offload-backend", "kv-offload-backend: {name: x}"},
		{"backend without offloading", validMultiAgg, "        kv-offloading: dram\n", "", "kv-offload-backend requires kv-offloading", "kv-offload-backend", "kv-offload-backend:"},
		{"single-node agentic without offloading", validSingle, "kv-offloading: none, ", "", "Single-node agentic search-space entries must specify kv-offloading", "search-space[0]", "{tp: 4, conc-list"},
		{"multinode agentic with pp", validMultiAgg, "        num-nodes: 4\n", "        num-nodes: 4\n        pp: 2\n", "Multinode agentic search-space entries cannot specify 'pp', 'dcp-size', 'pcp-size'", "pp", "pp: 2"},
		{"no scenario", validMultiDisagg, "    fixed-seq-len:", "    fixed-seq-len: []\n    old:", "MultiNodeScenarios forbids extra fields", "scenarios.old", "old:"},
		{"empty scenarios", validSingle, "    fixed-seq-len:\n    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 8, ep: 1, conc-start: 4, conc-end: 64, srt-recipe: 1k1k.yaml, spec-decoding: mtp, pcp-size: 2}\n    agentic-coding:\n    - dram-utilization: 0.5\n      search-space:\n      - {tp: 4, kv-offloading: none, conc-list: [3], srt-recipe: agentic.yaml:base}\n", "    fixed-seq-len: []\n", "At least one scenario type must be specified", "scenarios", "fixed-seq-len: []"},
		{"isl a string", validSingle, "isl: 1024", "isl: '1024'", "must be an integer", "isl", "isl: '1024'"},
		{"require-power not a bool", validMultiDisagg, "      osl: 1024\n", "      osl: 1024\n      require-power: 'yes'\n", "must be true or false", "require-power", "require-power:"},
		{"image missing", validSingle, "  image: img\n", "", "field required", "image", "model: org/m"},
		{"image a number", validSingle, "image: img", "image: 3", "must be a string", "image", "image: 3"},
		// populate_by_name: validation.py's models take the Python names
		// too, but generate.py reads the raw mapping by alias only.
		{"entry field by its Python name", validSingle, "  model-prefix: dsv4\n", "  model_prefix: dsv4\n", "model_prefix is SingleNodeMasterConfigEntry's Python name for model-prefix", "model_prefix", "model_prefix: dsv4"},
		{"row field by its Python name", validSingle, "conc-start: 4,", "conc_start: 4,", "Python name for conc-start", "search-space[0].conc_start", "conc_start: 4"},
		{"worker field by its Python name", validMultiDisagg, "{num-worker: 2,", "{num_worker: 2,", "WorkerConfig's Python name for num-worker", "decode.num_worker", "num_worker: 2"},
		{"scenario by its Python name", validMultiAgg, "    agentic-coding:\n", "    agentic_coding:\n", "Python name for agentic-coding", "scenarios.agentic_coding", "agentic_coding:"},
		{"underscore spelling of no field", validSingle, "  multinode: false\n", "  multinode: false\n  model_path: x\n", "SingleNodeMasterConfigEntry forbids extra fields", "model_path", "model_path: x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(c.base, c.old) {
				t.Fatalf("case edits %q, which the base entry lacks", c.old)
			}
			doc := strings.Replace(c.base, c.old, c.new, 1)
			is := validate(t, doc)
			if len(is) == 0 {
				t.Fatalf("no issue; want %q", c.rule)
			}
			var hit *Issue
			for i := range is {
				if strings.Contains(is[i].Rule, c.rule) {
					hit = &is[i]
					break
				}
			}
			if hit == nil {
				t.Fatalf("issues %v lack %q", is, c.rule)
			}
			if !strings.HasSuffix(hit.Field, c.field) {
				t.Errorf("field %q, want …%q", hit.Field, c.field)
			}
			lines := strings.Split(doc, "\n")
			if hit.Line < 1 || hit.Line > len(lines) || !strings.Contains(lines[hit.Line-1], c.at) {
				t.Errorf("line %d, want the line with %q (%s)", hit.Line, c.at, hit)
			}
			if !strings.HasPrefix(hit.Error(), "m.yaml:") {
				t.Errorf("issue %q does not start with the file", hit.Error())
			}
		})
	}
}

// TestYAML11Values: a master InferenceX reads with PyYAML types yes/on
// as booleans, so power: yes is valid and power: 'yes' is not.
func TestYAML11Values(t *testing.T) {
	doc := strings.Replace(validMultiDisagg, "power: true", "power: yes", 1)
	pts, err := ExpandWith("m.yaml", []byte(doc), ExpandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !pts[0].Power {
		t.Error("power: yes did not read as true")
	}
	doc = strings.Replace(validMultiDisagg, "power: true", "power: 'yes'", 1)
	if _, err := ExpandWith("m.yaml", []byte(doc), ExpandOptions{}); err == nil || !strings.Contains(err.Error(), "power: must be true or false") {
		t.Errorf("power: 'yes': err = %v", err)
	}
}

// TestExpandRefusesInvalidToday: ExpandWith returns every issue of a
// today's-layout file as one *ValidationError, before expanding anything.
func TestExpandRefusesInvalidToday(t *testing.T) {
	doc := strings.Replace(validSingle, "  multinode: false\n", "  multinode: false\n  colour: red\n", 1) +
		strings.Replace(validMultiDisagg, "power: true", "power: 1", 1)
	_, err := ExpandWith("m.yaml", []byte(doc), ExpandOptions{})
	var ve *ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("err = %v, want a *ValidationError", err)
	}
	if len(ve.Issues) != 2 || ve.Issues[0].Key != "sn" || ve.Issues[1].Key != "mn" {
		t.Errorf("issues %v, want one for sn then one for mn", ve.Issues)
	}
	if !strings.Contains(err.Error(), "m.yaml:9: sn: colour: unknown field") {
		t.Errorf("message lacks file:line: %v", err)
	}
}

// TestMasterKeys: load_config_files' key rules (validation.py, stored id
// 71232337073) refuse a key PyYAML does not read as a string and a key
// holding '*'; a quoted number and an ordinary key pass. The refused key
// is named at its line, before any entry is expanded.
func TestMasterKeys(t *testing.T) {
	entry := strings.SplitN(validSingle, "\n", 2)[1] // the entry's body, key removed
	for _, c := range []struct {
		key  string
		rule string // "" : accepted
	}{
		{"sn", ""},
		{`"123"`, ""},
		{"dsr1-fp8-b200.v2", ""},
		{"123", "must be a string, not int"},
		{"yes", "must be a string, not bool"},
		{"~", "must be a string, not null"},
		{"1.5", "must be a string, not float"},
		{"dsr1-*-b200", "wildcard '*' is not allowed"},
		{`"*"`, "wildcard '*' is not allowed"},
	} {
		t.Run(c.key, func(t *testing.T) {
			doc := "other:\n" + entry + c.key + ":\n" + entry
			pts, err := ExpandWith("m.yaml", []byte(doc), ExpandOptions{})
			if c.rule == "" {
				if err != nil || len(pts) == 0 {
					t.Fatalf("key %s: %d points, err %v", c.key, len(pts), err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("key %s: err = %v, want a *ValidationError", c.key, err)
			}
			var hit *Issue
			for i := range ve.Issues {
				if strings.Contains(ve.Issues[i].Rule, c.rule) {
					hit = &ve.Issues[i]
				}
			}
			if hit == nil {
				t.Fatalf("key %s: issues %v lack %q", c.key, ve.Issues, c.rule)
			}
			if want := strings.Count(doc[:strings.Index(doc, "\n"+c.key+":")+1], "\n") + 1; hit.Line != want {
				t.Errorf("key %s: line %d, want %d", c.key, hit.Line, want)
			}
		})
	}
}

// TestRequirePowerPythonName: MultiNodeSeqLenConfig's require_power is the
// one Python name generate.py reads too (the alias first), so a row under
// it is a power-required point; typed and ranged as the alias is.
func TestRequirePowerPythonName(t *testing.T) {
	for _, c := range []struct {
		name, set string
		want      bool
		err       string
	}{
		{"alias", "require-power: true", true, ""},
		{"python name", "require_power: true", true, ""},
		{"python name false", "require_power: false", false, ""},
		{"alias wins over the python name", "require-power: false\n      require_power: true", false, ""},
		{"python name not a bool", "require_power: 'yes'", false, "require_power: must be true or false"},
		{"python name null", "require_power: null", false, "require_power: may not be null"},
		{"python name off 8k1k", "require_power: true", false, "require-power rollout supports only fixed-sequence 8192/1024"},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := strings.Replace(validMultiDisagg, "      osl: 1024\n", "      osl: 1024\n      "+c.set+"\n", 1)
			if strings.HasSuffix(c.name, "off 8k1k") {
				doc = strings.Replace(doc, "isl: 8192", "isl: 1024", 1)
			}
			pts, err := ExpandWith("m.yaml", []byte(doc), ExpandOptions{})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pts {
				if p.EvalOnly {
					continue
				}
				if p.RequirePower != c.want || (p.Row["require-power"] == true) != c.want {
					t.Errorf("%s: require-power %v (row %v), want %v", p.Key, p.RequirePower, p.Row["require-power"], c.want)
				}
			}
		})
	}
}
