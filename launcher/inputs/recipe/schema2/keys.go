package schema2

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

// SchemaRevision is the srt-slurm recipe schema Keys covers: the newest
// stored reference, docs/schema/recipe.schema.json of NVIDIA/srt-slurm at
// 1c3080ec (a superset of what v2.43.4, InferenceX's pin 848f72d4, loads:
// tokenspeed, llm-d, smg, restart, record_launch_plan).
const SchemaRevision = "1c3080ec"

// Plan is what slurmbench does with a key of srt-slurm's recipe schema.
type Plan int

const (
	// Planned keys are read into the plan (some of their values may still
	// be refused by the check that reads them).
	Planned Plan = iota
	// NoEffect keys change nothing slurmbench runs: read, dropped, warned.
	NoEffect
	// Refused keys are refused by name, with why, before anything runs.
	Refused
)

// Key is one key (and, unless a longer entry says otherwise, everything
// under it) of the recipe schema: roles.* stands for any role, services[]
// for any service.
type Key struct {
	Path string
	Plan Plan
	Why  string // Refused and NoEffect: the reason given
	// Own: the reader's own check refuses it (normalize.go, the reader's
	// sweep refusal), naming the key; the table walk leaves it alone.
	Own bool
}

const (
	whySidecar   = "the native Dynamo sidecar mode"
	whyReporting = "srtctl's reporting (status endpoint, S3 upload, AI analysis of the run); slurmbench reports through its run directory, manifest and staged results"
	whyNsys      = "this nsys profiling option (slurmbench's profiling takes type, start/stop steps per role, delay/duration and extra_nsys_args)"
	whyCPUPower  = "CPU power sampling inside the job (slurmbench's power telemetry reads the DCGM exporter)"
	whyExporter  = "choosing the DCGM exporter's binary, kind, GPU labels or metric names (slurmbench reads dcgm-exporter's standard metrics from its container)"
	whyRouter    = "this frontend option (slurmbench runs the dynamo, sglang, sglang-router, vllm, vllm-router and trtllm_serve frontends with their args and env)"
	whyFatal     = "recipe-defined fatal log patterns (slurmbench's health gate classifies failures with its own rules, launcher/diagnose)"
	whyMocker    = "this option of Dynamo's mocker engine (slurmbench runs the mocker with its defaults)"
	whyPerRole   = "one image and one set of srun options per job"
)

// Keys is every key of the schema (SchemaRevision) with what slurmbench
// does with it; TestSchemaKeysPlannedOrRefused walks the schema and holds
// the table to it, and docs/recipes.md lists the refusals.
var Keys = []Key{
	{Path: "schema"}, {Path: "name"}, {Path: "model"}, {Path: "resources"},
	{Path: "resources.het_jobs", Plan: Refused, Why: "heterogeneous jobs", Own: true},
	{Path: "engine"},
	{Path: "engine.block_size", Plan: Refused, Why: whyMocker},
	{Path: "engine.data_parallel_size", Plan: Refused, Why: whyMocker},
	{Path: "engine.decode_speedup_ratio", Plan: Refused, Why: whyMocker},
	{Path: "engine.enable_chunked_prefill", Plan: Refused, Why: whyMocker},
	{Path: "engine.enable_prefix_caching", Plan: Refused, Why: whyMocker},
	{Path: "engine.engine_type", Plan: Refused, Why: whyMocker},
	{Path: "engine.kv_transfer_bandwidth", Plan: Refused, Why: whyMocker},
	{Path: "engine.max_num_batched_tokens", Plan: Refused, Why: whyMocker},
	{Path: "engine.max_num_seqs", Plan: Refused, Why: whyMocker},
	{Path: "engine.num_gpu_blocks_override", Plan: Refused, Why: whyMocker},
	{Path: "engine.num_workers", Plan: Refused, Why: whyMocker},
	{Path: "engine.preemption_mode", Plan: Refused, Why: whyMocker},
	{Path: "engine.speedup_ratio", Plan: Refused, Why: whyMocker},
	{Path: "engine.startup_time", Plan: Refused, Why: whyMocker},
	{Path: "engine.mooncake_protocol", Plan: Refused, Why: "the ATOM engine's Mooncake protocol (slurmbench runs SGLang, vLLM, TRT-LLM, Dynamo's mocker and its mock)"},
	{Path: "engine.numa_cpu_bind", Plan: Refused, Why: "TRT-LLM's CPU NUMA binding (numa_memory_bind is read)"},
	{Path: "engine.failover", Plan: Refused, Why: "vLLM's failover shadow engines"},
	{Path: "engine.vllm_serve_binary", Plan: Refused, Why: "a vllm serve binary other than the image's"},
	{Path: "roles"},
	{Path: "roles.*.engine"},
	{Path: "roles.*.engine.*", Plan: Refused, Why: "engine options per role", Own: true},
	{Path: "roles.*.engine.type"},
	{Path: "roles.*.sidecar", Plan: Refused, Why: whySidecar, Own: true},
	{Path: "roles.*.container", Plan: Refused, Why: "a per-role container image (" + whyPerRole + ")"},
	{Path: "roles.*.srun_options", Plan: Refused, Why: "per-role srun options (" + whyPerRole + ")"},
	{Path: "roles.*.restart", Plan: Refused, Why: "restarting a worker that exits (a worker exit fails the run)"},
	{Path: "frontend"},
	{Path: "frontend.container_image", Plan: Refused, Why: "a separate frontend container image (the frontend runs in the job's image or nginx's)"},
	{Path: "frontend.ctx_router"}, // trtllm_serve's ser.yaml (launcher/planner/infra/trtllm_serve.go)
	{Path: "frontend.gen_router"},
	{Path: "frontend.worker_selection", Plan: Refused, Why: whyRouter},
	{Path: "frontend.epp_config", Plan: Refused, Why: "llm-d's endpoint picker (EPP) configuration"},
	{Path: "frontend.server_config_extra"},
	{Path: "frontend.numa_bind", Plan: Refused, Why: "NUMA binding of the frontend process"},
	{Path: "benchmark"},
	{Path: "benchmark.agentperf_client_dir", Plan: Refused, Why: "the agentperf benchmark client (slurmbench runs sa-bench, custom, manual and its native client)"},
	{Path: "benchmark.agentperf_config", Plan: Refused, Why: "the agentperf benchmark client (slurmbench runs sa-bench, custom, manual and its native client)"},
	{Path: "benchmark.colocate_with_frontend", Plan: Refused, Why: "running the benchmark client inside the frontend's step (benchmark.placement.node places it)"},
	{Path: "benchmark.reuse_http_connections", Plan: Refused, Why: "the sa-bench client's connection-reuse switch (slurmbench's clients keep their own connection policy)"},
	{Path: "benchmark.stream_output", Plan: NoEffect, Why: "slurmbench always streams the benchmark's output into its log (InferenceX's launcher sets it with --set)"},
	{Path: "benchmark.sweep", Plan: Refused, Why: "in-job benchmark sweeps (one point per recipe; matrix runs many)"},
	{Path: "dynamo"},
	{Path: "dynamo.sidecar", Plan: Refused, Why: whySidecar},
	{Path: "dynamo.sidecar_args", Plan: Refused, Why: whySidecar},
	{Path: "dynamo.sidecar_binary", Plan: Refused, Why: whySidecar},
	{Path: "dynamo.sidecar_context_length", Plan: Refused, Why: whySidecar},
	{Path: "dynamo.sidecar_port", Plan: Refused, Why: whySidecar},
	{Path: "dynamo.sidecar_startup_timeout", Plan: Refused, Why: whySidecar},
	{Path: "health_check"},
	{Path: "health_check.extra_fatal_log_patterns", Plan: Refused, Why: whyFatal},
	{Path: "health_check.fatal_log_markers", Plan: Refused, Why: whyFatal},
	{Path: "host_setup"}, {Path: "identity"}, {Path: "output"}, {Path: "post_eval"},
	{Path: "slurm"}, {Path: "sbatch_directives"}, {Path: "srun_options"}, {Path: "setup_script"},
	{Path: "environment"}, {Path: "container_mounts"}, {Path: "extra_mount"}, {Path: "enable_config_dump"},
	{Path: "observability"},
	{Path: "observability.enabled", Plan: Refused, Why: "srtctl's observability stack", Own: true},
	{Path: "observability.enable_otel", Plan: Refused, Why: "srtctl's observability stack", Own: true},
	{Path: "observability.tachometer"},
	{Path: "observability.tachometer.enabled", Plan: Refused, Why: "srtctl's observability stack", Own: true},
	{Path: "observability.tachometer.*", Plan: Refused, Why: "Tachometer's settings (srtctl's observability stack)"},
	{Path: "profiling"},
	{Path: "profiling.capture_range_end", Plan: Refused, Why: whyNsys},
	{Path: "profiling.nsys_library_paths", Plan: Refused, Why: whyNsys},
	{Path: "profiling.nsys_trace", Plan: Refused, Why: whyNsys},
	{Path: "profiling.trace_fork_before_exec", Plan: Refused, Why: whyNsys},
	{Path: "profiling.*.capture_scope", Plan: Refused, Why: whyNsys},
	{Path: "profiling.*.worker_index", Plan: Refused, Why: whyNsys},
	{Path: "profiling.*.worker_rank", Plan: Refused, Why: whyNsys},
	{Path: "reporting", Plan: Refused, Why: whyReporting},
	{Path: "services"}, {Path: "services[]"},
	{Path: "services[].build_command", Plan: Refused, Why: "building a service from source"},
	{Path: "services[].source", Plan: Refused, Why: "cloning and building a service from source", Own: true},
	{Path: "services[].external", Plan: Refused, Why: "an already-running external discovery endpoint", Own: true},
	{Path: "services[].metrics", Plan: Refused, Why: "service metrics (Tachometer)", Own: true},
	{Path: "services[].nodes", Plan: Refused, Why: "a service that owns a pool of nodes", Own: true},
	{Path: "services[].placement.pool", Plan: Refused, Why: "running a service on another service's pool", Own: true},
	{Path: "services[].terminal", Plan: Refused, Why: "a terminal service (the job ends when it exits)", Own: true},
	{Path: "sweep", Plan: Refused, Why: "job-level sweeps (one point per recipe; matrix runs many)"},
	{Path: "telemetry"},
	{Path: "telemetry.cpu_power", Plan: Refused, Why: whyCPUPower},
	{Path: "telemetry.dcgm_exporter.binary", Plan: Refused, Why: whyExporter},
	{Path: "telemetry.dcgm_exporter.kind", Plan: Refused, Why: whyExporter},
	{Path: "telemetry.dcgm_exporter.gpu_labels", Plan: Refused, Why: whyExporter},
	{Path: "telemetry.dcgm_exporter.gpu_metrics", Plan: Refused, Why: whyExporter},
}

// KeyFor is the entry that decides schema path p (dotted, roles.* and
// services[] as in Keys): the longest entry that is p or above it, a *
// matching any one segment.
func KeyFor(p string) (Key, bool) {
	segs := strings.Split(p, ".")
	best, found := Key{}, false
	bestLen, bestWild := -1, 0
	for _, k := range Keys {
		ks := strings.Split(k.Path, ".")
		if len(ks) > len(segs) || len(ks) < bestLen {
			continue
		}
		match := true
		for i, s := range ks {
			if s != "*" && s != segs[i] {
				match = false
				break
			}
		}
		// At equal length, the entry with fewer wildcards wins.
		if w := strings.Count(k.Path, "*"); match && (len(ks) > bestLen || w < bestWild) {
			best, found, bestLen, bestWild = k, true, len(ks), w
		}
	}
	return best, found
}

// refuseByName walks the document for the keys Keys refuses (and not by
// the reader's own check) and for the no-effect keys, which it drops with
// a warning. Only schema paths are looked up; free-form blocks (env, args)
// are not walked.
func (n *v2Normalizer) refuseByName() error {
	return n.walkKeys(n.doc, "", "")
}

func (n *v2Normalizer) walkKeys(m *yaml.Node, schemaPath, field string) error {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		sp, f := yamltree.JoinField(schemaPath, k.Value), yamltree.JoinField(field, k.Value)
		key, ok := KeyFor(sp)
		if !ok || key.Path == "" {
			continue
		}
		switch {
		case key.Plan == Refused && !key.Own:
			return &Error{Kind: Unsupported, Err: yamltree.Error{File: n.path, Line: k.Line, Field: f, Msg: key.Why + " is " + NotSupported}}
		case key.Plan == NoEffect:
			loc := n.path // a key --set added has no line
			if k.Line > 0 {
				loc = fmt.Sprintf("%s:%d", n.path, k.Line)
			}
			n.warnings = append(n.warnings, fmt.Sprintf("%s: %s: dropped, it changes nothing slurmbench runs: %s", loc, f, key.Why))
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			i -= 2
			continue
		}
		switch {
		case sp == "roles":
			for j := 0; j+1 < len(v.Content); j += 2 {
				if err := n.walkKeys(v.Content[j+1], "roles.*", "roles."+v.Content[j].Value); err != nil {
					return err
				}
			}
		case sp == "services" && v.Kind == yaml.SequenceNode:
			for j, s := range v.Content {
				label := fmt.Sprintf("services[%d]", j)
				if name := yamltree.Get(s, "name"); name != nil {
					label = "services[" + name.Value + "]"
				}
				if err := n.walkKeys(s, "services[]", label); err != nil {
					return err
				}
			}
		case isSchemaBlock(sp):
			if err := n.walkKeys(v, sp, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// isSchemaBlock reports a mapping whose keys are schema keys (not a
// free-form env, args or options block): some entry lies below it.
func isSchemaBlock(p string) bool {
	prefix := p + "."
	for _, k := range Keys {
		if strings.HasPrefix(k.Path, prefix) || wildcardBelow(k.Path, p) {
			return true
		}
	}
	return false
}

// wildcardBelow reports entry path e (with *) lying below p.
func wildcardBelow(e, p string) bool {
	es, ps := strings.Split(e, "."), strings.Split(p, ".")
	if len(es) <= len(ps) {
		return false
	}
	for i, s := range ps {
		if es[i] != "*" && es[i] != s {
			return false
		}
	}
	return true
}

// DecidedByName reports a --set path (schema 2, dotted into segments) that
// names a key Keys drops or refuses: the edit is taken, and the reader
// then drops or refuses the key by name, with why, as if the file set it.
func DecidedByName(path []string) bool {
	p := strings.Join(path, ".")
	if len(path) > 2 && path[0] == "roles" {
		p = "roles.*." + strings.Join(path[2:], ".")
	}
	k, ok := KeyFor(p)
	return ok && k.Plan != Planned && !k.Own
}
