package recipe

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// SrtctlTypeFields are the benchmark fields of srtctl's other benchmark
// types (its BenchmarkConfig: accuracy, router, mooncake-router and
// trace-replay fields). Which type reads which is SrtctlBenchmarkTypes.
type SrtctlTypeFields struct {
	NumExamples      *int     `yaml:"num_examples"`
	MaxTokens        *int     `yaml:"max_tokens"`
	Repeat           *int     `yaml:"repeat"`
	NumThreads       *int     `yaml:"num_threads"`
	MaxContextLength *int     `yaml:"max_context_length"`
	Categories       []string `yaml:"categories"`
	NumShots         *int     `yaml:"num_shots"`
	Temperature      *float64 `yaml:"temperature"`
	TopP             *float64 `yaml:"top_p"`
	TopK             *int     `yaml:"top_k"`
	NumRequests      *int     `yaml:"num_requests"`
	Concurrency      *int     `yaml:"concurrency"`
	// PrefixRatios is a list of numbers or one space-separated string.
	PrefixRatios     *Raw   `yaml:"prefix_ratios"`
	MooncakeWorkload string `yaml:"mooncake_workload"`
	TTFTThresholdMS  *int   `yaml:"ttft_threshold_ms"`
	ITLThresholdMS   *int   `yaml:"itl_threshold_ms"`
	DatasetPath      string `yaml:"dataset_path"`
	TraceFile        string `yaml:"trace_file"`
	AIPerfPackage    string `yaml:"aiperf_package"`
	// AIPerfArgs are extra aiperf flags, in the recipe's order (srtctl's
	// append_aiperf_args walks the mapping in order).
	AIPerfArgs *Raw `yaml:"aiperf_args"`
	// SlowDownSleepTime and SlowDownWaitTime drive SGLang's /slow_down on
	// the decode workers around an sa-bench run (srtctl's benchmark stage).
	SlowDownSleepTime *float64 `yaml:"slow_down_sleep_time"`
	SlowDownWaitTime  *float64 `yaml:"slow_down_wait_time"`
}

// SrtctlBenchmarkTypes are the benchmark types srtctl c88ef731 registers
// beside sa-bench and custom: each runs srtctl's bench.sh for it in the
// engine container (its benchmarks/*.py build_command).
var SrtctlBenchmarkTypes = map[string]bool{
	"mmlu": true, "gpqa": true, "longbenchv2": true, "gsm8k": true, "lm-eval": true,
	"mooncake-router": true, "router": true, "trace-replay": true, "sglang-bench": true,
}

// mooncakeWorkloads are mooncake-router's traces (MooncakeRouterRunner.validate_config).
var mooncakeWorkloads = map[string]bool{"mooncake": true, "conversation": true, "synthetic": true, "toolagent": true}

// MockerFields are srtctl's mocker backend settings (backends/mocker.py):
// Dynamo's simulated engine, python3 -m dynamo.mocker, in the recipe's
// container (planner/engine/mocker.go).
type MockerFields struct {
	EngineType           string         `yaml:"engine_type"`
	SpeedupRatio         *float64       `yaml:"speedup_ratio"`
	DecodeSpeedupRatio   *float64       `yaml:"decode_speedup_ratio"`
	NumGPUBlocksOverride *int           `yaml:"num_gpu_blocks_override"`
	MaxNumSeqs           *int           `yaml:"max_num_seqs"`
	MaxNumBatchedTokens  *int           `yaml:"max_num_batched_tokens"`
	BlockSize            *int           `yaml:"block_size"`
	DataParallelSize     *int           `yaml:"data_parallel_size"`
	NumWorkers           *int           `yaml:"num_workers"`
	StartupTime          *float64       `yaml:"startup_time"`
	KVTransferBandwidth  *float64       `yaml:"kv_transfer_bandwidth"`
	KVCacheDtype         string         `yaml:"kv_cache_dtype"`
	EnablePrefixCaching  *bool          `yaml:"enable_prefix_caching"`
	EnableChunkedPrefill *bool          `yaml:"enable_chunked_prefill"`
	PreemptionMode       string         `yaml:"preemption_mode"`
	MockerConfig         *EngineConfigs `yaml:"mocker_config"`
}

// Observability is srtctl's observability block (OTEL, an in-job
// Prometheus scraper, Tachometer); read whole, run only when off.
type Observability struct {
	Enabled    *bool          `yaml:"enabled"`
	Tachometer *Tachometer    `yaml:"tachometer"`
	Rest       map[string]Raw `yaml:",inline"`
}

// validateSrtctlTypes checks the fields of srtctl's other benchmark types
// as its runners' validate_config do.
func (r *Recipe) validateSrtctlTypes(add func(field, format string, args ...any)) {
	b := r.Benchmark
	positive := func(field string, v *int) {
		if v != nil && *v <= 0 {
			add(field, "must be a positive number, got %d", *v)
		}
	}
	positive("benchmark.num_examples", b.NumExamples)
	positive("benchmark.max_tokens", b.MaxTokens)
	positive("benchmark.repeat", b.Repeat)
	positive("benchmark.num_threads", b.NumThreads)
	positive("benchmark.max_context_length", b.MaxContextLength)
	positive("benchmark.num_requests", b.NumRequests)
	positive("benchmark.concurrency", b.Concurrency)
	if b.NumShots != nil && *b.NumShots < 0 {
		add("benchmark.num_shots", "must not be negative, got %d", *b.NumShots)
	}
	if b.Type == "mooncake-router" || b.MooncakeWorkload != "" {
		if w := b.MooncakeWorkload; w != "" && !mooncakeWorkloads[w] {
			add("benchmark.mooncake_workload", "%q is not one of mooncake, conversation, synthetic, toolagent", w)
		}
	}
	positive("benchmark.ttft_threshold_ms", b.TTFTThresholdMS)
	positive("benchmark.itl_threshold_ms", b.ITLThresholdMS)
	if b.Type == "trace-replay" && b.TraceFile == "" {
		add("benchmark.trace_file", "required for benchmark.type trace-replay (a container path to the trace JSONL)")
	}
	if v := b.SlowDownSleepTime; v != nil && !(*v > 0) {
		add("benchmark.slow_down_sleep_time", "must be a positive number of seconds, got %v", *v)
	}
	if v := b.SlowDownWaitTime; v != nil && !(*v > 0) {
		add("benchmark.slow_down_wait_time", "must be a positive number of seconds, got %v", *v)
	}
	if m := r.Backend.Mocker; r.Backend.Type != "mocker" && (m.EngineType != "" || m.SpeedupRatio != nil || m.MockerConfig != nil || m.MaxNumSeqs != nil ||
		m.NumGPUBlocksOverride != nil || m.MaxNumBatchedTokens != nil || m.DecodeSpeedupRatio != nil || m.DataParallelSize != nil || m.NumWorkers != nil ||
		m.BlockSize != nil || m.StartupTime != nil || m.KVTransferBandwidth != nil || m.KVCacheDtype != "" || m.EnablePrefixCaching != nil ||
		m.EnableChunkedPrefill != nil || m.PreemptionMode != "") {
		add("backend", "engine_type, speedup_ratio, mocker_config and the other mocker settings belong to backend.type mocker (type is %q)", r.Backend.Type)
	}
	if m := r.Backend.Mocker; m.SpeedupRatio != nil && !(*m.SpeedupRatio > 0) {
		add("backend.speedup_ratio", "must be positive, got %v", *m.SpeedupRatio)
	}
	if p := r.Profiling; p != nil {
		switch p.Type {
		case "", "none", "nsys", "nsys-time", "torch":
		default:
			add("profiling.type", "%q is not one of none, nsys, nsys-time, torch", p.Type)
		}
		for _, ph := range []struct {
			name string
			c    *ProfilingPhase
		}{{"prefill", p.Prefill}, {"decode", p.Decode}, {"aggregated", p.Aggregated}} {
			if ph.c == nil {
				continue
			}
			if ph.c.StartStep != nil && *ph.c.StartStep < 0 {
				add("profiling."+ph.name+".start_step", "must not be negative, got %d", *ph.c.StartStep)
			}
			if ph.c.StartStep != nil && ph.c.StopStep != nil && *ph.c.StopStep <= *ph.c.StartStep {
				add("profiling."+ph.name+".stop_step", "%d is not after start_step %d", *ph.c.StopStep, *ph.c.StartStep)
			}
		}
	}
}

// checkSrtctlTypes refuses what of srtctl's other features slurmbench does
// not run, naming the field; "" when it runs them all.
func (r *Recipe) checkSrtctlTypes() error {
	b := r.Benchmark
	switch {
	case r.Observability != nil && r.Observability.Enabled != nil && *r.Observability.Enabled:
		return r.unsupported("observability.enabled", "srtctl's observability (OTEL, in-job Prometheus scraper, Tachometer)")
	case r.Observability != nil && r.Observability.on() != "":
		f := r.Observability.on()
		return r.unsupported("observability."+f, "srtctl's observability (OTEL, in-job Prometheus scraper, Tachometer)")
	case b.Type != "" && b.Type != "sa-bench" && b.Type != "custom" && b.Type != "manual" && !SrtctlBenchmarkTypes[b.Type]:
		return r.unsupported("benchmark.type", fmt.Sprintf("benchmark type %q (srtctl %s registers no runner for it either: its benchmark stage fails with \"Unknown benchmark type\")", b.Type, SrtctlRevision))
	}
	return nil
}

// on names the first observability setting that turns something on
// besides enabled ("enable_otel", "scrape_metrics", "build_dashboard",
// "tachometer.enabled"), or "".
func (o *Observability) on() string {
	for _, k := range []string{"enable_otel", "scrape_metrics", "build_dashboard"} {
		if v, ok := o.Rest[k]; ok && isTrue(v.Node) {
			return k
		}
	}
	if t := o.Tachometer; t != nil && t.Enabled != nil && *t.Enabled {
		return "tachometer.enabled"
	}
	return ""
}

func isTrue(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		return false
	}
	b, err := strconv.ParseBool(strings.ToLower(n.Value))
	return err == nil && b
}
