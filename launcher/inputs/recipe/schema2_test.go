package recipe

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// v2Base is a small valid schema-2 disaggregated recipe; cases append to it.
const v2Base = `schema: 2
name: test-v2
model:
  path: dsr1
  container: lmsysorg/sglang:v0.5.12
  precision: fp4
resources:
  gpu_type: b200
  gpus_per_node: 8
benchmark:
  type: sa-bench
  isl: 1024
  osl: 1024
  concurrencies: "16x32"
`

// v2Head is v2Base without its benchmark block.
var v2Head = v2Base[:strings.Index(v2Base, "benchmark:")]

const v2RolesText = `engine: sglang
roles:
  prefill:
    nodes: 1
    workers: 1
  decode:
    nodes: 1
    workers: 1
`

func intp(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestSchema2Mapping: each schema-2 rule lands in the internal (v1) field
// srt-slurm 2.x normalizes it into.
func TestSchema2Mapping(t *testing.T) {
	cases := []struct {
		name  string
		text  string
		check func(r *Recipe) []any // got, want pairs
	}{
		{"roles nodes workers gpus", v2Base + `engine: sglang
roles:
  prefill: {nodes: 2, workers: 4, gpus: 4}
  decode: {nodes: 1, workers: 2, gpus: 4}
`, func(r *Recipe) []any {
			res := r.Resources
			return []any{intp(res.PrefillNodes), 2, intp(res.PrefillWorkers), 4, intp(res.GPUsPerPrefill), 4,
				intp(res.DecodeNodes), 1, intp(res.DecodeWorkers), 2, intp(res.GPUsPerDecode), 4, r.Backend.Type, "sglang", r.SchemaVersion, 2}
		}},
		{"decode colocate is the 0 sentinel", v2Base + `engine: sglang
roles:
  prefill: {nodes: 1, workers: 1, gpus: 4}
  decode: {nodes: colocate, workers: 1, gpus: 4}
`, func(r *Recipe) []any { return []any{intp(r.Resources.DecodeNodes), 0} }},
		{"agg role", v2Base + `engine: vllm
roles:
  agg:
    nodes: 1
    workers: 2
    env: {A: "1"}
    args: {tensor-parallel-size: 4}
`, func(r *Recipe) []any {
			return []any{intp(r.Resources.AggNodes), 1, intp(r.Resources.AggWorkers), 2, r.Backend.AggregatedEnv.Strings()["A"], "1",
				r.Backend.VLLMConfig.Aggregated["tensor-parallel-size"].String(), "4"}
		}},
		{"env args kv_events per role", v2Base + `engine: sglang
roles:
  prefill:
    nodes: 1
    workers: 1
    env: {P: x}
    args: {max_batch_size: 8}
    kv_events: true
  decode:
    nodes: 1
    workers: 1
    env: {D: y}
    args: {max_batch_size: 16}
`, func(r *Recipe) []any {
			b := r.Backend
			return []any{b.PrefillEnv.Strings()["P"], "x", b.DecodeEnv.Strings()["D"], "y",
				b.SGLangConfig.Prefill["max_batch_size"].String(), "8", b.SGLangConfig.Decode["max_batch_size"].String(), "16",
				b.KVEventsConfig != nil && mapGet(b.KVEventsConfig.Node, "prefill") != nil, true}
		}},
		{"engine mapping knobs", v2Base + `engine:
  type: vllm
  connector: null
  dp_launch_mode: per_gpu
  numa_memory_bind: true
roles:
  agg: {nodes: 1, workers: 1}
`, func(r *Recipe) []any {
			b := r.Backend
			return []any{b.Type, "vllm", b.Connector == nil, true, b.DPLaunchMode, "per_gpu", *b.NUMABind, true}
		}},
		{"trtllm knobs", v2Base + `engine: {type: trtllm, publish_metrics: false, sequential_node_start: 0}
roles:
  agg: {nodes: 1, workers: 1}
`, func(r *Recipe) []any { return []any{*r.Backend.PublishMetrics, false} }},
		{"engine served_model_name", v2Base + "engine: {type: trtllm, served_model_name: deepseek-ai/deepseek-r1}\nroles:\n  agg: {nodes: 1, workers: 1}\n",
			func(r *Recipe) []any { return []any{r.Backend.ServedModelName, "deepseek-ai/deepseek-r1"} }},
		{"role engine on every role", v2Base + `roles:
  prefill: {nodes: 1, workers: 1, engine: vllm}
  decode: {nodes: 1, workers: 1, engine: vllm}
`, func(r *Recipe) []any { return []any{r.Backend.Type, "vllm"} }},
		{"benchmark placement dedicated", v2Head + v2RolesText + "benchmark: {type: sa-bench, placement: {node: dedicated}}\n",
			func(r *Recipe) []any {
				return []any{r.Benchmark.ClientDedicatedNode, true, r.Benchmark.ClientPlacement, ""}
			}},
		{"sglang-router is v1's sglang router", v2Base + v2RolesText + `frontend: {type: sglang-router}
`, func(r *Recipe) []any { return []any{r.Frontend.Type, "sglang"} }},
		{"frontend and benchmark placement", v2Head + v2RolesText + `frontend:
  placement: {node: first_decode}
benchmark:
  type: sa-bench
  placement: {node: last_decode}
`, func(r *Recipe) []any {
			return []any{r.Frontend.OrchestratorPlacement, "first_decode", r.Benchmark.ClientPlacement, "last_decode", r.Frontend.Placement.Node, "first_decode"}
		}},
		{"etcd nats services", v2Base + v2RolesText + `services:
  - {name: etcd, type: etcd, placement: {node: dedicated}}
  - {name: nats, type: nats, placement: {node: dedicated}, options: {max_payload_mb: 32}}
`, func(r *Recipe) []any {
			return []any{r.Infra.EtcdNATSDedicatedNode, true, intp(r.Infra.NATSMaxPayloadMB), 32, len(r.Services), 2, r.Services[1].EffectiveStart(), "infra"}
		}},
		{"mooncake-master service", v2Base + v2RolesText + `services:
  - name: mc
    type: mooncake-master
    args: ["--eviction_ratio=0.10"]
    options: {store_config: {protocol: rdma}}
`, func(r *Recipe) []any {
			m := r.Backend.MooncakeKV
			return []any{strings.Join(m.MasterExtraArgs, " "), "--eviction_ratio=0.10", mapGet(m.StoreConfig.Node, "protocol").Value, "rdma"}
		}},
		{"generic service with log readiness", v2Base + v2RolesText + `services:
  - name: umbp
    type: generic
    placement: {node: prefill}
    start: before_workers
    critical: true
    command: [/bin/server, "unix:///logs/umbp.sock"]
    env: {X: "1"}
    readiness: {log: {pattern: "listening on"}, timeout_seconds: 600}
`, func(r *Recipe) []any {
			s := r.Services[0]
			return []any{s.Name, "umbp", s.EffectiveStart(), "before_workers", s.EffectivePlacement(), "prefill", s.EffectiveCritical(), true,
				strings.Join(s.Command, " "), "/bin/server unix:///logs/umbp.sock", s.Readiness.Log.Pattern, "listening on", intp(s.Readiness.TimeoutSeconds), 600}
		}},
		{"dynamo.source pypi", v2Base + v2RolesText + `dynamo: {source: {pypi: "0.8.0"}}
`, func(r *Recipe) []any { return []any{r.Dynamo.Version, "0.8.0"} }},
		{"dynamo.source wheel", v2Base + v2RolesText + `dynamo: {source: {wheel: "1.0.0.dev1"}}
`, func(r *Recipe) []any { return []any{r.Dynamo.Wheel, "1.0.0.dev1"} }},
		{"dynamo.source git rev", v2Base + v2RolesText + `dynamo:
  source: {git: https://github.com/someone/dynamo.git, rev: 39d2a68abc}
`, func(r *Recipe) []any {
			return []any{r.Dynamo.Hash, "39d2a68abc", r.Dynamo.Source.Git, "https://github.com/someone/dynamo.git"}
		}},
		{"collect_interval_ms is default_frequency", v2Base + v2RolesText + `telemetry:
  enabled: true
  collect_interval_ms: 500
  dcgm_exporter: {container_image: "nvcr.io#nvidia/k8s/dcgm-exporter:3", port: 9401, command: "--port {port}"}
  cpu_power_exporter: {port: 9405}
`, func(r *Recipe) []any {
			s, _ := r.Telemetry.Settings()
			return []any{s.FrequencySeconds, 0.5, intp(r.Telemetry.CPUPowerExporter.Port), 9405, s.ExporterCommand, "--port {port}"}
		}},
		{"telemetry without an exporter takes the cluster's", v2Base + v2RolesText + "telemetry: {enabled: true}\n",
			func(r *Recipe) []any { return []any{r.Telemetry.Enabled, true, r.Telemetry.DCGMExporter == nil, true} }},
		{"anchors and merge keys", v2Base + `engine: sglang
roles:
  prefill:
    nodes: 1
    workers: 1
    env: &common {A: "1", B: "2"}
  decode:
    nodes: 1
    workers: 1
    env:
      <<: *common
      B: "3"
`, func(r *Recipe) []any {
			return []any{r.Backend.DecodeEnv.Strings()["A"], "1", r.Backend.DecodeEnv.Strings()["B"], "3"}
		}},
		{"post_eval host_setup observability", v2Base + v2RolesText + `post_eval:
  command: [bash, /infmax-workspace/benchmarks/multi_node/srt_eval.sh]
  passthrough_env: [EVAL_TASKS]
host_setup:
  commands: []
  nodes: workers
observability: {tachometer: {enabled: false}}
`, func(r *Recipe) []any {
			return []any{strings.Join(r.PostEval.Command, " "), "bash /infmax-workspace/benchmarks/multi_node/srt_eval.sh",
				r.PostEval.PassthroughEnv[0], "EVAL_TASKS", r.HostSetup.Nodes, "workers", *r.Observability.Tachometer.Enabled, false}
		}},
		{"custom benchmark", v2Head + v2RolesText + `benchmark:
  type: custom
  command: bash /infmax-workspace/benchmarks/multi_node/srt_fixed_sequence.sh
  env: {ISL: "8192"}
`, func(r *Recipe) []any {
			return []any{r.Benchmark.Type, "custom", r.Benchmark.Env.Strings()["ISL"], "8192"}
		}},
		{"v1 spelling still loads, with a warning", v2Base + v2RolesText + `frontend: {orchestrator_placement: first_decode}
`, func(r *Recipe) []any {
			return []any{r.Frontend.OrchestratorPlacement, "first_decode", len(r.Warnings) == 1 && strings.Contains(r.Warnings[0], "frontend.placement.node"), true}
		}},
		{"v1 backend block under schema 2 names the engine for roles", v2Base + "backend: {type: vllm}\nroles:\n  agg: {nodes: 1, workers: 1, args: {tp: 4}}\n",
			func(r *Recipe) []any {
				return []any{r.Backend.Type, "vllm", r.Backend.VLLMConfig.Aggregated["tp"].String(), "4"}
			}},
		{"schema absent is v1", base, func(r *Recipe) []any { return []any{r.SchemaVersion, 1} }},
		{"schema 1 is v1", "schema: 1\n" + base, func(r *Recipe) []any { return []any{r.SchemaVersion, 1} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := parse(t, c.text)
			if err != nil {
				t.Fatal(err)
			}
			pairs := c.check(r)
			for i := 0; i+1 < len(pairs); i += 2 {
				if !reflect.DeepEqual(pairs[i], pairs[i+1]) {
					t.Errorf("check %d: got %#v, want %#v", i/2, pairs[i], pairs[i+1])
				}
			}
		})
	}
}

// TestSchema2MatchesV1: a v1 recipe and its schema-2 spelling fill the
// same internal fields (the planner reads only those).
func TestSchema2MatchesV1(t *testing.T) {
	v1 := base + `  env: {E: "1"}
frontend: {type: sglang}
backend:
  type: sglang
  prefill_environment: {P: "1"}
  sglang_config:
    prefill: {tp-size: 4, disable-radix-cache: true}
    decode: {tp-size: 8}
infra: {etcd_nats_dedicated_node: true, nats_max_payload_mb: 24}
dynamo: {version: "0.8.0"}
`
	v1 = strings.Replace(v1, "backend:\n  type: sglang\nbenchmark:", "benchmark:", 1)
	v2 := strings.Replace(v2Base, "test-v2", "test-1p1d", 1) + `  env: {E: "1"}
frontend: {type: sglang-router}
engine: sglang
roles:
  prefill: {nodes: 1, workers: 1, env: {P: "1"}, args: {tp-size: 4, disable-radix-cache: true}}
  decode: {nodes: 1, workers: 1, args: {tp-size: 8}}
services:
  - {name: etcd, type: etcd, placement: {node: dedicated}}
  - {name: nats, type: nats, placement: {node: dedicated}, options: {max_payload_mb: 24}}
dynamo: {source: {pypi: "0.8.0"}}
`
	r1, err := parse(t, v1)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := parse(t, v2)
	if err != nil {
		t.Fatal(err)
	}
	summary := func(r *Recipe) []any {
		return []any{r.Name, r.Resources, r.Backend.Type, r.Backend.PrefillEnv.Strings(), Flags(r.Backend.SGLangConfig.Prefill), Flags(r.Backend.SGLangConfig.Decode),
			r.Frontend.Type, r.Infra, intp(r.Infra.NATSMaxPayloadMB), r.Dynamo.Version, r.Benchmark.Env.Strings()}
	}
	if a, b := summary(r1), summary(r2); !reflect.DeepEqual(a, b) {
		t.Errorf("v1 and v2 differ:\nv1 %#v\nv2 %#v", a, b)
	}
}

// TestSchema2BadInput: each malformed schema-2 recipe is refused naming the
// field (and line) the user wrote.
func TestSchema2BadInput(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string // substrings of the error
		kind       any      // error type expected, or nil for *Error
	}{
		{"schema 3", strings.Replace(v2Base, "schema: 2", "schema: 3", 1) + v2RolesText, []string{"r.yaml:1: schema: \"3\"", "supported: 1", "and 2"}, &SchemaError{}},
		{"schema as a string", strings.Replace(v2Base, "schema: 2", `schema: "2"`, 1) + v2RolesText, []string{"schema", "supported"}, &SchemaError{}},
		{"roles with resources.prefill_workers", strings.Replace(v2Base, "gpus_per_node: 8", "gpus_per_node: 8\n  prefill_workers: 2", 1) + v2RolesText,
			[]string{"r.yaml:10: resources.prefill_workers: cannot be combined with roles.prefill.workers (line 20)"}, nil},
		{"roles with backend env", v2Base + v2RolesText + "backend:\n  prefill_environment: {A: b}\n",
			[]string{"backend.prefill_environment: cannot be combined with roles:"}, nil},
		{"unknown role key", v2Base + "engine: sglang\nroles:\n  prefill: {nodez: 1}\n", []string{"r.yaml:17: roles.prefill.nodez: unknown key \"nodez\" (in a role)"}, nil},
		{"unknown role", v2Base + "engine: sglang\nroles:\n  prefil: {nodes: 1}\n", []string{"r.yaml:17: roles.prefil: unknown key \"prefil\" (in roles)"}, nil},
		{"unknown engine knob", v2Base + "engine: {type: sglang, turbo: true}\nroles:\n  agg: {nodes: 1, workers: 1}\n", []string{"engine.turbo: unknown key"}, nil},
		{"unknown top-level key", v2Base + v2RolesText + "servicez: []\n", []string{"servicez: unknown key"}, nil},
		{"v2 key under schema 1", base + "services: []\n", []string{"services: unknown key", "no `schema: 2`"}, nil},
		{"v2 vocabulary without schema: 2", base + "roles: {}\n", []string{"roles: unknown key \"roles\" (in top level); it is srt-slurm 2.x's layout"}, nil},
		{"v2 nested key under schema 1", base + "  placement: {node: head}\n", []string{"benchmark.placement: unknown key", "no `schema: 2`"}, nil},
		{"decode nodes 0", v2Base + "engine: sglang\nroles:\n  prefill: {nodes: 1, workers: 1}\n  decode: {nodes: 0, workers: 1}\n", []string{"roles.decode.nodes: 0 is not accepted; write nodes: colocate"}, nil},
		{"prefill colocate", v2Base + "engine: sglang\nroles:\n  prefill: {nodes: colocate, workers: 1}\n", []string{"roles.prefill.nodes: only the decode role can colocate"}, nil},
		{"colocate without gpus", v2Base + "engine: sglang\nroles:\n  prefill: {nodes: 1, workers: 1, gpus: 4}\n  decode: {nodes: colocate, workers: 1}\n", []string{"colocate requires an explicit gpus", "missing on decode"}, nil},
		{"roles without engine", v2Base + "roles:\n  agg: {nodes: 1, workers: 1}\n", []string{"engine: required"}, nil},
		{"role engines disagree", v2Base + "roles:\n  prefill: {nodes: 1, workers: 1, engine: vllm}\n  decode: {nodes: 1, workers: 1, engine: sglang}\n", []string{"roles.decode.engine", "every role must use the same engine"}, nil},
		{"dynamo.source two kinds", v2Base + v2RolesText + "dynamo: {source: {pypi: '1', wheel: '2'}}\n", []string{"dynamo.source: needs exactly one of git (with rev), pypi or wheel; got pypi, wheel"}, nil},
		{"dynamo.source empty", v2Base + v2RolesText + "dynamo: {source: {}}\n", []string{"got none"}, nil},
		{"dynamo.source git without rev", v2Base + v2RolesText + "dynamo: {source: {git: https://x/y.git}}\n", []string{"dynamo.source.git: requires rev"}, nil},
		{"dynamo.source beside dynamo.version", v2Base + v2RolesText + "dynamo: {version: '1', source: {pypi: '1'}}\n", []string{"dynamo.version: cannot be combined with dynamo.source"}, nil},
		{"placement beside v1 placement", v2Base + v2RolesText + "frontend: {orchestrator_placement: head, placement: {node: head}}\n", []string{"frontend.orchestrator_placement: cannot be combined with frontend.placement.node"}, nil},
		{"direct sglang over prefill/decode", v2Base + v2RolesText + "frontend: {type: sglang, enable_multiple_frontends: false}\n", []string{"r.yaml:23: frontend.type", "not a prefill/decode layout"}, &SrtctlRefusalError{}},
		{"direct sglang with multiple frontends", v2Base + "engine: sglang\nroles:\n  agg: {nodes: 1, workers: 1}\nfrontend: {type: sglang}\n", []string{"r.yaml:18: frontend.type", "set frontend.enable_multiple_frontends: false"}, &SrtctlRefusalError{}},
		{"direct sglang with two workers", v2Base + "engine: sglang\nroles:\n  agg: {nodes: 2, workers: 2}\nfrontend: {type: sglang, enable_multiple_frontends: false}\n", []string{"r.yaml:17: roles.agg.workers", "exactly one aggregated worker, got 2"}, &SrtctlRefusalError{}},
		{"direct sglang on trtllm", v2Base + "engine: trtllm\nroles:\n  agg: {nodes: 1, workers: 1}\nfrontend: {type: sglang, enable_multiple_frontends: false}\n", []string{"r.yaml:15: engine", "requires engine sglang, got \"trtllm\""}, &SrtctlRefusalError{}},
		{"dedicated client beside another client placement", v2Head + v2RolesText + "benchmark: {type: sa-bench, client_placement: last_decode, placement: {node: dedicated}}\n", []string{"benchmark.client_placement: cannot be combined with benchmark.placement.node"}, nil},
		{"v1 dedicated client with another placement", base + "  client_dedicated_node: true\n  client_placement: last_decode\n", []string{"benchmark.client_dedicated_node: requires benchmark.client_placement: head"}, nil},
		{"fork-only TileRT knob", v2Base + "engine: {type: tilert, model_profile: glm5}\nroles:\n  agg: {nodes: 1, workers: 1}\n", []string{"engine.model_profile", "SemiAnalysisAI fork"}, &SrtctlRefusalError{}},
		{"wrong type is spelled as written", v2Base + "engine: sglang\nroles:\n  agg:\n    nodes: 1\n    workers: two\n", []string{"r.yaml:19: roles.agg.workers: wrong type"}, nil},
		{"validation is spelled as written", v2Base + "engine: sglang\nroles:\n  prefill: {nodes: 1, workers: 0}\n  decode: {nodes: 1, workers: 1}\n", []string{"r.yaml:17: roles.prefill.workers: must be a positive number"}, nil},
		{"duplicate service names", v2Base + v2RolesText + "services:\n  - {name: a, command: [x]}\n  - {name: a, command: [y]}\n", []string{"services[1].name", "also the name"}, nil},
		{"generic service without command", v2Base + v2RolesText + "services:\n  - {name: x}\n", []string{"r.yaml:24: services[x].command: required for type generic"}, nil},
		{"service start", v2Base + v2RolesText + "services:\n  - {name: x, command: [a], start: sometimes}\n", []string{"services[x].start: \"sometimes\" is not one of"}, nil},
		{"service readiness two probes", v2Base + v2RolesText + "services:\n  - {name: x, command: [a], readiness: {port: 80, log: {pattern: up}}}\n", []string{"services[x].readiness: needs exactly one probe", "tcp, log"}, nil},
		{"service readiness bad pattern", v2Base + v2RolesText + "services:\n  - {name: x, command: [a], readiness: {log: {pattern: \"(\"}}}\n", []string{"services[x].readiness.log.pattern"}, nil},
		{"generic service dedicated", v2Base + v2RolesText + "services:\n  - {name: x, command: [a], placement: {node: dedicated}}\n", []string{"services[x].placement.node: dedicated is only for etcd"}, nil},
		{"unknown service type", v2Base + v2RolesText + "services:\n  - {name: x, type: turbo}\n", []string{"services[x].type: \"turbo\" is not a service type"}, nil},
		{"nats option", v2Base + v2RolesText + "services:\n  - {name: nats, type: nats, options: {max_payload: 3}}\n", []string{"services[nats].options.max_payload: type nats does not understand"}, nil},
		{"external service is not run yet", v2Base + v2RolesText + "services:\n  - {name: etcd, type: etcd, external: http://e:2379}\n", []string{"services[etcd].external"}, &UnsupportedError{}},
		{"disabled etcd is not run yet", v2Base + v2RolesText + "services:\n  - {name: etcd, type: etcd, enabled: false}\n", []string{"services[etcd].enabled"}, &UnsupportedError{}},
		{"vLLM visible-devices mask is not run yet", v2Base + "engine: {type: vllm, set_visible_devices: true}\nroles:\n  agg: {nodes: 1, workers: 1}\n", []string{"engine.set_visible_devices"}, &UnsupportedError{}},
		{"publish_metrics is TRT-LLM's", v2Base + "engine: {type: vllm, publish_metrics: true}\nroles:\n  agg: {nodes: 1, workers: 1}\n", []string{"engine.publish_metrics: is a TRT-LLM engine knob"}, nil},
		{"per-worker service is not run yet", v2Base + v2RolesText + "services:\n  - {name: g, command: [a], placement: {node: prefill, per: worker}}\n", []string{"services[g].placement.per"}, &UnsupportedError{}},
		{"post_eval passthrough name", v2Base + v2RolesText + "post_eval: {passthrough_env: [\"NOT-A-NAME\"]}\n", []string{"post_eval.passthrough_env: \"NOT-A-NAME\""}, nil},
		{"post_eval empty command", v2Base + v2RolesText + "post_eval: {command: []}\n", []string{"post_eval.command: if set, must be non-empty"}, nil},
		{"host_setup nodes", v2Base + v2RolesText + "host_setup: {nodes: some}\n", []string{"host_setup.nodes: \"some\" is not all or workers"}, nil},
		{"cpu power exporter port", v2Base + v2RolesText + "telemetry: {cpu_power_exporter: {port: 70000}}\n", []string{"telemetry.cpu_power_exporter.port: 70000"}, nil},
		{"extra_args is not run yet", v2Base + "engine: trtllm\nroles:\n  agg: {nodes: 1, workers: 1, extra_args: [\"--tool_parser\", \"glm47\"]}\n", []string{"r.yaml:17: roles.agg.extra_args: raw trtllm-serve"}, &UnsupportedError{}},
		{"host_setup timeout", v2Base + v2RolesText + "host_setup: {commands: [\"sudo -n nvidia-smi -lgc 1980\"], timeout_seconds: 0}\n", []string{"host_setup.timeout_seconds: must be positive"}, nil},
		{"tachometer on is not run yet", v2Base + v2RolesText + "observability: {tachometer: {enabled: true}}\n", []string{"observability.tachometer.enabled"}, &UnsupportedError{}},
		{"frontend placement value", v2Base + v2RolesText + "frontend: {placement: {node: last_decode}}\n", []string{"frontend.placement.node: \"last_decode\" is not one of"}, nil},
		{"nginx keepalive not an nginx time", v2Base + v2RolesText + "frontend: {nginx_keepalive_timeout: \"10s; evil\"}\n", []string{"frontend.nginx_keepalive_timeout: \"10s; evil\" is not an nginx time"}, nil},
		{"collect_interval_ms beside default_frequency", v2Base + v2RolesText + "telemetry: {collect_interval_ms: 1000, default_frequency: 1.0}\n", []string{"telemetry.default_frequency: cannot be combined with collect_interval_ms"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parse(t, c.text)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			switch c.kind.(type) {
			case *SchemaError:
				var e *SchemaError
				if !errors.As(err, &e) {
					t.Errorf("%T, want *SchemaError", err)
				}
			case *UnsupportedError:
				var e *UnsupportedError
				if !errors.As(err, &e) {
					t.Errorf("%T, want *UnsupportedError", err)
				}
			case *SrtctlRefusalError:
				var e *SrtctlRefusalError
				if !errors.As(err, &e) {
					t.Errorf("%T, want *SrtctlRefusalError", err)
				}
			default:
				var e *Error
				if !errors.As(err, &e) {
					t.Errorf("%T, want *Error", err)
				}
			}
		})
	}
}

// TestSchema2Bundle: a *-variants.yaml bundle with the schema beside base:
// plans each selected variant as schema 2.
func TestSchema2Bundle(t *testing.T) {
	text := "schema: 2\nbase:\n" + indentV2(v2Base[len("schema: 2\n"):]+v2RolesText) + `zip_override_conc:
  benchmark:
    concurrencies: ["4", "8"]
  roles:
    decode:
      workers: [1, 2]
`
	r, err := ParseWith("/recipes/b.yaml", []byte(text), Options{Variant: "zip_override_conc[1]"})
	if err != nil {
		t.Fatal(err)
	}
	if r.SchemaVersion != 2 || intp(r.Resources.DecodeWorkers) != 2 || r.Benchmark.Concurrencies.Values[0] != 8 || len(r.Warnings) != 0 {
		t.Errorf("schema %d, decode workers %v, concurrencies %v, warnings %q", r.SchemaVersion, intp(r.Resources.DecodeWorkers), r.Benchmark.Concurrencies.Values, r.Warnings)
	}
	_, err = ParseWith("/recipes/b.yaml", []byte(strings.Replace(text, "schema: 2", "schema: 4", 1)), Options{Variant: "zip_override_conc[0]"})
	var se *SchemaError
	if !errors.As(err, &se) {
		t.Errorf("schema 4 bundle: %v", err)
	}
}

func indentV2(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}
