package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/results/resultname"
)

// Parallelism is one side's layout as InferenceX's multinode template
// exports it (PREFILL_TP, PREFILL_PP_SIZE, ...).
type Parallelism struct {
	TP, PP, DCPSize, PCPSize, EP int
	// DPAttention is passed through as given ("true"/"false"), like the env var.
	DPAttention string
	NumWorkers  int
}

// Router is the optional {name, version} of ROUTER_METADATA.
type Router struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// RunInfo is what process_result.py reads from the environment besides the
// result file; GPU counts come from the Point instead, so the file name and
// the aggregate cannot disagree.
type RunInfo struct {
	HW                string // RUNNER_TYPE
	Image             string
	ModelPrefix       string // MODEL_PREFIX, written as infmax_model_prefix
	Framework         string
	Precision         string
	SpecDecoding      string
	Disagg            bool
	RecipeFingerprint string
	ISL, OSL          int
	Router            *Router
	KVP2PTransfer     string
	Prefill, Decode   Parallelism
	// PrefillHW and DecodeHW are set together or not at all.
	PrefillHW, DecodeHW string
}

// PerGPU holds the per-GPU throughputs of one point, as process_result.py
// computes them.
type PerGPU struct {
	PrefillGPUs, DecodeGPUs, TotalGPUs int
	TputPerGPU                         float64 // total tok/s over all GPUs
	OutputTputPerGPU                   float64 // output tok/s over decode GPUs
	InputTputPerGPU                    float64 // input tok/s over prefill GPUs
}

// PerGPUThroughput applies process_result.py's multinode formulas:
//
//	total_gpus          = PREFILL_GPUS + DECODE_GPUS
//	tput_per_gpu        = total_token_throughput / total_gpus
//	output_tput_per_gpu = output_throughput / (DECODE_GPUS if DECODE_GPUS > 0 else total_gpus)
//	input_tput_per_gpu  = (total_token_throughput - output_throughput) / PREFILL_GPUS
//
// An aggregated point (no _ctx_/_gen_ in its name) counts as PREFILL_GPUS =
// gpus and DECODE_GPUS = 0, as the workflow sets them.
func PerGPUThroughput(p PointID, totalTokenThroughput, outputThroughput float64) (PerGPU, error) {
	if err := p.Validate(); err != nil {
		return PerGPU{}, err
	}
	g := PerGPU{PrefillGPUs: p.PrefillGPUs, DecodeGPUs: p.DecodeGPUs}
	if !p.Disaggregated() {
		g.PrefillGPUs, g.DecodeGPUs = p.GPUs, 0
	}
	g.TotalGPUs = g.PrefillGPUs + g.DecodeGPUs
	outDenominator := g.DecodeGPUs
	if outDenominator <= 0 {
		outDenominator = g.TotalGPUs
	}
	g.TputPerGPU = totalTokenThroughput / float64(g.TotalGPUs)
	g.OutputTputPerGPU = outputThroughput / float64(outDenominator)
	g.InputTputPerGPU = (totalTokenThroughput - outputThroughput) / float64(g.PrefillGPUs)
	return g, nil
}

// Record is a JSON object that keeps its keys in insertion order, so an
// aggregate reads like process_result.py's output.
type Record struct {
	keys []string
	vals map[string]any
}

// Set adds or replaces key; a new key goes last.
func (r *Record) Set(key string, v any) {
	if r.vals == nil {
		r.vals = map[string]any{}
	}
	if _, ok := r.vals[key]; !ok {
		r.keys = append(r.keys, key)
	}
	r.vals[key] = v
}

// Get returns the value of key.
func (r *Record) Get(key string) (any, bool) {
	v, ok := r.vals[key]
	return v, ok
}

// Float returns a numeric value of key.
func (r *Record) Float(key string) (float64, bool) {
	switch v := r.vals[key].(type) {
	case float64:
		return v, true
	case int:
		return float64(v), true
	}
	return 0, false
}

// Keys lists the keys in order.
func (r *Record) Keys() []string { return append([]string(nil), r.keys...) }

func (r *Record) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range r.keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(r.vals[k])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Aggregate builds the agg_<name>.json record of one multinode point the way
// InferenceX's utils/process_result.py does: the run
// fields, the topology, the per-GPU throughputs, then for every key of the
// result in file order
//
//	key ending in "ms":  key without "_ms"                     = value / 1000 (ms → s)
//	key containing tpot: key without "_ms", tpot → intvty      = 1000 / value (tok/s/user)
//
// A zero TPOT statistic (std_tpot_ms of identical requests, or a one-token
// run) gives intvty 0 instead of dividing by zero, as later InferenceX
// versions do; std_intvty is kept for shape although 1000/std means nothing.
func Aggregate(r *SABenchResult, p PointID, info RunInfo) (*Record, error) {
	if (info.PrefillHW == "") != (info.DecodeHW == "") {
		return nil, fmt.Errorf("aggregating %s: prefill and decode hardware must be given together", p.Label())
	}
	for _, v := range []int{info.Prefill.PP, info.Prefill.DCPSize, info.Prefill.PCPSize, info.Decode.PP, info.Decode.DCPSize, info.Decode.PCPSize} {
		if v < 0 {
			return nil, fmt.Errorf("aggregating %s: PP, DCP and PCP sizes must be positive", p.Label())
		}
	}
	if r.TotalTokenThroughput <= 0 || r.OutputThroughput <= 0 {
		return nil, fmt.Errorf("aggregating %s: non-positive throughput (total %g, output %g): no successful generation was measured",
			p.Label(), r.TotalTokenThroughput, r.OutputThroughput)
	}
	g, err := PerGPUThroughput(p, r.TotalTokenThroughput, r.OutputThroughput)
	if err != nil {
		return nil, fmt.Errorf("aggregating %s: %w", p.Label(), err)
	}
	conc := p.Concurrency
	if r.MaxConcurrency > 0 {
		conc = r.MaxConcurrency
	}

	rec := &Record{}
	rec.Set("hw", info.HW)
	rec.Set("conc", conc)
	rec.Set("image", info.Image)
	rec.Set("model", r.ModelID)
	rec.Set("infmax_model_prefix", info.ModelPrefix)
	rec.Set("framework", info.Framework)
	rec.Set("precision", info.Precision)
	rec.Set("spec_decoding", info.SpecDecoding)
	rec.Set("disagg", info.Disagg)
	rec.Set("recipe_fingerprint", info.RecipeFingerprint)
	rec.Set("isl", info.ISL)
	rec.Set("osl", info.OSL)
	if info.Router != nil {
		rec.Set("router", *info.Router)
	}
	if info.KVP2PTransfer != "" {
		rec.Set("kv_p2p_transfer", info.KVP2PTransfer)
	}

	// Without decode GPUs the decode side does not exist: tp/ep read 0 and
	// pp/dcp/pcp 1, as process_result.py writes them.
	decode := info.Decode
	if g.DecodeGPUs <= 0 {
		decode.TP, decode.EP = 0, 0
		decode.PP, decode.DCPSize, decode.PCPSize = 1, 1, 1
	}
	prefill := info.Prefill
	rec.Set("is_multinode", true)
	for _, side := range []struct {
		name string
		par  Parallelism
	}{{"prefill", prefill}, {"decode", decode}} {
		rec.Set(side.name+"_tp", side.par.TP)
		rec.Set(side.name+"_pp", orOne(side.par.PP))
		rec.Set(side.name+"_dcp_size", orOne(side.par.DCPSize))
		rec.Set(side.name+"_pcp_size", orOne(side.par.PCPSize))
		rec.Set(side.name+"_ep", side.par.EP)
		rec.Set(side.name+"_dp_attention", side.par.DPAttention)
		rec.Set(side.name+"_num_workers", side.par.NumWorkers)
	}
	rec.Set("num_prefill_gpu", g.PrefillGPUs)
	rec.Set("num_decode_gpu", g.DecodeGPUs)
	rec.Set("tput_per_gpu", g.TputPerGPU)
	rec.Set("output_tput_per_gpu", g.OutputTputPerGPU)
	rec.Set("input_tput_per_gpu", g.InputTputPerGPU)
	if info.PrefillHW != "" {
		rec.Set("prefill_hw", info.PrefillHW)
		rec.Set("decode_hw", info.DecodeHW)
	}

	for _, f := range r.members() {
		v, ok := number(f.val)
		if !ok {
			continue // Python would crash on float(None); a missing statistic is simply absent
		}
		if strings.HasSuffix(f.key, "ms") {
			rec.Set(strings.ReplaceAll(f.key, "_ms", ""), v/1000)
		}
		if strings.Contains(f.key, "tpot") {
			intvty := 0.0
			if v != 0 {
				intvty = 1000 / v
			}
			rec.Set(strings.ReplaceAll(strings.ReplaceAll(f.key, "_ms", ""), "tpot", "intvty"), intvty)
		}
	}
	return rec, nil
}

// orOne is the env default of the PP/DCP/PCP sizes: unset means 1.
func orOne(v int) int {
	if v == 0 {
		return 1
	}
	return v
}

// AggregateName is the file name of a point's aggregate: agg_<staged name>
// (process_result.py writes agg_${RESULT_FILENAME}.json with RESULT_FILENAME
// the staged name without .json).
func AggregateName(stagedName string) string { return "agg_" + stagedName }

// WriteAggregate writes rec as agg_<stagedName> into dir, indented like
// Python's json.dump(indent=2), atomically, and returns the path.
func WriteAggregate(dir, stagedName string, rec *Record, opt atomicfile.Options) (string, error) {
	if err := resultname.CheckComponent("staged name", stagedName); err != nil {
		return "", err
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding aggregate %s: %w", stagedName, err)
	}
	path := filepath.Join(dir, AggregateName(stagedName))
	if err := atomicfile.WriteFile(path, append(b, '\n'), opt); err != nil {
		return "", err
	}
	return path, nil
}
