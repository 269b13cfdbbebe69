package generate

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/inputs/master"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// RandomRangeRatio is what InferenceX's workflows export for every
// fixed-sequence point (generate.py@e0ab9519 RANDOM_RANGE_RATIO).
const RandomRangeRatio = "0.8"

// Today is Points over today's master config (package master), with the
// generator's runners.yaml facts (each point's cluster and GPUs per node).
type Today struct {
	Master string
	Root   string // InferenceX's tree
	Facts  *master.RunnerFacts
}

// Points are the srt-slurm points of the keys, as infx generate takes
// them (eval mode "none": no eval-only jobs), each key's in the
// generator's order; a key without one is an error.
func (t *Today) Points(ctx context.Context, keys []string) ([]Point, error) {
	data, err := readlimit.ReadFileContext(ctx, t.Master, readlimit.Default)
	if err != nil {
		return nil, fmt.Errorf("--master: %w", err)
	}
	all, err := master.ExpandWith(t.Master, data, master.ExpandOptions{Runners: t.Facts, Root: t.Root})
	if err != nil {
		return nil, err
	}
	var out []Point
	for _, key := range keys {
		pts, err := master.Select(all, master.Selection{Keys: []string{key}})
		if err != nil {
			return nil, err
		}
		n := 0
		for _, p := range pts {
			if p.SrtRecipe == "" || p.EvalOnly {
				continue
			}
			row, err := p.RowJSON()
			if err != nil {
				return nil, err
			}
			out = append(out, Point{Key: p.Key, Runner: p.Runner, Recipe: p.SrtRecipe, Matrix: row, Power: p.Power,
				Lane:    fragment.Lane{Agentic: p.Scenario == master.AgenticCoding, MultiNode: p.Multinode},
				Binder:  BinderPoint(p),
				Cluster: p.Cluster, GPUsPerNode: p.GPUsPerNode})
			n++
		}
		if n == 0 {
			return nil, fmt.Errorf("--key %s: no srt-slurm points", key)
		}
	}
	return out, nil
}

// BinderPoint is the binder's view of a matrix point: what the workflow
// exports for it (generate.py@e0ab9519 point_environment).
func BinderPoint(p master.MatrixPoint) fragment.Point {
	b := fragment.Point{Model: p.Model, Image: p.Image, Precision: p.Precision, Conc: p.Conc, Power: p.Power,
		KVOffloading: p.KVOffloading, TotalCPUDRAMGB: int64(p.TotalCPUDramGB)}
	if p.Scenario != master.AgenticCoding {
		b.ISL, b.OSL, b.RandomRangeRatio = p.ISL, p.OSL, RandomRangeRatio
	}
	num := func(m map[string]any, k string) int {
		if v, ok := m[k].(int); ok {
			return v
		}
		return 1
	}
	if p.Multinode {
		b.PrefillTP, b.PrefillPP, b.PrefillPCP = num(p.Prefill, "tp"), num(p.Prefill, "pp"), num(p.Prefill, "pcp-size")
	} else {
		b.TP, b.EP = num(p.Row, "tp"), num(p.Row, "ep")
		b.GPUCount = b.TP * num(p.Row, "pp") * num(p.Row, "pcp-size")
		b.DPAttention, _ = p.Row["dp-attn"].(bool)
	}
	b.Router = component(p.Row["router"])
	b.KVOffloadBackend = component(p.Row["kv-offload-backend"])
	return b
}

// component is a row's {name, version} metadata, nil when absent.
func component(v any) *fragment.Component {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	name, _ := m["name"].(string)
	version, _ := m["version"].(string)
	return &fragment.Component{Name: name, Version: version}
}

// FileOptions are `slurmbench generate`'s.
type FileOptions struct {
	Master, Runners, Root, Out string
	Keys                       []string
	Stdout                     io.Writer
	JSON                       bool // the manifest on Stdout, not the summary line
}

// RunFiles is `generate`: Run over today's master config and the
// runners.yaml beside it (or Runners), read strictly (package runners) for
// the clusters' facts. Root "" is the directory above the
// master's configs/.
func RunFiles(ctx context.Context, o FileOptions) (*Manifest, error) {
	if o.Root == "" {
		o.Root = filepath.Dir(filepath.Dir(o.Master))
	}
	if o.Runners == "" {
		o.Runners = filepath.Join(filepath.Dir(o.Master), "runners.yaml")
	}
	data, err := readlimit.ReadFileContext(ctx, o.Runners, readlimit.Default)
	if err != nil {
		return nil, fmt.Errorf("--runners: %w", err)
	}
	facts, err := master.ReadRunnerFacts(o.Runners, data)
	if err != nil {
		return nil, err
	}
	inv, err := runners.Load(ctx, o.Runners, runners.Options{})
	if err != nil {
		return nil, err
	}
	t := &Today{Master: o.Master, Root: o.Root, Facts: facts}
	summary := o.Stdout
	if o.JSON {
		summary = nil
	}
	m, err := Run(ctx, Options{Root: o.Root, Keys: o.Keys, Out: o.Out, Points: t, Clusters: RunnersClusters{inv}, Stdout: summary})
	if err != nil || !o.JSON {
		return m, err
	}
	enc := json.NewEncoder(o.Stdout)
	enc.SetEscapeHTML(false)
	return m, enc.Encode(m)
}
