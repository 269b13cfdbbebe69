package fragment

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// pointKeys are the keys the binder writes, the master's power field owns
// (telemetry) and the launcher sets (the exporter port), whatever the lane
// (workload.py@f57e21f1 _POINT_KEYS).
var pointKeys = [][]string{
	{"model", "path"},
	{"model", "container"},
	{"model", "precision"},
	{"identity", "model", "repo"},
	{"identity", "container", "image"},
	{"benchmark", "concurrencies"},
	{"telemetry", "enabled"},
	{"telemetry", "dcgm_exporter", "port"},
}

// The benchmark.env names the binder or launcher writes, by lane
// (workload.py@f57e21f1 _FIXED_ENV, _AGENTIC_ENV, BOUND_ENV).
var (
	fixedEnv   = []string{"MODEL", "ISL", "OSL", "CONC", "CONC_LIST", "RANDOM_RANGE_RATIO", "USE_CHAT_TEMPLATE"}
	agenticEnv = []string{"CONC", "CONC_LIST", "KV_OFFLOADING", "TOTAL_CPU_DRAM_GB", "RESULT_DIR",
		"AGENTIC_OUTPUT_DIR", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"}
)

// BoundEnv is the benchmark.env names a fragment of the lane may not set.
func (l Lane) BoundEnv() []string {
	switch {
	case !l.Agentic:
		return fixedEnv
	case l.MultiNode:
		return append(append([]string(nil), agenticEnv...), "AIPERF_DATASET_MMAP_CACHE_DIR")
	}
	return append([]string{"MODEL"}, agenticEnv...)
}

// BoundKeys is every dotted key a fragment of the lane may not set.
func (l Lane) BoundKeys() []string {
	var out []string
	for _, k := range pointKeys {
		out = append(out, strings.Join(k, "."))
	}
	for _, n := range l.BoundEnv() {
		out = append(out, "benchmark.env."+n)
	}
	return out
}

// variantPointKeys a single-node variant (not its base) may still set: the
// point it pairs with its tuning (workload.py VARIANT_POINT_KEYS).
var variantPointKeys = map[string]bool{"benchmark.env.CONC": true, "benchmark.env.KV_OFFLOADING": true}

// versionEnv are the component versions the binder writes from the master
// config where a repository installer runs; a fragment sets neither in any
// env or environment mapping (workload.py VERSION_ENV, _fragment_versions).
var versionEnv = []string{"ROUTER_VERSION", "KV_OFFLOAD_BACKEND_VERSION"}

// dramSizes are host DRAM sizes only the point's budget may size: a
// literal value is refused (workload.py DRAM_SIZES). "--l1-size-gb" sizes
// the next item of an argument list.
var dramSizes = map[string]bool{
	"cpu_bytes_to_use": true, "cpu_bytes_to_use_per_rank": true, // vLLM SimpleCPUOffloadConnector
	"LMCACHE_MAX_LOCAL_CPU_SIZE": true, "lmcache.max_local_cpu_size": true, "--l1-size-gb": true, // LMCache
}

// BoundKeyError is a fragment that sets keys the binder or launcher writes,
// each named with its line. The first is the one Error reports.
type BoundKeyError struct {
	File string
	Keys []Located
}

// Located is a dotted key at a line, with its value as written.
type Located struct {
	Field string
	Line  int
	Value string
}

func (e *BoundKeyError) Error() string {
	k := e.Keys[0]
	more := ""
	if len(e.Keys) > 1 {
		names := make([]string, 0, len(e.Keys)-1)
		for _, o := range e.Keys[1:] {
			names = append(names, fmt.Sprintf("%s (line %d)", o.Field, o.Line))
		}
		more = "; also " + strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s:%d: %s: the launcher binds this key from the matrix point (= %s here); remove it from the fragment%s",
		e.File, k.Line, k.Field, yamltree.Clip(k.Value), more)
}

// DRAMLiteralError is a fragment that sizes host DRAM with a literal where
// only the point's budget may size it.
type DRAMLiteralError struct {
	File string
	Keys []Located
}

func (e *DRAMLiteralError) Error() string {
	k := e.Keys[0]
	return fmt.Sprintf("%s:%d: %s: set it to a '@dram.<name>' value (= %s here); the launcher sizes host DRAM from the point's budget",
		e.File, k.Line, k.Field, yamltree.Clip(k.Value))
}

// CheckFragment refuses a fragment (already Plain) that sets a bound key,
// even to the value the binder would write, or a literal DRAM size. In a
// bundle every top-level block but schema is checked (base, override_*,
// zip_override_*, and anything else beside them), as check_fragment does.
func CheckFragment(file string, doc *yaml.Node, lane Lane) error {
	type block struct {
		name string
		node *yaml.Node
	}
	blocks := []block{{"", doc}}
	if yamltree.Get(doc, "base") != nil {
		blocks = nil
		for i := 0; i+1 < len(doc.Content); i += 2 {
			if k := doc.Content[i].Value; k != "schema" {
				blocks = append(blocks, block{k, doc.Content[i+1]})
			}
		}
	}
	var found, sizes []Located
	for _, b := range blocks {
		variant := !lane.MultiNode && b.name != "" && b.name != "base"
		for _, key := range lane.BoundKeys() {
			if variant && variantPointKeys[key] {
				continue
			}
			if k, v := lookupPath(b.node, strings.Split(key, ".")); k != nil {
				found = append(found, Located{Field: yamltree.JoinField(b.name, key), Line: k.Line, Value: yamltree.PyStr(v)})
			}
		}
		found = append(found, versionsIn(b.node, b.name)...)
		sizes = append(sizes, dramLiterals(b.node, b.name)...)
	}
	if len(found) > 0 {
		return &BoundKeyError{File: file, Keys: found}
	}
	if len(sizes) > 0 {
		return &DRAMLiteralError{File: file, Keys: sizes}
	}
	return nil
}

// lookupPath is the key and value node at path in mapping m, or nils.
func lookupPath(m *yaml.Node, path []string) (k, v *yaml.Node) {
	for _, p := range path {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil, nil
		}
		k, v = yamltree.KeyValue(m, p)
		if k == nil {
			return nil, nil
		}
		m = v
	}
	return k, v
}

// versionsIn finds a bound component version in any env or environment
// mapping under n.
func versionsIn(n *yaml.Node, field string) []Located {
	var out []Located
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			out = append(out, versionsIn(c, fmt.Sprintf("%s[%d]", field, i))...)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			where := yamltree.JoinField(field, k.Value)
			if (k.Value == "env" || k.Value == "environment") && v.Kind == yaml.MappingNode {
				for _, name := range versionEnv {
					if kk, vv := yamltree.KeyValue(v, name); kk != nil {
						out = append(out, Located{Field: where + "." + name, Line: kk.Line, Value: yamltree.PyStr(vv)})
					}
				}
				continue
			}
			out = append(out, versionsIn(v, where)...)
		}
	}
	return out
}

// dramLiterals finds each DRAM size under n, in a JSON object string too,
// that is not a '@dram.<name>' value; in a list, a size flag sizes the
// next item.
func dramLiterals(n *yaml.Node, field string) []Located {
	if n.Kind == yaml.ScalarNode && strings.HasPrefix(n.Value, "{") && n.Tag == "!!str" {
		var out []Located
		if j := parseJSONObject(n.Value); j != nil {
			for _, l := range dramLiterals(j, field) {
				l.Line = n.Line
				out = append(out, l)
			}
		}
		return out
	}
	var out []Located
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			where := yamltree.JoinField(field, k.Value)
			if dramSizes[k.Value] && !isDRAMRef(v) {
				out = append(out, Located{Field: where, Line: k.Line, Value: yamltree.PyStr(v)})
				continue
			}
			out = append(out, dramLiterals(v, where)...)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			where := fmt.Sprintf("%s[%d]", field, i)
			if i > 0 {
				if f := n.Content[i-1]; f.Kind == yaml.ScalarNode && dramSizes[f.Value] && !isDRAMRef(c) {
					out = append(out, Located{Field: where, Line: c.Line, Value: yamltree.PyStr(c)})
					continue
				}
			}
			out = append(out, dramLiterals(c, where)...)
		}
	}
	return out
}

func isDRAMRef(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.HasPrefix(n.Value, DRAMRef)
}
