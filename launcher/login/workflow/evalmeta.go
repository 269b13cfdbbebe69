package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// A lane with write_eval_meta (gb300-nv) rebuilds the staged meta_env.json
// on the host from the workflow's variables after the eval, keeping the
// suite, concurrency and batch manifest the eval recorded: the eval
// container is not passed every variable (RECIPE_FINGERPRINT)
// (drivers/srt/collect.py@4847f2da, _write_eval_meta). The document is
// infx/bench/eval/meta.py@27688631's build, with IS_MULTINODE=true, and its
// topology infx/results/topology.py@719cf782's eval_topology; both are read
// rule by rule and written here.

// EvalMetaFile is the staged eval metadata in the workspace.
const EvalMetaFile = "meta_env.json"

// batchKeys are a batched eval's manifest (meta.py BATCH_KEYS).
var batchKeys = []string{"eval_concs", "completed_eval_concs", "failed_eval_concs"}

// resultFilenameIdentity reads precision and framework out of a
// RESULT_FILENAME (meta.py _RESULT_FILENAME, matched from the start).
var resultFilenameIdentity = regexp.MustCompile(`^.*_([^_]+)_([^_]+)_tp`)

// maxEvalMeta bounds the staged file read.
const maxEvalMeta = 1 << 20

// member is one key of the rebuilt document, in the order build writes it.
type member struct {
	key string
	val any // bool, int, string, or json.RawMessage kept from the staged file
}

type document []member

func (d *document) set(k string, v any) {
	for i := range *d {
		if (*d)[i].key == k {
			(*d)[i].val = v
			return
		}
	}
	*d = append(*d, member{k, v})
}

func (d document) get(k string) (any, bool) {
	for _, m := range d {
		if m.key == k {
			return m.val, true
		}
	}
	return nil, false
}

// RefreshEvalMeta rebuilds the meta_env.json at path from env, keeping its
// conc, eval_suite and, when it lists eval_concs, its batch keys. A
// missing file is no error (ok false: nothing was staged to refresh).
func RefreshEvalMeta(path string, env Env) (ok bool, err error) {
	data, err := readlimit.ReadFile(path, maxEvalMeta)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var staged map[string]json.RawMessage
	if err := json.Unmarshal(data, &staged); err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	conc, okConc := staged["conc"]
	suiteRaw, okSuite := staged["eval_suite"]
	if !okConc || !okSuite {
		return false, fmt.Errorf("%s: no conc or eval_suite to keep", path)
	}
	var suite string
	if err := json.Unmarshal(suiteRaw, &suite); err != nil {
		return false, fmt.Errorf("%s: eval_suite: %w", path, err)
	}
	var batch map[string]json.RawMessage
	if _, isBatch := staged["eval_concs"]; isBatch {
		batch = map[string]json.RawMessage{}
		for _, k := range batchKeys {
			v, ok := staged[k]
			if !ok {
				return false, fmt.Errorf("%s: a batched eval without %s", path, k)
			}
			batch[k] = v
		}
	}
	values := Env{}
	for k, v := range env {
		values[k] = v
	}
	values["IS_MULTINODE"] = "true"
	doc, err := buildEvalMeta(values, conc, suite, batch)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	out, err := doc.indented()
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, atomicfile.WriteFile(path, out, atomicfile.Options{Overwrite: true})
}

// first is the first of names with a non-empty value, else def.
func (e Env) first(def string, names ...string) string {
	for _, n := range names {
		if v := e[n]; v != "" {
			return v
		}
	}
	return def
}

var sizeValue = regexp.MustCompile(`^[0-9]+$`)

// buildEvalMeta is meta.py's build of an eval of suite at conc.
func buildEvalMeta(values Env, conc json.RawMessage, suite string, batch map[string]json.RawMessage) (document, error) {
	multinode, err := trueFalse(values, "IS_MULTINODE")
	if err != nil {
		return nil, err
	}
	if multinode {
		// The workflow's PREFILL_*/DECODE_* as the metadata names them
		// (meta.py _disaggregated).
		tp := values.first("1", "PREFILL_TP", "TP")
		ep := values.first("1", "PREFILL_EP", "EP_SIZE", "EP")
		dp := values.first("false", "PREFILL_DP_ATTN")
		for k, v := range map[string]string{
			"TP": tp, "PREFILL_TP": tp, "PREFILL_EP": ep, "EP_SIZE": ep,
			"PREFILL_NUM_WORKERS": values.first("1", "PREFILL_NUM_WORKERS"),
			"DECODE_TP":           values.first(tp, "DECODE_TP"), "DECODE_EP": values.first(ep, "DECODE_EP"),
			"DECODE_NUM_WORKERS": values.first("1", "DECODE_NUM_WORKERS"),
			"DP_ATTENTION":       dp, "PREFILL_DP_ATTENTION": dp,
			"DECODE_DP_ATTENTION": values.first("false", "DECODE_DP_ATTN"),
		} {
			values[k] = v
		}
	}
	var errs []error
	size := func(field string, names ...string) int {
		for _, n := range names {
			if v := values[n]; v != "" {
				if !sizeValue.MatchString(v) {
					errs = append(errs, fmt.Errorf("%s must be an integer for meta_env.json %s, got %q", n, field, v))
					return 0
				}
				i, err := strconv.Atoi(v)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", n, err))
				}
				return i
			}
		}
		return 1
	}
	dp := func(names ...string) bool {
		return slices.Contains([]string{"1", "true", "yes", "on"}, strings.ToLower(values.first("false", names...)))
	}
	framework, precision := values["FRAMEWORK"], values["PRECISION"]
	if m := resultFilenameIdentity.FindStringSubmatch(values["RESULT_FILENAME"]); m != nil {
		precision = cmpOr(precision, m[1])
		framework = cmpOr(framework, m[2])
	}
	d := document{
		{"is_multinode", multinode},
		{"framework", cmpOr(framework, "unknown")},
		{"precision", cmpOr(precision, "unknown")},
		{"spec_decoding", values["SPEC_DECODING"]},
		{"eval_suite", suite},
		{"recipe_fingerprint", values["RECIPE_FINGERPRINT"]},
		{"tp", size("tp", "TP")},
		{"pp", size("pp", "PP_SIZE")},
		{"dcp_size", size("dcp_size", "DCP_SIZE")},
		{"pcp_size", size("pcp_size", "PCP_SIZE")},
		{"conc", conc},
	}
	if batch != nil {
		for _, k := range batchKeys {
			d = append(d, member{k, batch[k]})
		}
	}
	d = append(d, document{
		{"ep", size("ep", "EP_SIZE")},
		{"dp_attention", dp("DP_ATTENTION")},
		{"prefill_tp", size("prefill_tp", "PREFILL_TP", "TP")},
		{"prefill_pp", size("prefill_pp", "PREFILL_PP_SIZE", "PP_SIZE")},
		{"prefill_dcp_size", size("prefill_dcp_size", "PREFILL_DCP_SIZE", "DCP_SIZE")},
		{"prefill_pcp_size", size("prefill_pcp_size", "PREFILL_PCP_SIZE", "PCP_SIZE")},
		{"prefill_ep", size("prefill_ep", "PREFILL_EP", "EP_SIZE")},
		{"prefill_dp_attention", dp("PREFILL_DP_ATTENTION", "DP_ATTENTION")},
		{"prefill_num_workers", size("prefill_num_workers", "PREFILL_NUM_WORKERS")},
		{"decode_tp", size("decode_tp", "DECODE_TP", "TP")},
		{"decode_pp", size("decode_pp", "DECODE_PP_SIZE", "PP_SIZE")},
		{"decode_dcp_size", size("decode_dcp_size", "DECODE_DCP_SIZE", "DCP_SIZE")},
		{"decode_pcp_size", size("decode_pcp_size", "DECODE_PCP_SIZE", "PCP_SIZE")},
		{"decode_ep", size("decode_ep", "DECODE_EP", "EP_SIZE")},
		{"decode_dp_attention", dp("DECODE_DP_ATTENTION", "DP_ATTENTION")},
		{"decode_num_workers", size("decode_num_workers", "DECODE_NUM_WORKERS")},
		{"model", values.first("", "MODEL_NAME", "MODEL")},
		{"infmax_model_prefix", cmpOr(values["MODEL_PREFIX"], "unknown")},
		{"hw", cmpOr(values["RUNNER_TYPE"], "unknown")},
		{"isl", cmpOr(values["ISL"], "0")},
		{"osl", cmpOr(values["OSL"], "0")},
	}...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if values["DISAGG"] != "" {
		disagg, err := trueFalse(values, "DISAGG")
		if err != nil {
			return nil, err
		}
		d.set("disagg", disagg)
		for _, m := range evalTopology(d) {
			d.set(m.key, m.val)
		}
	}
	return d, nil
}

// trueFalse is a required true/false input (infx/bench/env.py@044329de flag).
func trueFalse(values Env, name string) (bool, error) {
	switch v := values[name]; v {
	case "true":
		return true, nil
	case "false":
		return false, nil
	case "":
		return false, fmt.Errorf("%s is not set", name)
	default:
		return false, fmt.Errorf("%s must be true or false, got %q", name, v)
	}
}

// evalTopology is topology.py's eval_topology over a document that has
// disagg: the physical layout and GPU counts of the eval's deployment.
func evalTopology(meta document) document {
	num := func(k string, def int) int {
		v, ok := meta.get(k)
		if !ok {
			return def
		}
		switch x := v.(type) {
		case int:
			return x
		case bool:
			if x {
				return 1
			}
			return 0
		case string:
			if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
				return n
			}
		}
		return def
	}
	type layout struct{ tp, pp, dcp, pcp, ep int }
	at := func(prefix string) layout {
		get := func(name string) int {
			if _, ok := meta.get(prefix + name); ok {
				return num(prefix+name, 1)
			}
			return num(name, 1)
		}
		return layout{get("tp"), get("pp"), get("dcp_size"), get("pcp_size"), get("ep")}
	}
	fields := func(l layout, prefix string) document {
		return document{{prefix + "tp", l.tp}, {prefix + "pp", l.pp}, {prefix + "dcp_size", l.dcp}, {prefix + "pcp_size", l.pcp}, {prefix + "ep", l.ep}}
	}
	gpus := func(l layout) int { return l.tp * l.pp * l.pcp }
	dv, _ := meta.get("disagg")
	disagg, _ := dv.(bool)
	out := append(document{{"disagg", disagg}}, fields(at(""), "")...)
	put := func(d document) {
		for _, m := range d {
			out.set(m.key, m.val)
		}
	}
	if disagg {
		total := 0
		for _, role := range []string{"prefill", "decode"} {
			p := role + "_"
			l, workers := at(p), num(p+"num_workers", 1)
			put(fields(l, p))
			out.set(p+"num_workers", workers)
			out.set("num_"+role+"_gpu", gpus(l)*workers)
			total += gpus(l) * workers
		}
		out.set("num_gpus", total)
		return out
	}
	mv, _ := meta.get("is_multinode")
	multinode, _ := mv.(bool)
	l, workers := at(""), 1
	if multinode {
		l, workers = at("prefill_"), num("prefill_num_workers", 1)
	}
	put(fields(l, ""))
	out.set("num_gpus", gpus(l)*workers)
	for _, role := range []string{"prefill", "decode"} {
		put(fields(l, role+"_"))
		out.set(role+"_num_workers", 0)
	}
	if multinode {
		out.set("prefill_num_workers", workers)
		out.set("num_prefill_gpu", gpus(l)*workers)
		out.set("num_decode_gpu", 0)
		put(fields(layout{tp: 0, pp: 1, dcp: 1, pcp: 1, ep: 0}, "decode_"))
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// indented is the document as Python's json.dumps(doc, indent=2) writes it
// (ensure_ascii), with a final newline as meta.py's write adds.
func (d document) indented() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{")
	for i, m := range d {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  ")
		b.Write(pyjson.AppendString(nil, m.key))
		b.WriteString(": ")
		if err := writeIndented(&b, m.val, 1); err != nil {
			return nil, fmt.Errorf("%s: %w", m.key, err)
		}
	}
	if len(d) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// writeIndented writes v at depth (its members at depth+1) as json.dumps
// with indent=2 does: a raw value kept from the staged file is decoded and
// written again the same way.
func writeIndented(b *bytes.Buffer, v any, depth int) error {
	switch x := v.(type) {
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case string:
		b.Write(pyjson.AppendString(nil, x))
	case json.RawMessage:
		dec := json.NewDecoder(bytes.NewReader(x))
		dec.UseNumber()
		var a any
		if err := dec.Decode(&a); err != nil {
			return err
		}
		return writeIndented(b, a, depth)
	case json.Number:
		b.WriteString(x.String())
	case nil:
		b.WriteString("null")
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteString("[")
		for i, e := range x {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + strings.Repeat("  ", depth+1))
			if err := writeIndented(b, e, depth+1); err != nil {
				return err
			}
		}
		b.WriteString("\n" + strings.Repeat("  ", depth) + "]")
	case map[string]any:
		// Not a shape the kept keys take; written with sorted keys.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if len(keys) == 0 {
			b.WriteString("{}")
			return nil
		}
		b.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n" + strings.Repeat("  ", depth+1))
			b.Write(pyjson.AppendString(nil, k))
			b.WriteString(": ")
			if err := writeIndented(b, x[k], depth+1); err != nil {
				return err
			}
		}
		b.WriteString("\n" + strings.Repeat("  ", depth) + "}")
	default:
		return fmt.Errorf("a %T in meta_env.json", v)
	}
	return nil
}
