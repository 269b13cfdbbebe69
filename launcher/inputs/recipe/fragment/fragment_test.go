package fragment

import (
	"errors"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
)

func parse(t *testing.T, src string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatalf("parse: %v\n%s", err, src)
	}
	return Plain(&doc)
}

// dump renders n in block style, whatever style its nodes were written
// in; strings that read as numbers stay quoted.
func dump(t *testing.T, n *yaml.Node) string {
	t.Helper()
	var unstyle func(*yaml.Node) *yaml.Node
	unstyle = func(n *yaml.Node) *yaml.Node {
		c := *n
		c.Style, c.Line, c.Column = 0, 0, 0
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, x := range n.Content {
			c.Content[i] = unstyle(x)
		}
		return &c
	}
	b, err := yaml.Marshal(unstyle(n))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// canon re-renders YAML so expectations do not depend on quoting.
func canon(t *testing.T, src string) string { t.Helper(); return dump(t, parse(t, src)) }

func TestMerge(t *testing.T) {
	for _, tc := range []struct {
		name, shared, fragment, want string
	}{
		{"mappings merge, fragment keys first",
			"benchmark: {type: custom, command: run.sh, env: {TOKENIZER: /model}}\nextra: 1",
			"benchmark: {env: {A: b}}\nroles: {agg: {}}",
			"benchmark: {env: {A: b, TOKENIZER: /model}, type: custom, command: run.sh}\nroles: {agg: {}}\nextra: 1"},
		{"lists replace",
			"benchmark: {concurrencies: [1, 2, 3]}",
			"benchmark: {concurrencies: [8]}",
			"benchmark: {concurrencies: [8]}"},
		{"the fragment's scalar wins",
			"telemetry: {collect_interval_ms: 1000, required: true}",
			"telemetry: {collect_interval_ms: 250}",
			"telemetry: {collect_interval_ms: 250, required: true}"},
		{"a scalar replaces a mapping, and a mapping a scalar",
			"a: {x: 1}\nb: 2",
			"a: 3\nb: {y: 4}",
			"a: 3\nb: {y: 4}"},
		{"a null in the fragment stays a null",
			"benchmark: {env: {TOKENIZER: /model}}",
			"benchmark: {env: null}",
			"benchmark: {env: null}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared, frag := parse(t, tc.shared), parse(t, tc.fragment)
			before := dump(t, shared)
			got := dump(t, Merge(shared, frag))
			if want := canon(t, tc.want); got != want {
				t.Errorf("Merge:\n%s\nwant:\n%s", got, want)
			}
			if dump(t, shared) != before {
				t.Error("Merge changed the shared block")
			}
		})
	}
}

const sharedMulti = "benchmark:\n  type: custom\n  command: bash fixed.sh\n  env:\n    TOKENIZER: /model\n"

const telemetry = "telemetry:\n  enabled: true\n  collect_interval_ms: 1000\n  dcgm_exporter:\n    container_image: dcgm-exporter\n"

func TestCompose(t *testing.T) {
	multi := Lane{MultiNode: true}
	for _, tc := range []struct {
		name, fragment string
		power          bool
		want           string
	}{
		{"plain fragment over the shared block",
			"schema: 2\nroles: {prefill: {workers: 1}}\nbenchmark: {env: {EXTRA: x}}", false,
			"schema: 2\nroles: {prefill: {workers: 1}}\nbenchmark: {env: {EXTRA: x, TOKENIZER: /model}, type: custom, command: bash fixed.sh}"},
		{"a bundle gets the shared block under base only",
			"schema: 2\nbase: {name: b}\noverride_x: {roles: {decode: {workers: 2}}}", false,
			"schema: 2\nbase: {name: b, benchmark: {type: custom, command: bash fixed.sh, env: {TOKENIZER: /model}}}\noverride_x: {roles: {decode: {workers: 2}}}"},
		{"a power row gets the telemetry block with the cluster's port; the fragment's tunable wins",
			"telemetry: {collect_interval_ms: 250}", true,
			// merge_blocks order: the port block's keys lead the telemetry block's.
			"telemetry: {collect_interval_ms: 250, dcgm_exporter: {port: 9401, container_image: dcgm-exporter}, enabled: true}\nbenchmark: {type: custom, command: bash fixed.sh, env: {TOKENIZER: /model}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Blocks{Shared: parse(t, sharedMulti), SharedFile: "shared.yaml"}
			if tc.power {
				b.Telemetry, b.TelemetryFile, b.PowerPort = parse(t, telemetry), "telemetry.yaml", 9401
			}
			got, err := Compose("f.yaml", parse(t, tc.fragment), multi, b)
			if err != nil {
				t.Fatal(err)
			}
			if want := canon(t, tc.want); dump(t, got) != want {
				t.Errorf("Compose:\n%s\nwant:\n%s", dump(t, got), want)
			}
		})
	}
}

func TestLaneSharedBlock(t *testing.T) {
	for _, tc := range []struct {
		lane Lane
		want string
	}{
		{Lane{}, FixedSequenceSingle},
		{Lane{MultiNode: true}, FixedSequenceMulti},
		{Lane{Agentic: true}, AgenticSingle},
		{Lane{Agentic: true, MultiNode: true}, AgenticMulti},
	} {
		if got := tc.lane.SharedBlock(); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.lane, got, tc.want)
		}
	}
}

func TestBoundKeyRefused(t *testing.T) {
	for _, tc := range []struct {
		name, fragment string
		lane           Lane
		field          string // "" = accepted
		line           int
	}{
		{"model.path", "schema: 2\nmodel:\n  path: hf:x/y\n", Lane{MultiNode: true}, "model.path", 3},
		{"model.precision in a bundle's base", "base:\n  model:\n    precision: fp8\n", Lane{MultiNode: true}, "base.model.precision", 3},
		{"identity.container.image in an override", "base: {}\noverride_a:\n  identity:\n    container:\n      image: x\n", Lane{MultiNode: true}, "override_a.identity.container.image", 5},
		{"benchmark.concurrencies", "benchmark:\n  concurrencies: [1]\n", Lane{MultiNode: true}, "benchmark.concurrencies", 2},
		{"telemetry.enabled", "telemetry:\n  enabled: false\n", Lane{MultiNode: true}, "telemetry.enabled", 2},
		{"telemetry.dcgm_exporter.port", "telemetry:\n  dcgm_exporter:\n    port: 1\n", Lane{MultiNode: true}, "telemetry.dcgm_exporter.port", 3},
		{"fixed ISL", "benchmark:\n  env:\n    ISL: '1024'\n", Lane{MultiNode: true}, "benchmark.env.ISL", 3},
		{"agentic multi AIPERF cache dir", "benchmark:\n  env:\n    AIPERF_DATASET_MMAP_CACHE_DIR: /x\n", Lane{Agentic: true, MultiNode: true}, "benchmark.env.AIPERF_DATASET_MMAP_CACHE_DIR", 3},
		{"agentic single MODEL", "benchmark:\n  env:\n    MODEL: m\n", Lane{Agentic: true}, "benchmark.env.MODEL", 3},
		{"agentic multi MODEL is the client's, not bound", "benchmark:\n  env:\n    MODEL: m\n", Lane{Agentic: true, MultiNode: true}, "", 0},
		{"fixed lanes leave KV_OFFLOADING alone", "benchmark:\n  env:\n    KV_OFFLOADING: dram\n", Lane{MultiNode: true}, "", 0},
		{"single-node variant may name its CONC", "base: {}\noverride_c4:\n  benchmark:\n    env:\n      CONC: '4'\n", Lane{}, "", 0},
		{"single-node base may not", "base:\n  benchmark:\n    env:\n      CONC: '4'\n", Lane{}, "base.benchmark.env.CONC", 4},
		{"multi-node variant may not", "base: {}\noverride_c4:\n  benchmark:\n    env:\n      CONC: '4'\n", Lane{MultiNode: true}, "override_c4.benchmark.env.CONC", 5},
		{"a router version in a service env", "services:\n- name: r\n  env:\n    ROUTER_VERSION: '1'\n", Lane{MultiNode: true}, "services[0].env.ROUTER_VERSION", 4},
		{"a literal DRAM size", "roles:\n  agg:\n    args:\n      kv-transfer-config: '{\"kv_connector_extra_config\": {\"cpu_bytes_to_use\": 5}}'\n", Lane{Agentic: true, MultiNode: true}, "roles.agg.args.kv-transfer-config.kv_connector_extra_config.cpu_bytes_to_use", 4},
		{"a literal --l1-size-gb", "roles:\n  agg:\n    extra_args: [--l1-size-gb, '40']\n", Lane{Agentic: true, MultiNode: true}, "roles.agg.extra_args[1]", 3},
		{"a DRAM size by reference is fine", "roles:\n  agg:\n    extra_args: [--l1-size-gb, '@dram.per-gpu-gb']\n", Lane{Agentic: true, MultiNode: true}, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compose("frag.yaml", parse(t, tc.fragment), tc.lane, Blocks{Shared: parse(t, "{}")})
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var bk *BoundKeyError
			var dl *DRAMLiteralError
			var got Located
			switch {
			case errors.As(err, &bk):
				got = bk.Keys[0]
			case errors.As(err, &dl):
				got = dl.Keys[0]
			default:
				t.Fatalf("want a refusal of %s, got %v", tc.field, err)
			}
			if got.Field != tc.field || got.Line != tc.line {
				t.Errorf("refused %s at line %d, want %s at line %d", got.Field, got.Line, tc.field, tc.line)
			}
			if !strings.HasPrefix(err.Error(), "frag.yaml:") || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error does not name file and key: %v", err)
			}
		})
	}
}

func multiPoint() Input {
	return Input{
		Lane:    Lane{MultiNode: true},
		Point:   Point{Model: "org/M", Image: "nvcr.io#nvidia/img:1", Precision: "fp8", ISL: 1024, OSL: 128, Conc: []int{4, 16}},
		Cluster: Cluster{ID: "c", GPUsPerNode: 4},
	}
}

func TestBind(t *testing.T) {
	for _, tc := range []struct {
		name, variant string
		in            func() Input
		want          string
	}{
		{"multi-node fixed-sequence", "schema: 2\nname: n\nroles: {prefill: {}}\nbenchmark: {type: custom, env: {TOKENIZER: /model}}",
			multiPoint,
			"schema: 2\nname: n\nmodel: {path: hf:org/M, container: 'nvcr.io#nvidia/img:1', precision: fp8}\nroles: {prefill: {}}\nbenchmark: {type: custom, env: {TOKENIZER: /model, ISL: '1024', OSL: '128'}}"},
		{"identity blocks and telemetry take the point",
			"identity: {model: {revision: r}, container: {}}\ntelemetry: {enabled: true}",
			multiPoint,
			"model: {path: hf:org/M, container: 'nvcr.io#nvidia/img:1', precision: fp8}\nidentity: {model: {revision: r, repo: org/M}, container: {image: nvcr.io/nvidia/img:1}}\ntelemetry: {enabled: true}\nbenchmark: {env: {ISL: '1024', OSL: '128'}, concurrencies: [4, 16]}"},
		{"single-node fixed-sequence speculating (sglang)",
			"engine: sglang\nroles: {agg: {args: {speculative-algorithm: EAGLE}}}",
			func() Input {
				in := multiPoint()
				in.Lane, in.Point.Conc, in.Point.RandomRangeRatio = Lane{}, []int{8}, "0.8"
				return in
			},
			"model: {path: hf:org/M, container: 'nvcr.io#nvidia/img:1', precision: fp8}\nengine: sglang\nroles: {agg: {args: {speculative-algorithm: EAGLE}}}\nbenchmark: {env: {ISL: '1024', OSL: '128', MODEL: org/M, CONC: '8', RANDOM_RANGE_RATIO: '0.8', USE_CHAT_TEMPLATE: 'true'}}"},
		{"agentic multi-node DRAM point with client paths; HF_HOME keeps its cache",
			"benchmark: {env: {HF_HOME: /hf}}",
			func() Input {
				in := multiPoint()
				in.Lane = Lane{Agentic: true, MultiNode: true}
				in.Point.KVOffloading, in.Point.TotalCPUDRAMGB = "dram", 800
				in.Cluster.ClientEnv = []EnvVar{{Name: "RESULT_DIR", Value: "/logs/agentic"}, {Name: "HF_HUB_CACHE", Value: "/cache"}}
				return in
			},
			"model: {path: hf:org/M, container: 'nvcr.io#nvidia/img:1', precision: fp8}\nbenchmark: {env: {HF_HOME: /hf, KV_OFFLOADING: dram, TOTAL_CPU_DRAM_GB: '800', RESULT_DIR: /logs/agentic}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Bind("f.yaml", parse(t, tc.variant), tc.in())
			if err != nil {
				t.Fatal(err)
			}
			if want := canon(t, tc.want); dump(t, got) != want {
				t.Errorf("Bind:\n%s\nwant:\n%s", dump(t, got), want)
			}
		})
	}
}

func TestBindRefusesAMismatchedVariant(t *testing.T) {
	in := multiPoint()
	in.Lane, in.Point.Conc, in.Point.RandomRangeRatio = Lane{}, []int{8}, "0.8"
	_, err := Bind("f.yaml", parse(t, "benchmark:\n  env:\n    CONC: '4'\n"), in)
	var e *yamltree.Error
	if !errors.As(err, &e) || e.Field != "benchmark.env.CONC" || e.Line != 3 {
		t.Fatalf("want benchmark.env.CONC at line 3 refused, got %v", err)
	}
}

func TestResolve(t *testing.T) {
	budget := &Budget{TotalGB: 800, GPUs: 4}
	fabric := &Fabric{Values: map[string]string{
		"ucx-net-devices":    FabricList([]string{"mlx5_0:1", "mlx5_1:1"}),
		"mooncake-gid-index": "3",
	}}
	for _, tc := range []struct {
		name, doc string
		budget    *Budget
		want      string
		errField  string
		errText   string
	}{
		{"an integer outside env", "roles: {agg: {args: {cpu-offload-gb: '@dram.per-gpu-gb'}}}", budget,
			"roles: {agg: {args: {cpu-offload-gb: 200}}}", "", ""},
		{"a decimal string in env", "roles: {agg: {env: {SIZE: '@dram.total-bytes'}}}", budget,
			"roles: {agg: {env: {SIZE: '800000000000'}}}", "", ""},
		{"a decimal string as an argument list element", "roles: {agg: {extra_args: [--l1-size-gb, '@dram.per-gpu-gb']}}", budget,
			"roles: {agg: {extra_args: [--l1-size-gb, '200']}}", "", ""},
		{"a mapping in a list takes integers", "services: [{options: {global_segment_size: '@dram.per-gpu-bytes'}}]", budget,
			"services: [{options: {global_segment_size: 200000000000}}]", "", ""},
		{"inside a JSON string, written back compact", `roles: {agg: {args: {kv-transfer-config: '{"kv_connector": "X", "kv_connector_extra_config": {"cpu_bytes_to_use": "@dram.per-gpu-bytes", "n": 1.5}}'}}}`, budget,
			`roles: {agg: {args: {kv-transfer-config: '{"kv_connector":"X","kv_connector_extra_config":{"cpu_bytes_to_use":200000000000,"n":1.5}}'}}}`, "", ""},
		{"@fabric lists comma-joined, numbers as decimal strings", "roles: {prefill: {env: {UCX_NET_DEVICES: '@fabric.ucx-net-devices'}, args: {gid: '@fabric.mooncake-gid-index'}}}", nil,
			"roles: {prefill: {env: {UCX_NET_DEVICES: 'mlx5_0:1,mlx5_1:1'}, args: {gid: '3'}}}", "", ""},
		{"@dram on a point without a budget", "a:\n  b: '@dram.total-gb'\n", nil, "", "a.b", "without a DRAM budget"},
		{"an unknown @dram name", "a:\n  b: '@dram.total'\n", budget, "", "a.b", "not a whole '@dram.<name>'"},
		{"an embedded @dram reference", "a:\n  b: 'size=@dram.total-gb'\n", budget, "", "a.b", "not a whole '@dram.<name>'"},
		{"an unknown @fabric name", "s:\n- command: ['@fabric.ucx-net-device']\n", nil, "", "s[0].command[0]", "not a whole '@fabric.<name>'"},
		{"a @fabric field the cluster does not set", "x:\n  y: '@fabric.mori-rdma-tc'\n", nil, "", "x.y", "this cluster sets no srt-slurm.fabric.mori-rdma-tc"},
		{"a @fabric value on a cluster whose record was not read", "x:\n  y: '@fabric.ucx-net-devices'\n", nil, "", "x.y", "were not read"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := parse(t, tc.doc)
			f := fabric
			if strings.Contains(tc.name, "not read") {
				f = &Fabric{Unread: true}
			}
			err := Resolve("f.yaml", doc, tc.budget, f)
			if tc.errField != "" {
				var e *yamltree.Error
				if !errors.As(err, &e) || e.Field != tc.errField || e.Line == 0 || !strings.Contains(e.Msg, tc.errText) {
					t.Fatalf("want %s refused (%q) with a line, got %v", tc.errField, tc.errText, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := canon(t, tc.want); dump(t, doc) != want {
				t.Errorf("Resolve:\n%s\nwant:\n%s", dump(t, doc), want)
			}
		})
	}
}

func TestDRAMBudget(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       Input
		wantGPUs int64 // 0: no budget
		wantErr  bool
	}{
		{"no DRAM offloading", Input{Point: Point{KVOffloading: "none"}}, 0, false},
		{"single-node covers its GPUs", Input{Point: Point{KVOffloading: "dram", TotalCPUDRAMGB: 100, GPUCount: 8}}, 8, false},
		{"multi-node covers the prefill worker on a node", Input{Lane: Lane{MultiNode: true, Agentic: true},
			Point: Point{KVOffloading: "dram", TotalCPUDRAMGB: 100, PrefillTP: 8, PrefillPP: 1, PrefillPCP: 1}, Cluster: Cluster{GPUsPerNode: 4}}, 4, false},
		{"multi-node needs gpus-per-node", Input{Lane: Lane{MultiNode: true},
			Point: Point{KVOffloading: "dram", TotalCPUDRAMGB: 100, PrefillTP: 2, PrefillPP: 1, PrefillPCP: 1}}, 0, true},
		{"a DRAM point needs its budget", Input{Point: Point{KVOffloading: "dram", GPUCount: 8}}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.in.DRAMBudget()
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			switch {
			case tc.wantGPUs == 0 && b != nil:
				t.Errorf("budget %+v, want none", b)
			case tc.wantGPUs != 0 && (b == nil || b.GPUs != tc.wantGPUs):
				t.Errorf("budget %+v, want %d GPUs", b, tc.wantGPUs)
			}
		})
	}
}

func TestSpeculates(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want bool
	}{
		{"engine: vllm\nroles: {agg: {args: {speculative-config: '{\"method\": \"mtp\"}'}}}", true},
		{"engine: vllm\nroles: {agg: {args: {speculative-config: '{}'}}}", false},
		{"engine: {type: sglang}\nroles: {agg: {args: {speculative-algo: NEXTN}}}", true},
		{"engine: trtllm\nroles: {agg: {args: {speculative_config: {decoding_type: MTP}}}}", true},
		{"engine: trtllm\nroles: {agg: {args: {speculative_config: {}}}}", false},
		{"engine: sglang\nroles: {agg: {args: {tp-size: 8}}}", false},
	} {
		if got := Speculates(parse(t, tc.doc)); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.doc, got, tc.want)
		}
	}
}

func TestBindComponents(t *testing.T) {
	router := &Component{Name: "vllm-router", Version: "0.1.14"}
	for _, tc := range []struct {
		name, doc string
		router    *Component
		kv        *Component
		want      map[string]string // dotted path (services[0] as services.0) → value
		errField  string
		errText   string
	}{
		{"a setup script takes the master router version", "setup_script: vllm-router.sh", router, nil,
			map[string]string{"environment.ROUTER_VERSION": "0.1.14"}, "", ""},
		{"a service preamble takes it in the service's env", "services:\n- name: mc\n  preamble: bash /configs/vllm-mooncake.sh\n", nil, &Component{Name: "mooncake", Version: "0.3.11"},
			map[string]string{"services.0.env.KV_OFFLOAD_BACKEND_VERSION": "0.3.11"}, "", ""},
		{"an installer needs the point to declare its component", "setup_script: vllm-mooncake.sh", nil, &Component{Name: "lmcache", Version: "1"},
			nil, "setup_script", "must declare kv-offload-backend {name: mooncake"},
		{"a script that installs no master component is left alone", "setup_script: vllm-container-deps.sh", nil, nil,
			map[string]string{"environment": "<nil>"}, "", ""},
		{"a pinned router must be the master's", "frontend:\n  env:\n    SETUP_PIP_PACKAGES: vllm-router==0.1.13 fastapi\n", router, nil,
			nil, "frontend.env.SETUP_PIP_PACKAGES", "is not the master router 0.1.14"},
		{"a matching pin passes, its spelling normalized", "roles:\n  agg:\n    env:\n      SETUP_PIP_PACKAGES: Pillow vllm_router==0.1.14\n", router, nil,
			map[string]string{"roles.agg.env.SETUP_PIP_PACKAGES": "Pillow vllm_router==0.1.14"}, "", ""},
		{"a pin with no master router", "roles:\n  agg:\n    env:\n      SETUP_PIP_PACKAGES: vllm-router>=0.1\n", nil, nil,
			nil, "roles.agg.env.SETUP_PIP_PACKAGES", "must declare router {name: vllm-router"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := multiPoint()
			in.Point.Router, in.Point.KVOffloadBackend = tc.router, tc.kv
			got, err := Bind("f.yaml", parse(t, tc.doc), in)
			if tc.errField != "" {
				var e *yamltree.Error
				if !errors.As(err, &e) || e.Field != tc.errField || !strings.Contains(e.Msg, tc.errText) {
					t.Fatalf("want %s refused (%q), got %v", tc.errField, tc.errText, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for path, want := range tc.want {
				n := got
				for _, seg := range strings.Split(path, ".") {
					if n != nil && n.Kind == yaml.SequenceNode {
						n = n.Content[0]
						continue
					}
					n = yamltree.Get(n, seg)
				}
				v := "<nil>"
				if n != nil {
					v = n.Value
				}
				if v != want {
					t.Errorf("%s = %s, want %s", path, v, want)
				}
			}
		})
	}
}

// A power row's telemetry block without a port is the cluster-free recipe
// a fingerprint hashes: no exporter port is written.
func TestComposeTelemetryWithoutPort(t *testing.T) {
	b := Blocks{Shared: parse(t, sharedMulti), Telemetry: parse(t, telemetry)}
	got, err := Compose("f.yaml", parse(t, "roles: {}"), Lane{MultiNode: true}, b)
	if err != nil {
		t.Fatal(err)
	}
	exp := yamltree.Get(yamltree.Get(got, "telemetry"), "dcgm_exporter")
	if exp == nil || yamltree.Get(exp, "port") != nil || yamltree.Get(exp, "container_image") == nil {
		t.Errorf("telemetry.dcgm_exporter = %s, want the block without a port", dump(t, exp))
	}
}

func TestStage(t *testing.T) {
	for _, tc := range []struct {
		name       string
		c          Cluster
		path, cont string
	}{
		{"both staged", Cluster{Checkpoint: "/models/R1", Squash: "/sq/img.sqsh"}, "/models/R1", "/sq/img.sqsh"},
		{"only the checkpoint", Cluster{Checkpoint: "/models/R1"}, "/models/R1", "nvcr.io#nvidia/img:1"},
		{"nothing staged", Cluster{}, "hf:org/M", "nvcr.io#nvidia/img:1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := Bind("f.yaml", parse(t, "roles: {}"), multiPoint())
			if err != nil {
				t.Fatal(err)
			}
			Stage(doc, tc.c)
			m := yamltree.Get(doc, "model")
			if p, c := yamltree.Get(m, "path").Value, yamltree.Get(m, "container").Value; p != tc.path || c != tc.cont {
				t.Errorf("model.path %s, container %s; want %s, %s", p, c, tc.path, tc.cont)
			}
		})
	}
}
