package engine

import (
	"bytes"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// The worker of frontend.type: trtllm_serve is TensorRT-LLM's own OpenAI
// server, not dynamo.trtllm: srt-slurm
// src/srtctl/backends/trtllm.py@17c4ece9 (TRTLLMProtocol.build_worker_command,
// the branch for a frontend whose worker_launch is "direct") with the
// frontend's port rule from src/srtctl/frontends/trtllm_serve.py@3c0b8d46
// (worker_api_port: the aggregated worker binds the public port, a
// prefill or decode worker its own HTTP port behind the disaggregated
// orchestrator). The launch is the same MPI step as dynamo.trtllm's; only
// the program, its port and its environment differ.

// serveConfigDefaults sets what srtctl's load step puts into every engine
// section of a trtllm_serve recipe unless the recipe says otherwise
// (docs/frontends.md@356866e3 "Worker metrics default" and
// docs/engines.md@1fcda3a3 "Iteration statistics default"):
// return_perf_metrics: true, so the worker mounts /prometheus/metrics,
// and enable_iter_perf_stats: false. Keys the recipe sets, to any value,
// stay as written (Python's setdefault).
func serveConfigDefaults(cfg map[string]recipe.Value) {
	for _, d := range []struct {
		key string
		val bool
	}{{"return_perf_metrics", true}, {"enable_iter_perf_stats", false}} {
		if _, set := cfg[d.key]; !set {
			cfg[d.key] = recipe.NewValue(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(d.val)})
		}
	}
}

// dynamoWorkerEnv are the variables srtctl's worker stage sets only for a
// frontend whose workers are Dynamo processes, on the per-node and the MPI
// launch alike (src/srtctl/cli/mixins/worker_stage.py of the 2.x era, a
// stored version whose commit the index does not name; 033b6209, before
// it, set them for every worker: _worker_environment_defaults: discovery,
// DYN_SYSTEM_PORT, DYN_REQUEST_PLANE, DYN_SKIP_SGLANG_LOG_FORMATTING,
// DYN_LOG, DYN_EVENT_PLANE); a trtllm-serve worker gets HEAD_NODE_IP alone
// of those defaults.
var dynamoWorkerEnv = []string{"ETCD_ENDPOINTS", "NATS_SERVER", "DYN_SYSTEM_PORT", "DYN_REQUEST_PLANE",
	"DYN_SKIP_SGLANG_LOG_FORMATTING", "DYN_LOG", "DYN_EVENT_PLANE"}

// completeServe finishes a trtllm-serve worker: prefix is the NUMA wrapper
// and trtllm-llmapi-launch, config the engine YAML's path in the container.
//
//	trtllm-serve MODEL --host 0.0.0.0 --port PORT
//	  [--tensor_parallel_size N] [--moe_expert_parallel_size N] [--pipeline_parallel_size N]
//	  --config /logs/trtllm_config_<mode>.yaml [--served_model_name NAME] <role's extra_args>
//
// The parallel sizes are passed when the engine config holds them under
// exactly those keys with a value (srtctl's config.get(key) is not None),
// rendered as Python's str().
func (e *trtllmEngine) completeServe(w *Worker, proc *plan.Process, cfg map[string]recipe.Value, prefix []string, config string) error {
	b := e.b
	port := w.HTTPPort
	if w.Role == plan.RoleAgg {
		port = plan.PortPublicFrontend
	}
	argv := append(prefix, "trtllm-serve", b.WorkerModelArg(), "--host", "0.0.0.0", "--port", strconv.Itoa(port))
	for _, k := range []string{"tensor_parallel_size", "moe_expert_parallel_size", "pipeline_parallel_size"} {
		if v, ok := cfg[k]; ok && !v.IsNull() {
			argv = append(argv, "--"+k, v.String())
		}
	}
	argv = append(argv, "--config", config)
	r := b.Recipe()
	if n := r.Backend.ServedModelName; n != "" {
		argv = append(argv, "--served_model_name", n)
	}
	switch w.Role {
	case plan.RolePrefill:
		argv = append(argv, r.Backend.PrefillExtraArgs...)
	case plan.RoleDecode:
		argv = append(argv, r.Backend.DecodeExtraArgs...)
	default:
		argv = append(argv, r.Backend.AggregatedExtraArgs...)
	}
	proc.Argv = argv
	b.StartSequentially(proc.Name)

	// Dynamo's defaults go; what the recipe or the role sets stays.
	for _, k := range dynamoWorkerEnv {
		if _, set := b.RoleEnv(w.Role)[k]; set {
			continue
		}
		if _, set := r.Env[k]; set {
			continue
		}
		delete(proc.Env, k)
	}
	e.mpiLaunch(w, proc)
	// The leader serves OpenAI's API (and /health, /prometheus/metrics) on
	// its port and binds nothing else of srtctl's layout: no Dynamo system
	// port, no SGLang bootstrap port.
	proc.Ports = map[string]int{"http": port}
	return nil
}

// PyYAMLCopy is a deep copy of a recipe's YAML value as PyYAML's dump
// would write it back: block style, floats in PyYAML's form, strings a
// YAML 1.1 reader would take for something else quoted. The recipe's own
// nodes are left as they are.
func PyYAMLCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = PyYAMLCopy(k)
	}
	c.HeadComment, c.LineComment, c.FootComment, c.Anchor = "", "", "", ""
	blockStyle(&c)
	return &c
}

// EncodePyYAML writes doc as srtctl's yaml.safe_dump lays a file out:
// two-space indent, a mapping's list items at the key's indent; keys in
// the order doc holds them.
func EncodePyYAML(doc *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return buf.String(), nil
}
