package fragment

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Lane is what picks a point's shared block and bound keys: an AgentX
// (agentic-coding) point or a fixed-sequence one, on one node or several.
type Lane struct {
	Agentic   bool
	MultiNode bool
}

// The shared blocks, relative to InferenceX's tree (inferencex-e2e/), by lane
// (workload.py@f57e21f1 SHARED_BLOCKS, TELEMETRY_BLOCK).
const (
	FixedSequenceSingle = "configs/srt-recipes/fixed-sequence-single.yaml"
	FixedSequenceMulti  = "configs/srt-recipes/fixed-sequence-multi.yaml"
	AgenticSingle       = "configs/srt-recipes/agentic-single.yaml"
	AgenticMulti        = "configs/srt-recipes/agentic-multi.yaml"
	TelemetryBlock      = "configs/srt-recipes/telemetry-dcgm.yaml"
)

// SharedBlock is the lane's shared block, relative to InferenceX's tree.
func (l Lane) SharedBlock() string {
	switch {
	case l.Agentic && l.MultiNode:
		return AgenticMulti
	case l.Agentic:
		return AgenticSingle
	case l.MultiNode:
		return FixedSequenceMulti
	}
	return FixedSequenceSingle
}

func (l Lane) String() string {
	kind, nodes := "fixed-sequence", "single-node"
	if l.Agentic {
		kind = "agentic"
	}
	if l.MultiNode {
		nodes = "multi-node"
	}
	return kind + " " + nodes
}

// Blocks are the parsed blocks a fragment is composed with.
type Blocks struct {
	Shared     *yaml.Node // the lane's shared block (a mapping)
	SharedFile string
	// Telemetry is the DCGM telemetry block of a power row, nil otherwise;
	// its exporter goes on PowerPort, the cluster's
	// srt-slurm.power-exporter-port (0: none, a cluster-free recipe).
	Telemetry     *yaml.Node
	TelemetryFile string
	PowerPort     int
}

// Compose checks fragment doc (CheckFragment) and merges the shared
// blocks under it: for a bundle under base, else under the whole document.
// doc is left as it was; the result shares no node with it.
func Compose(file string, doc *yaml.Node, lane Lane, b Blocks) (*yaml.Node, error) {
	doc = Plain(doc)
	if err := CheckFragment(file, doc, lane); err != nil {
		return nil, err
	}
	if b.Shared == nil || Plain(b.Shared).Kind != yaml.MappingNode {
		return nil, &yamltree.Error{File: b.SharedFile, Msg: "a shared block must be a mapping"}
	}
	shared := Plain(b.Shared)
	if b.Telemetry != nil {
		tel := Plain(b.Telemetry)
		if tel.Kind != yaml.MappingNode {
			return nil, &yamltree.Error{File: b.TelemetryFile, Msg: "the telemetry block must be a mapping"}
		}
		// workload.py compose_recipe: the port goes into the telemetry
		// block, and the telemetry block over the lane's shared block.
		if b.PowerPort > 0 {
			tel = Merge(tel, mapping("telemetry", mapping("dcgm_exporter", mapping("port", intNode(b.PowerPort, 0)))))
		}
		shared = Merge(shared, tel)
	}
	if base := yamltree.Get(doc, "base"); base != nil {
		out := shallowMapping(doc)
		for i := 0; i+1 < len(out.Content); i += 2 {
			if out.Content[i].Value == "base" {
				out.Content[i+1] = Merge(shared, out.Content[i+1])
			}
		}
		return out, nil
	}
	return Merge(shared, doc), nil
}

// Merge is fragment merged over shared (workload.py merge_blocks): where
// both hold a mapping the mappings merge, anything else of the fragment
// replaces the shared value whole (a list replaces a list; a null stays a
// null). The fragment's keys come first, in its order, then the keys only
// shared has. Neither input is changed.
func Merge(shared, fragment *yaml.Node) *yaml.Node {
	shared, fragment = yamltree.DeAlias(shared), yamltree.DeAlias(fragment)
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: fragment.Line, Column: fragment.Column}
	for i := 0; i+1 < len(fragment.Content); i += 2 {
		k, v := fragment.Content[i], yamltree.DeAlias(fragment.Content[i+1])
		if s := yamltree.DeAlias(yamltree.Get(shared, k.Value)); s != nil && s.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode {
			out.Content = append(out.Content, k, Merge(s, v))
			continue
		}
		out.Content = append(out.Content, k, yamltree.DeepCopy(v))
	}
	for i := 0; i+1 < len(shared.Content); i += 2 {
		if k := shared.Content[i]; yamltree.KeyIndex(fragment, k.Value) < 0 {
			out.Content = append(out.Content, k, yamltree.DeepCopy(shared.Content[i+1]))
		}
	}
	return out
}

// Plain is a deep copy of n with aliases replaced by what they name and
// merge keys (<<) expanded, so the tree reads as the dict PyYAML's
// safe_load gives InferenceX's launcher.
func Plain(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		return Plain(n.Content[0])
	}
	n = yamltree.DeAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		if yamltree.HasMerge(n) {
			n = yamltree.FlattenCopy(n)
		}
		out := *n
		out.Anchor = ""
		out.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			out.Content[i] = Plain(c)
		}
		return &out
	case yaml.SequenceNode:
		out := *n
		out.Anchor = ""
		out.Content = make([]*yaml.Node, len(n.Content))
		for i, c := range n.Content {
			out.Content[i] = Plain(c)
		}
		return &out
	}
	out := *n
	out.Anchor = ""
	return &out
}

// shallowMapping copies mapping m's key/value list, not the nodes.
func shallowMapping(m *yaml.Node) *yaml.Node {
	out := *m
	out.Content = append([]*yaml.Node(nil), m.Content...)
	return &out
}

// mapping is a one-key mapping node.
func mapping(key string, value *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{yamltree.StrKey(key), value}}
}

func intNode(v, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(v), Line: line}
}

func strNode(v string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: line}
}
