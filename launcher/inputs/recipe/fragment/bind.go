package fragment

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// Input is everything the binder reads: the lane, the matrix point and the
// facts of the cluster it runs on. The master reader fills Point, the
// runners.yaml reader Cluster; nothing else reaches the binder.
type Input struct {
	Lane    Lane
	Point   Point
	Cluster Cluster
}

// Point is the matrix point's part of the binder's input: what the
// workflow exports for it (generate.py@e0ab9519 point_environment).
type Point struct {
	Model     string // the Hugging Face id: model.path becomes hf:<Model>
	Image     string // the master image, as the workflow passes it
	Precision string
	// ISL and OSL: fixed-sequence points.
	ISL, OSL int
	// Conc is the multi-node point's CONC_LIST, or the single-node point's
	// one concurrency.
	Conc []int
	// RandomRangeRatio is a single-node fixed-sequence point's
	// RANDOM_RANGE_RATIO ("0.8" from the workflow).
	RandomRangeRatio string
	// KVOffloading is an agentic point's kv-offloading ("none", "dram", …);
	// TotalCPUDRAMGB its DRAM budget in decimal GB when that is "dram".
	KVOffloading   string
	TotalCPUDRAMGB int64
	// GPUCount is a single-node point's GPUs (tp × pp × pcp); the prefill
	// sizes are a multi-node point's prefill (or aggregated) worker's.
	GPUCount                         int
	PrefillTP, PrefillPP, PrefillPCP int
	// TP, EP and DPAttention are a single-node point's parallelism, which
	// picks its variant (Select).
	TP, EP      int
	DPAttention bool
	// Power is the row's power: true; the telemetry block is composed in
	// and benchmark.concurrencies bound.
	Power bool
	// Router and KVOffloadBackend are the row's component metadata; a
	// recipe whose setup script or service preamble installs one takes its
	// version (components.go).
	Router, KVOffloadBackend *Component
}

// Cluster is the cluster's part of the binder's input, from its
// runners.yaml record.
type Cluster struct {
	ID                string
	GPUsPerNode       int
	PowerExporterPort int // srt-slurm.power-exporter-port
	Fabric            Fabric
	// ClientEnv are the launcher's AgentX client paths (RESULT_DIR,
	// AIPERF_DATASET_MMAP_CACHE_DIR, HF_HUB_CACHE) on this cluster, in the
	// order they are written; Bind writes them into a multi-node agentic
	// point only.
	ClientEnv []EnvVar
	// Checkpoint is where the cluster stages the point's model (its
	// models.entries), Squash the staged squash file of its image (its
	// squash policy); "" where the cluster stages none.
	Checkpoint string
	Squash     string
}

// EnvVar is one name=value.
type EnvVar struct{ Name, Value string }

// InputError is a binder input missing or out of range.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

// DRAMBudget is the point's budget, nil unless it offloads KV to DRAM
// (workload.py dram_budget): a single-node point's budget covers its GPUs,
// a multi-node one's the GPUs its prefill (or aggregated) worker uses on
// each node, at most the cluster's GPUs per node.
func (in Input) DRAMBudget() (*Budget, error) {
	p := in.Point
	if p.KVOffloading != "dram" {
		return nil, nil
	}
	if p.TotalCPUDRAMGB <= 0 {
		return nil, &InputError{"a DRAM point needs a positive total-cpu-dram-gb"}
	}
	var gpus int
	switch {
	case !in.Lane.MultiNode:
		gpus = p.GPUCount
	case in.Cluster.GPUsPerNode <= 0:
		return nil, &InputError{"a multi-node DRAM point needs its cluster's gpus-per-node"}
	default:
		gpus = min(p.PrefillTP*p.PrefillPP*p.PrefillPCP, in.Cluster.GPUsPerNode)
	}
	if gpus <= 0 {
		return nil, &InputError{"a DRAM point needs the GPUs its budget covers (GPU count, or prefill tp, pp and pcp-size)"}
	}
	return &Budget{TotalGB: p.TotalCPUDRAMGB, GPUs: int64(gpus)}, nil
}

// Bind writes the point into the selected variant doc (a Plain mapping)
// and returns the bound recipe (workload.py bind_workload): schema and
// name lead, then model {…, path: hf:<model>, container: <image>,
// precision}, then the rest; identity.model.repo and
// identity.container.image where the recipe declares those blocks;
// benchmark.env ISL/OSL (fixed-sequence), MODEL, CONC, RANDOM_RANGE_RATIO
// and USE_CHAT_TEMPLATE (single-node), KV_OFFLOADING and TOTAL_CPU_DRAM_GB
// (agentic), the client paths; benchmark.concurrencies when telemetry is
// enabled; the master version of a component a repository script installs
// (bindComponents). It does not resolve references (Resolve does).
func Bind(file string, doc *yaml.Node, in Input) (*yaml.Node, error) {
	p := in.Point
	doc = yamltree.DeepCopy(doc) // a variant may share blocks with its siblings
	fail := func(format string, args ...any) error {
		return &yamltree.Error{File: file, Line: doc.Line, Msg: fmt.Sprintf(format, args...)}
	}
	for _, f := range []struct{ name, v string }{{"model", p.Model}, {"image", p.Image}, {"precision", p.Precision}} {
		if strings.TrimSpace(f.v) == "" {
			return nil, fail("missing workload input: the point's %s", f.name)
		}
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: doc.Line, Column: doc.Column}
	for _, k := range []string{"schema", "name"} {
		if kk, v := yamltree.KeyValue(doc, k); kk != nil {
			out.Content = append(out.Content, kk, v)
		}
	}
	model := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if mk, mv := yamltree.KeyValue(doc, "model"); mk != nil && mv.Kind == yaml.MappingNode {
		model.Line = mv.Line
		model.Content = append(model.Content, mv.Content...)
	}
	set(model, "path", strNode("hf:"+p.Model, 0))
	set(model, "container", strNode(p.Image, 0))
	set(model, "precision", strNode(p.Precision, 0))
	out.Content = append(out.Content, yamltree.StrKey("model"), model)
	for i := 0; i+1 < len(doc.Content); i += 2 {
		if k := doc.Content[i].Value; k != "schema" && k != "name" && k != "model" {
			out.Content = append(out.Content, doc.Content[i], doc.Content[i+1])
		}
	}
	if id := yamltree.Get(out, "identity"); id != nil && id.Kind == yaml.MappingNode {
		if m := yamltree.Get(id, "model"); m != nil && m.Kind == yaml.MappingNode {
			set(m, "repo", strNode(p.Model, 0))
		}
		if c := yamltree.Get(id, "container"); c != nil && c.Kind == yaml.MappingNode {
			// Identity names the registry reference, not pyxis's
			// registry#path spelling.
			set(c, "image", strNode(strings.Replace(p.Image, "#", "/", 1), 0))
		}
	}
	benchmark := child(out, "benchmark")
	env := child(benchmark, "env")
	if benchmark == nil || env == nil {
		return nil, fail("benchmark and benchmark.env must be mappings to take the point")
	}
	if !in.Lane.Agentic {
		if p.ISL <= 0 || p.OSL <= 0 {
			return nil, fail("ISL and OSL must be positive integers: %d, %d", p.ISL, p.OSL)
		}
		set(env, "ISL", strNode(strconv.Itoa(p.ISL), 0))
		set(env, "OSL", strNode(strconv.Itoa(p.OSL), 0))
	}
	concs, err := concurrencies(p.Conc)
	if err != nil {
		return nil, fail("%v", err)
	}
	if !in.Lane.MultiNode {
		if len(concs) != 1 {
			return nil, fail("a single-node point has one concurrency, not %d", len(concs))
		}
		conc := strconv.Itoa(concs[0])
		if v := yamltree.Get(env, "CONC"); v != nil && yamltree.PyStr(v) != conc {
			return nil, &yamltree.Error{File: file, Line: v.Line, Field: "benchmark.env.CONC", Msg: fmt.Sprintf("the variant's CONC %s is not the point's %s", yamltree.PyStr(v), conc)}
		}
		set(env, "MODEL", strNode(p.Model, 0))
		set(env, "CONC", strNode(conc, 0))
		if !in.Lane.Agentic {
			if strings.TrimSpace(p.RandomRangeRatio) == "" {
				return nil, fail("missing workload input: RANDOM_RANGE_RATIO")
			}
			set(env, "RANDOM_RANGE_RATIO", strNode(p.RandomRangeRatio, 0))
			set(env, "USE_CHAT_TEMPLATE", strNode(strconv.FormatBool(Speculates(out)), 0))
		}
	}
	if in.Lane.Agentic {
		if strings.TrimSpace(p.KVOffloading) == "" {
			return nil, fail("missing workload input: KV_OFFLOADING (the row's kv-offloading)")
		}
		if v := yamltree.Get(env, "KV_OFFLOADING"); v != nil && yamltree.PyStr(v) != p.KVOffloading {
			return nil, &yamltree.Error{File: file, Line: v.Line, Field: "benchmark.env.KV_OFFLOADING", Msg: fmt.Sprintf("the variant's %s is not the point's %s", yamltree.PyStr(v), p.KVOffloading)}
		}
		set(env, "KV_OFFLOADING", strNode(p.KVOffloading, 0))
		if p.KVOffloading == "dram" {
			if p.TotalCPUDRAMGB <= 0 {
				return nil, fail("TOTAL_CPU_DRAM_GB must be a positive integer: %d", p.TotalCPUDRAMGB)
			}
			set(env, "TOTAL_CPU_DRAM_GB", strNode(strconv.FormatInt(p.TotalCPUDRAMGB, 10), 0))
		}
	}
	// The launcher hands its client paths to multi-node AgentX points only
	// (generate.py@02d0272d _binder_inputs); a fragment that sets HF_HOME
	// keeps its own Hugging Face cache layout.
	for _, e := range in.Cluster.ClientEnv {
		if !in.Lane.Agentic || !in.Lane.MultiNode || e.Name == "HF_HUB_CACHE" && yamltree.Get(env, "HF_HOME") != nil {
			continue
		}
		set(env, e.Name, strNode(e.Value, 0))
	}
	// srtctl derives power-telemetry windows from benchmark.concurrencies.
	if t := yamltree.Get(out, "telemetry"); t != nil && t.Kind == yaml.MappingNode {
		if on, ok := yamltree.Bool(yamltree.Get(t, "enabled")); ok && on {
			list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			for _, c := range concs {
				list.Content = append(list.Content, intNode(c, 0))
			}
			set(benchmark, "concurrencies", list)
		}
	}
	if err := bindComponents(file, out, p); err != nil {
		return nil, err
	}
	return out, nil
}

// Stage points the bound recipe at what the cluster staged: model.path at
// the checkpoint and model.container at the squash file, where the input
// names them. generate leaves hf:<model> and the image as InferenceX's
// bound recipe has them; the launch path stages.
func Stage(doc *yaml.Node, c Cluster) {
	model := yamltree.Get(doc, "model")
	if model == nil || model.Kind != yaml.MappingNode {
		return
	}
	if c.Checkpoint != "" {
		set(model, "path", strNode(c.Checkpoint, 0))
	}
	if c.Squash != "" {
		set(model, "container", strNode(c.Squash, 0))
	}
}

// Speculates reports a recipe whose aggregated (or decode) worker drafts
// tokens, by its engine's own argument (synthetic_acceptance.py
// spec_parameters): vLLM speculative-config, SGLang
// speculative-algorithm/-algo, TRT-LLM speculative_config.
func Speculates(doc *yaml.Node) bool {
	roles := yamltree.Get(doc, "roles")
	role := yamltree.Get(roles, "agg")
	if role == nil {
		role = yamltree.Get(roles, "decode")
	}
	args := yamltree.Get(role, "args")
	engine := yamltree.Get(role, "engine")
	if engine == nil {
		engine = yamltree.Get(doc, "engine")
	}
	if engine != nil && engine.Kind == yaml.MappingNode {
		engine = yamltree.Get(engine, "type")
	}
	if args == nil || args.Kind != yaml.MappingNode || engine == nil {
		return false
	}
	present := func(k string) bool {
		switch v := yamltree.Get(args, k); {
		case v == nil || v.Tag == "!!null":
			return false
		case v.Kind == yaml.MappingNode:
			return len(v.Content) > 0
		default:
			return v.Value != "" && v.Value != "{}"
		}
	}
	switch engine.Value {
	case "vllm":
		return present("speculative-config")
	case "sglang":
		return present("speculative-algorithm") || present("speculative-algo")
	case "trtllm":
		return present("speculative_config")
	}
	return false
}

// concurrencies checks a CONC_LIST: canonical positive integers, each once.
func concurrencies(cs []int) ([]int, error) {
	if len(cs) == 0 {
		return nil, fmt.Errorf("the point has no concurrency")
	}
	seen := map[int]bool{}
	for _, c := range cs {
		if c <= 0 || seen[c] {
			return nil, fmt.Errorf("concurrencies must be positive unique integers: %v", cs)
		}
		seen[c] = true
	}
	return cs, nil
}

// set writes key's value in mapping m: in place where the key is (dict
// update keeps its position), else appended.
func set(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if v.Line == 0 {
				v.Line = m.Content[i].Line
			}
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, yamltree.StrKey(key), v)
}

// child is the mapping under key in m, created when absent; nil when m is
// nil or the key holds something else. A null value becomes a mapping.
func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Tag == "!!null" {
				v = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line}
				m.Content[i+1] = v
			}
			if v.Kind != yaml.MappingNode {
				return nil
			}
			return v
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, yamltree.StrKey(key), v)
	return v
}
