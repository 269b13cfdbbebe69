package recipe

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/variants"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// samplePoint is a point built for a fragment's lane, as the workflow
// exports one (generate.py point_environment): every field the binder
// reads set, a DRAM budget on agentic points, every fabric field set.
func samplePoint(lane fragment.Lane, conc, kv string) fragment.Input {
	in := fragment.Input{Lane: lane,
		Point: fragment.Point{Model: "org/Model", Image: "nvcr.io#nvidia/img:1", Precision: "fp8",
			ISL: 8192, OSL: 1024, Conc: []int{4, 16}, RandomRangeRatio: "0.8",
			KVOffloading: "dram", TotalCPUDRAMGB: 1600, GPUCount: 8, PrefillTP: 8, PrefillPP: 1, PrefillPCP: 1,
			// The components the sample's installers install, as a row declares them.
			Router: &fragment.Component{Name: "vllm-router", Version: "0.1.14"}, KVOffloadBackend: &fragment.Component{Name: "mooncake", Version: "0.3.11"}},
		Cluster: fragment.Cluster{ID: "sample", GPUsPerNode: 4, Fabric: fragment.Fabric{Values: map[string]string{}}},
	}
	for _, f := range fragment.FabricFields {
		in.Cluster.Fabric.Values[f] = "x0,x1"
	}
	if !lane.MultiNode {
		in.Point.Conc = []int{4}
		if conc != "" {
			in.Point.Conc = []int{atoi(conc)}
		}
	}
	if kv != "" {
		in.Point.KVOffloading = kv
	}
	if lane.Agentic && lane.MultiNode {
		in.Cluster.ClientEnv = []fragment.EnvVar{{Name: "RESULT_DIR", Value: "/logs/agentic"}, {Name: "HF_HUB_CACHE", Value: "/hf"}}
	}
	return in
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// TestSampleFragments composes and binds every recipe file of today's
// InferenceX sample: each variant of a fragment composes with its lane's
// shared block (and the telemetry block), binds a point built for its lane
// and resolves its @dram/@fabric values; a stored version that sets a
// bound key is refused, naming file, line and the key.
//
// The counts are the binder's rule's (workload.py@f57e21f1 _POINT_KEYS,
// BOUND_ENV, VARIANT_POINT_KEYS), not the sample README's text count: of
// the 53 files its README counts as setting model: (a line "model:" at
// indent 0 or 2), 4 hold only identity.model (not bound) and 49 a model
// block; 7 more set telemetry.enabled (the master's power owns it) and 3
// single-node AgentX bundles name TOTAL_CPU_DRAM_GB in variants (only CONC
// and KV_OFFLOADING may be). So 70 compose and bind, 59 are refused.
func TestSampleFragments(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	files := shareddata.YAMLFiles(t, "data", "inferencex-v3", "inferencex-e2e", "benchmarks")
	ctx := context.Background()
	var bound, variantsBound, refusedModel, refusedTelemetry, refusedDRAM int
	for _, file := range files {
		if strings.HasSuffix(file, "RECIPES.md") {
			continue
		}
		lane, ok := fragment.LaneOf(file)
		if !ok {
			t.Fatalf("%s: not in InferenceX's recipe layout", file)
		}
		if fragment.RootOf(file) != root {
			t.Fatalf("%s: RootOf = %q, want %s", file, fragment.RootOf(file), root)
		}
		blocks, err := sampleBlocks(ctx, t, root, lane)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := fragment.LoadBlock(ctx, file)
		if err != nil {
			t.Fatal(err)
		}
		composed, err := fragment.Compose(file, doc, lane, blocks)
		var bk *BoundKeyError
		if errors.As(err, &bk) {
			k := bk.Keys[0]
			switch {
			case k.Line == 0 || !strings.HasPrefix(err.Error(), file+":") || !strings.Contains(err.Error(), k.Field):
				t.Errorf("%s: the refusal does not name file:line and the key: %v", file, err)
			case strings.HasPrefix(k.Field, "model.") || strings.Contains(k.Field, ".model."):
				refusedModel++
			case strings.HasSuffix(k.Field, "telemetry.enabled"):
				refusedTelemetry++
			case strings.HasSuffix(k.Field, "benchmark.env.TOTAL_CPU_DRAM_GB"):
				refusedDRAM++
			default:
				t.Errorf("%s: refused for %s", file, k.Field)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		selectors := []string{""}
		if variants.IsOverrideFile(composed) {
			all, err := variants.ExpandAll(file, composed, "")
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			selectors = selectors[:0]
			for _, v := range all {
				selectors = append(selectors, v.Selector)
			}
		}
		ok = true
		for _, sel := range selectors {
			if err := bindSample(ctx, file, sel, lane, blocks); err != nil {
				t.Errorf("%s:%s: %v", file, sel, err)
				ok = false
			}
			variantsBound++
		}
		if ok {
			bound++
		}
	}
	if bound != 70 || refusedModel != 49 || refusedTelemetry != 7 || refusedDRAM != 3 {
		t.Errorf("%d fragments composed and bound, refused %d for model, %d for telemetry.enabled, %d for TOTAL_CPU_DRAM_GB; want 70, 49, 7, 3",
			bound, refusedModel, refusedTelemetry, refusedDRAM)
	}
	t.Logf("%d fragments (%d variants) bound; refused %d for model, %d for telemetry.enabled, %d for TOTAL_CPU_DRAM_GB",
		bound, variantsBound, refusedModel, refusedTelemetry, refusedDRAM)
}

// sampleBlocks are the lane's blocks from the sample; the sample stores no
// agentic-multi.yaml, so that lane gets a stand-in of its shape.
func sampleBlocks(ctx context.Context, t *testing.T, root string, lane fragment.Lane) (fragment.Blocks, error) {
	if lane.Agentic && lane.MultiNode {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte("benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/multi_node/srt_agentic.sh\n"), &n); err != nil {
			t.Fatal(err)
		}
		return fragment.Blocks{Shared: &n, SharedFile: filepath.Join(root, lane.SharedBlock())}, nil
	}
	return fragment.LoadBlocks(ctx, root, lane, lane.MultiNode, 9401)
}

// bindSample runs one variant through the reader's stages up to binding
// and checks that no reference is left.
func bindSample(ctx context.Context, file, selector string, lane fragment.Lane, blocks fragment.Blocks) error {
	var conc, kv string
	if !lane.MultiNode && selector != "" {
		// A single-node variant may name its point: bind that point.
		doc, _ := fragment.LoadBlock(ctx, file)
		composed, _ := fragment.Compose(file, doc, lane, blocks)
		v, err := variants.Expand(file, composed, selector)
		if err != nil {
			return err
		}
		env := yamltree.Get(yamltree.Get(v.Doc, "benchmark"), "env")
		if c := yamltree.Get(env, "CONC"); c != nil {
			conc = c.Value
		}
		if k := yamltree.Get(env, "KV_OFFLOADING"); k != nil {
			kv = k.Value
		}
		in := samplePoint(lane, conc, kv)
		variantParallelism(v.Doc, &in.Point)
		b, err := LoadBound(ctx, file, Options{Variant: selector, Fragment: &Fragment{Blocks: blocks, Input: in}})
		return checkBound(b, err)
	}
	if !lane.MultiNode {
		// A plain single-node recipe: the point is its own.
		doc, _ := fragment.LoadBlock(ctx, file)
		composed, _ := fragment.Compose(file, doc, lane, blocks)
		in := samplePoint(lane, conc, kv)
		variantParallelism(composed, &in.Point)
		b, err := LoadBound(ctx, file, Options{Fragment: &Fragment{Blocks: blocks, Input: in}})
		return checkBound(b, err)
	}
	b, err := LoadBound(ctx, file, Options{Variant: selector, Fragment: &Fragment{Blocks: blocks, Input: samplePoint(lane, conc, kv)}})
	return checkBound(b, err)
}

// variantParallelism gives a single-node point the variant's own GPUs and
// parallelism, as the master row that selects it has them.
func variantParallelism(doc *yaml.Node, p *fragment.Point) {
	agg := yamltree.Get(yamltree.Get(doc, "roles"), "agg")
	args := yamltree.Get(agg, "args")
	num := func(n *yaml.Node, d int) int {
		if n == nil {
			return d
		}
		return atoi(n.Value)
	}
	on := func(k string) bool { b, _ := yamltree.Bool(yamltree.Get(args, k)); return b }
	p.GPUCount = num(yamltree.Get(agg, "gpus"), 0)
	engine := yamltree.Get(doc, "engine")
	if t := yamltree.Get(engine, "type"); t != nil {
		engine = t
	}
	switch engine.Value {
	case "sglang":
		p.TP, p.DPAttention = num(yamltree.Get(args, "tensor-parallel-size"), 0), on("enable-dp-attention")
		p.EP = num(yamltree.Get(args, "expert-parallel-size"), num(yamltree.Get(args, "ep-size"), 1))
	case "trtllm":
		p.TP, p.EP, p.DPAttention = num(yamltree.Get(args, "tensor_parallel_size"), 0), num(yamltree.Get(args, "moe_expert_parallel_size"), 0), on("enable_attention_dp")
	case "vllm":
		d := num(yamltree.Get(args, "data-parallel-size"), 1)
		p.TP, p.DPAttention, p.EP = num(yamltree.Get(args, "tensor-parallel-size"), 1)*d, d > 1, 1
		if on("enable-expert-parallel") {
			p.EP = 2
		}
	}
}

// checkBound checks that no reference is left and the model is bound.
func checkBound(b *Bound, err error) error {
	if err != nil {
		return err
	}
	out, err := yaml.Marshal(b.Doc)
	if err != nil {
		return err
	}
	if s := string(out); strings.Contains(s, "@dram.") || strings.Contains(s, "@fabric.") || !strings.Contains(s, "hf:org/Model") {
		return errors.New("a reference is left, or the model is not bound:\n" + s)
	}
	return nil
}
