package migrate

import (
	"strings"
	"testing"
)

// TestMigrateRules builds one case per branch of srt-slurm's migrate.py
// rules (each named after the function it follows) and checks the
// migrated document exactly.
func TestMigrateRules(t *testing.T) {
	cases := []struct{ name, in, want string }{
		// _fold_roles
		{"roles: resources, env, extra_args and engine config per mode",
			"name: a\nresources:\n  agg_nodes: 1\n  agg_workers: 2\n  gpus_per_agg: 4\nbackend:\n  type: trtllm\n  aggregated_environment: {A: '1'}\n  aggregated_extra_args: [--x]\n  trtllm_config:\n    aggregated: {tp: 4}\n",
			"schema: 2\nname: a\nresources: {}\nengine: trtllm\nroles:\n  agg:\n    nodes: 1\n    workers: 2\n    gpus: 4\n    env: {A: '1'}\n    extra_args: [--x]\n    args: {tp: 4}\n"},
		{"roles: an engine config of another engine stays",
			"name: a\nbackend:\n  type: vllm\n  sglang_config:\n    prefill: {tp: 4}\n  vllm_config:\n    prefill: {tp: 2}\n",
			"schema: 2\nname: a\nengine:\n  type: vllm\n  sglang_config:\n    prefill: {tp: 4}\nroles:\n  prefill:\n    args: {tp: 2}\n"},
		{"roles: no backend type reads the config that is there",
			"name: a\nbackend:\n  vllm_config:\n    decode: {tp: 2}\n",
			"schema: 2\nname: a\nengine: vllm\nroles:\n  decode:\n    args: {tp: 2}\n"},
		{"roles: decode_nodes 0 is colocate",
			"name: a\nresources:\n  prefill_nodes: 1\n  decode_nodes: 0\n",
			"schema: 2\nname: a\nresources: {}\nroles:\n  prefill:\n    nodes: 1\n  decode:\n    nodes: colocate\n"},
		// _fold_placement
		{"placement: dedicated wins over a location",
			"name: a\nfrontend:\n  orchestrator_placement: first_decode\n  dedicated_node: true\n",
			"schema: 2\nname: a\nfrontend:\n  placement:\n    node: dedicated\n"},
		{"placement: dedicated false is the location, head by default",
			"name: a\nbenchmark:\n  type: sa-bench\n  client_dedicated_node: false\n",
			"schema: 2\nname: a\nbenchmark:\n  type: sa-bench\n  placement:\n    node: head\n"},
		{"placement: v1 sglang frontend is the sglang router",
			"name: a\nfrontend:\n  type: sglang\n",
			"schema: 2\nname: a\nfrontend:\n  type: sglang-router\n"},
		// _fold_infra_services
		{"infra: dedicated and payload under the dynamo frontend",
			"name: a\ninfra:\n  etcd_nats_dedicated_node: true\n  nats_max_payload_mb: 32\n",
			"schema: 2\nname: a\nservices:\n  - name: etcd\n    type: etcd\n    placement:\n      node: dedicated\n  - name: nats\n    type: nats\n    placement:\n      node: dedicated\n    options:\n      max_payload_mb: 32\n"},
		{"infra: dedicated false alone is dropped (the default)",
			"name: a\ninfra:\n  etcd_nats_dedicated_node: false\n",
			"schema: 2\nname: a\n"},
		{"infra: payload alone",
			"name: a\ninfra:\n  nats_max_payload_mb: 8\n",
			"schema: 2\nname: a\nservices:\n  - name: nats\n    type: nats\n    options:\n      max_payload_mb: 8\n"},
		{"infra: no discovery plane, payload dropped, dedicated kept",
			"name: a\nfrontend:\n  type: vllm\ninfra:\n  etcd_nats_dedicated_node: true\n  nats_max_payload_mb: 8\n",
			"schema: 2\nname: a\nfrontend:\n  type: vllm\ninfra:\n  etcd_nats_dedicated_node: true\n"},
		{"infra: no discovery plane, nothing left",
			"name: a\nfrontend:\n  type: sglang\ninfra:\n  etcd_nats_dedicated_node: false\n",
			"schema: 2\nname: a\nfrontend:\n  type: sglang-router\n"},
		{"infra: an override's false undoes base's true; null too",
			"base:\n  name: a\n  infra:\n    etcd_nats_dedicated_node: true\noverride_x:\n  infra:\n    etcd_nats_dedicated_node: false\noverride_y:\n  infra:\n",
			"schema: 2\nbase:\n  name: a\n  services:\n    - name: etcd\n      type: etcd\n      placement:\n        node: dedicated\n    - name: nats\n      type: nats\n      placement:\n        node: dedicated\noverride_x:\n  services:\n    - name: etcd\n      type: etcd\n      placement:\n        node: infra\n    - name: nats\n      type: nats\n      placement:\n        node: infra\noverride_y:\n  services:\n    - name: etcd\n      type: etcd\n      placement:\n        node: infra\n    - name: nats\n      type: nats\n      placement:\n        node: infra\n"},
		// _fold_dynamo_source
		{"dynamo: hash and patches, version dropped",
			"name: a\ndynamo:\n  install: true\n  version: 0.8.0\n  hash: abc\n  cargo_patches: [x]\n",
			"schema: 2\nname: a\ndynamo:\n  install: true\n  source:\n    rev: abc\n    patches: [x]\n"},
		{"dynamo: wheel, version dropped",
			"name: a\ndynamo:\n  wheel: 1.0.dev1\n  version: 0.8.0\n",
			"schema: 2\nname: a\ndynamo:\n  source:\n    wheel: 1.0.dev1\n"},
		{"dynamo: version is pypi",
			"name: a\ndynamo:\n  version: 0.9.0\n",
			"schema: 2\nname: a\ndynamo:\n  source:\n    pypi: 0.9.0\n"},
		{"dynamo: top_of_tree left as is",
			"name: a\ndynamo:\n  top_of_tree: true\n  version: 0.8.0\n",
			"schema: 2\nname: a\ndynamo:\n  top_of_tree: true\n  version: 0.8.0\n"},
		{"dynamo: nothing to fold",
			"name: a\ndynamo:\n  install: false\n",
			"schema: 2\nname: a\ndynamo:\n  install: false\n"},
		// _strip_unused_benchmark_fields
		{"benchmark: keys the type never reads are removed, planned ones kept",
			"name: a\nbenchmark:\n  type: custom\n  command: run.sh\n  isl: 8\n  custom_tokenizer: x.Y\n  dataset_name: random\n",
			"schema: 2\nname: a\nbenchmark:\n  type: custom\n  command: run.sh\n  isl: 8\n"},
		{"benchmark: a missing type is sa-bench",
			"name: a\nbenchmark:\n  isl: 8\n  custom_tokenizer: x.Y\n  tokenizer_mode: slow\n",
			"schema: 2\nname: a\nbenchmark:\n  isl: 8\n  custom_tokenizer: x.Y\n  tokenizer_mode: slow\n"},
		{"benchmark: an unknown type is left to the reader",
			"name: a\nbenchmark:\n  type: nonesuch\n  command: x\n",
			"schema: 2\nname: a\nbenchmark:\n  type: nonesuch\n  command: x\n"},
		// _fold_mooncake
		{"mooncake: without roles to carry its env it stays",
			"name: a\nbackend:\n  type: vllm\n  mooncake_kv_store:\n    env: {A: '1'}\n",
			"schema: 2\nname: a\nengine:\n  type: vllm\n  mooncake_kv_store:\n    env: {A: '1'}\n"},
		{"mooncake: container and args only",
			"name: a\nresources:\n  agg_nodes: 1\nbackend:\n  type: vllm\n  mooncake_kv_store:\n    container: mc\n    master_extra_args: [--v]\n",
			"schema: 2\nname: a\nresources: {}\nengine: vllm\nroles:\n  agg:\n    nodes: 1\nservices:\n  - name: mooncake-master\n    type: mooncake-master\n    container: mc\n    args: [--v]\n"},
		// _fold_engine
		{"engine: kv_events true covers agg for sglang only",
			"name: a\nresources:\n  agg_nodes: 1\nbackend:\n  type: vllm\n  kv_events_config: true\n",
			"schema: 2\nname: a\nresources: {}\nengine: vllm\nroles:\n  agg:\n    nodes: 1\n"},
		{"engine: kv_events for a mode without a role stays",
			"name: a\nresources:\n  prefill_nodes: 1\nbackend:\n  type: sglang\n  kv_events_config:\n    prefill: true\n    decode: true\n",
			"schema: 2\nname: a\nresources: {}\nengine:\n  type: sglang\n  kv_events_config:\n    prefill: true\n    decode: true\nroles:\n  prefill:\n    nodes: 1\n    kv_events: true\n"},
		{"engine: knobs without a type get the default type",
			"name: a\nbackend:\n  connector: nixl\n",
			"schema: 2\nname: a\nengine:\n  type: sglang\n  connector: nixl\n"},
		{"engine: a section's knobs carry base's type",
			"base:\n  name: a\n  backend:\n    type: vllm\noverride_x:\n  backend:\n    connector: lmcache\n",
			"schema: 2\nbase:\n  name: a\n  engine: vllm\noverride_x:\n  engine:\n    type: vllm\n    connector: lmcache\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Migrate("/r.yaml", []byte(tc.in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Text) != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s\nnotes: %s", res.Text, tc.want, strings.Join(res.Notes, "; "))
			}
		})
	}
}
