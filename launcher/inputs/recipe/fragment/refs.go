package fragment

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/pyjson"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// The reference prefixes a whole recipe value may take (workload.py
// DRAM_REFERENCE, FABRIC_REFERENCE).
const (
	DRAMRef   = "@dram."
	FabricRef = "@fabric."
)

// DRAMNames are the '@dram.<name>' values (RECIPES.md § Recipe fragments).
var DRAMNames = []string{"total-gb", "total-bytes", "per-gpu-gb", "per-gpu-bytes"}

// bytesPerGB: the budget is in decimal GB (workload.py BYTES_PER_GB).
const bytesPerGB = 1_000_000_000

// Budget is a DRAM point's host DRAM budget: the matrix's
// total-cpu-dram-gb over the GPUs it covers on a node.
type Budget struct {
	TotalGB int64
	GPUs    int64
}

// Value is the budget's '@dram.<name>' value.
func (b Budget) Value(name string) (int64, bool) {
	switch name {
	case "total-gb":
		return b.TotalGB, true
	case "total-bytes":
		return b.TotalGB * bytesPerGB, true
	case "per-gpu-gb":
		return b.TotalGB / b.GPUs, true
	case "per-gpu-bytes":
		return b.TotalGB * bytesPerGB / b.GPUs, true
	}
	return 0, false
}

// FabricFields are the srt-slurm.fabric fields of a runners.yaml cluster
// record a recipe may name: the lists ucx-net-devices, nccl-ib-hca,
// ib-devices, socket-ifname, mooncake-devices and the numbers
// mooncake-gid-index, mori-rdma-tc, mori-io-tc (configs/CONFIGS.md § runners,
// the copy in the InferenceX sample), and rdma-devices, which the sample's
// Kimi K3 Mooncake fragments name (kimik3/vllm/gb300-fp4/agentx/agg-variants.yaml).
// They are the names runners.FabricNames reads from a record (a test holds
// the two equal).
var FabricFields = []string{"ucx-net-devices", "nccl-ib-hca", "ib-devices", "socket-ifname", "mooncake-devices",
	"rdma-devices", "mooncake-gid-index", "mori-rdma-tc", "mori-io-tc"}

// Fabric is a cluster's fabric facts as recipes read them.
type Fabric struct {
	// Known is every field name a recipe may reference; nil means
	// FabricFields.
	Known []string
	// Values are the fields this cluster sets, rendered: lists
	// comma-joined (FabricList), numbers in decimal.
	Values map[string]string
	// Unread says the cluster's fabric record was not read (only its id
	// and GPUs per node are known): a reference is refused saying so.
	Unread bool
}

// FabricList renders a list-valued fabric field as recipes read it.
func FabricList(items []string) string { return strings.Join(items, ",") }

func (f *Fabric) known(name string) bool {
	known := f.Known
	if known == nil {
		known = FabricFields
	}
	for _, k := range known {
		if k == name {
			return true
		}
	}
	return false
}

func (f *Fabric) names() []string {
	if f.Known == nil {
		return FabricFields
	}
	return f.Known
}

// Resolve replaces each whole '@dram.<name>' value under doc with the
// budget's value and, fabric non-nil, each whole '@fabric.<name>' value
// with the cluster's rendering. A '@dram' value is an integer, or its
// decimal string in an env or environment mapping and as a list item; a
// JSON object string (kv-transfer-config) is resolved inside and written
// back compact. A reference embedded in a longer string, an unknown name,
// '@dram' without a budget or a fabric field the cluster does not set is
// refused, naming file:line and the field. doc is changed in place.
func Resolve(file string, doc *yaml.Node, budget *Budget, fabric *Fabric) error {
	r := resolver{file: file, budget: budget}
	if err := r.dram(doc, "", false); err != nil {
		return err
	}
	if fabric == nil {
		return nil
	}
	return r.fabric(doc, "", fabric)
}

type resolver struct {
	file   string
	budget *Budget
	line   int // the line of the JSON string being resolved, 0 outside one
}

func (r *resolver) fail(n *yaml.Node, field, format string, args ...any) error {
	line := n.Line
	if r.line > 0 {
		line = r.line
	}
	return &yamltree.Error{File: r.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// dram is workload.py resolve_dram on the node tree: text says the value
// is read as a string (env values, list items).
func (r *resolver) dram(n *yaml.Node, field string, text bool) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if err := r.dram(n.Content[i+1], yamltree.JoinField(field, k), text || k == "env" || k == "environment"); err != nil {
				return err
			}
		}
		return nil
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := r.dram(c, fmt.Sprintf("%s[%d]", field, i), c.Kind != yaml.MappingNode); err != nil {
				return err
			}
		}
		return nil
	case yaml.ScalarNode:
	default:
		return nil
	}
	if n.Tag != "!!str" || !strings.Contains(n.Value, DRAMRef) {
		return nil
	}
	if strings.HasPrefix(n.Value, "{") {
		if j := parseJSONObject(n.Value); j != nil {
			inner := resolver{file: r.file, budget: r.budget, line: n.Line}
			if err := inner.dram(j, field, false); err != nil {
				return err
			}
			n.Value, n.Style = string(compactJSON(nil, j)), n.Style&^(yaml.LiteralStyle|yaml.FoldedStyle)
			return nil
		}
	}
	name, whole := strings.CutPrefix(n.Value, DRAMRef)
	v, ok := int64(0), false
	if whole && r.budget != nil {
		v, ok = r.budget.Value(name)
	} else if whole {
		_, ok = Budget{GPUs: 1}.Value(name)
	}
	if !whole || !ok {
		return r.fail(n, field, "%q is not a whole '@dram.<name>' value naming one of: %s", n.Value, strings.Join(DRAMNames, ", "))
	}
	if r.budget == nil {
		return r.fail(n, field, "%q sizes host DRAM on a point without a DRAM budget (its row has no kv-offloading: dram)", n.Value)
	}
	n.Value = strconv.FormatInt(v, 10)
	if text {
		n.Tag, n.Style = "!!str", yaml.DoubleQuotedStyle
	} else {
		n.Tag, n.Style = "!!int", 0
	}
	return nil
}

// fabric is workload.py resolve_fabric on the node tree.
func (r *resolver) fabric(n *yaml.Node, field string, f *Fabric) error {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := r.fabric(n.Content[i+1], yamltree.JoinField(field, n.Content[i].Value), f); err != nil {
				return err
			}
		}
		return nil
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if err := r.fabric(c, fmt.Sprintf("%s[%d]", field, i), f); err != nil {
				return err
			}
		}
		return nil
	case yaml.ScalarNode:
	default:
		return nil
	}
	if n.Tag != "!!str" || !strings.Contains(n.Value, FabricRef) {
		return nil
	}
	name, whole := strings.CutPrefix(n.Value, FabricRef)
	if !whole || !f.known(name) {
		return r.fail(n, field, "%q is not a whole '@fabric.<name>' value naming one of: %s", n.Value, strings.Join(f.names(), ", "))
	}
	v, ok := f.Values[name]
	switch {
	case f.Unread:
		return r.fail(n, field, "%q: the cluster's srt-slurm.fabric facts were not read (they come from its runners.yaml record)", n.Value)
	case !ok:
		return r.fail(n, field, "%q: this cluster sets no srt-slurm.fabric.%s", n.Value, name)
	}
	n.Value, n.Tag, n.Style = v, "!!str", yaml.DoubleQuotedStyle
	return nil
}

// parseJSONObject is s parsed as a JSON object into a YAML node tree (key
// order kept), or nil when s is not one, as workload.py's json.loads test.
func parseJSONObject(s string) *yaml.Node {
	if !json.Valid([]byte(s)) {
		return nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	return doc.Content[0]
}

// compactJSON writes n as json.dumps(..., separators=(",", ":")) does.
func compactJSON(b []byte, n *yaml.Node) []byte {
	switch n.Kind {
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = pyjson.AppendString(b, n.Content[i].Value)
			b = append(b, ':')
			b = compactJSON(b, n.Content[i+1])
		}
		return append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for i, c := range n.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = compactJSON(b, c)
		}
		return append(b, ']')
	}
	switch n.Tag {
	case "!!str":
		return pyjson.AppendString(b, n.Value)
	case "!!null":
		return append(b, "null"...)
	}
	// Numbers and booleans as the JSON text spelled them.
	return append(b, n.Value...)
}
