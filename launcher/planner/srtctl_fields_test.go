package planner

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestSrtctlFieldsRefused: values of srtctl's engine/topology fields that
// slurmbench cannot honour (or srtctl refuses too) are errors naming the
// field and the numbers, never silently planned.
func TestSrtctlFieldsRefused(t *testing.T) {
	mooncake := string(readTestdata(t, "recipes", "vllm-mooncake.yaml"))
	coloc := string(readTestdata(t, "recipes", "vllm-coloc.yaml"))
	sglang := string(readTestdata(t, "recipes", "1p1d.yaml"))
	gb300 := string(readTestdata(t, "recipes", "gb300.yaml"))
	cases := []struct {
		name, profile, base, old, new string
		want                          []string // substrings of the error
	}{
		{"vLLM TP over the worker's GPUs", "gb300.toml", mooncake, "      tensor-parallel-size: 4\n", "      tensor-parallel-size: 16\n",
			[]string{"backend.vllm_config.decode", "tensor-parallel-size 16", "16 GPUs", "has 4"}},
		{"vLLM DP×TP over the worker's GPUs", "gb300.toml", mooncake, "      data-parallel-size: 8\n", "      data-parallel-size: 4\n",
			[]string{"backend.vllm_config.prefill", "data-parallel-size 4", "= 4 GPUs", "has 8"}},
		{"per-GPU DP with TP", "b200.toml", coloc, "      data-parallel-size: 4\n      tensor-parallel-size: 1\n", "      data-parallel-size: 2\n      tensor-parallel-size: 2\n",
			[]string{"backend.vllm_config.decode", "per_gpu", "tensor-parallel-size 2"}},
		{"SGLang TP over the worker's GPUs", "gb300.toml", gb300, "      tensor-parallel-size: 8\n", "      tensor-parallel-size: 4\n",
			[]string{"backend.sglang_config.decode", "tensor-parallel-size 4", "= 4 GPUs", "has 8"}},
		{"SGLang DP without DP attention", "b200.toml", sglang, "      enable-dp-attention: false\n", "      enable-dp-attention: false\n      data-parallel-size: 2\n",
			[]string{"backend.sglang_config.", "data-parallel-size 2", "= 16 GPUs", "has 8"}},
		{"dp_launch_mode value", "b200.toml", coloc, "dp_launch_mode: per_gpu", "dp_launch_mode: per_rank",
			[]string{"backend.dp_launch_mode", "per_rank"}},
		{"colocation on SGLang", "b200.toml", sglang, "backend:\n", "backend:\n  allow_prefill_decode_colocation: true\n",
			[]string{"backend.allow_prefill_decode_colocation", "vllm backend field"}},
		{"Mooncake without a Mooncake connector", "gb300.toml", mooncake, "MooncakeStoreConnector", "NixlConnector",
			[]string{"backend.mooncake_kv_store", "neither the prefill nor the decode"}},
		{"Mooncake store config on SGLang", "b200.toml", sglang, "backend:\n", "backend:\n  mooncake_kv_store: {store_config: {protocol: rdma}}\n",
			[]string{"backend.mooncake_kv_store.store_config", "only the vllm backend"}},
		{"KV events value", "b200.toml", coloc, "kv_events_config: true", "kv_events_config: always",
			[]string{"backend.kv_events_config", "always"}},
		{"KV events mode", "b200.toml", coloc, "kv_events_config: true", "kv_events_config: {prefil: true}",
			[]string{"backend.kv_events_config", "prefil"}},
		{"placement value", "gb300.toml", mooncake, "orchestrator_placement: first_decode", "orchestrator_placement: middle",
			[]string{"frontend.orchestrator_placement", "middle"}},
		{"placement behind nginx", "gb300.toml", mooncake, "enable_multiple_frontends: false", "enable_multiple_frontends: true",
			[]string{"frontend.orchestrator_placement", "nginx serves on the head node"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.base, tc.old) {
				t.Fatalf("base recipe has no %q", tc.old)
			}
			_, err := buildTextErr(t, tc.profile, strings.ReplaceAll(tc.base, tc.old, tc.new))
			if err == nil {
				t.Fatal("planned")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestMooncakeStore: the master runs on the infra node in the recipe's
// container, the store config is srtctl's JSON (recipe order, the
// master's address last), and SGLang workers get the env without the
// config path.
func TestMooncakeStore(t *testing.T) {
	pl := mustBuild(t, "gb300.toml", "vllm-mooncake.yaml", nil)
	m := procNamed(t, pl, "mooncake_master")
	if m.Role != plan.RoleInfra || m.Nodes[0] != 0 || m.Image != "nginx:1.27.4" || m.Ready == nil || m.Ready.Port != 8700 || len(m.Env) != 0 {
		t.Errorf("master: %+v", m)
	}
	conf := m.Files[filepath.Join(pl.Layout.Logs, "mooncake_store_config.json")]
	want := "{\n  \"metadata_server\": \"P2PHANDSHAKE\",\n  \"global_segment_size\": \"100GB\",\n  \"protocol\": \"rdma\",\n  \"enable_offload\": true,\n  \"master_server_address\": \"{ip:0}:8700\"\n}"
	if conf != want {
		t.Errorf("store config:\n%s\nwant:\n%s", conf, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(conf, "{ip:0}", "10.0.0.1")), &v); err != nil {
		t.Errorf("store config is not JSON: %v", err)
	}

	text := strings.NewReplacer("  type: sglang\n", "  type: sglang\n  mooncake_kv_store: {env: {MOONCAKE_LOCAL_HOSTNAME: 10.9.9.9}}\n",
		"      disable-radix-cache: true\n", "      disable-radix-cache: true\n      disaggregation-transfer-backend: mooncake\n").Replace(string(readTestdata(t, "recipes", "gb300.yaml")))
	sg := buildText(t, "gb300.toml", text)
	dec := procNamed(t, sg, "decode_w0_r1")
	if dec.Env["MOONCAKE_LOCAL_HOSTNAME"] != "10.9.9.9" || dec.Env["MOONCAKE_MASTER"] != "{ip:0}:8700" || dec.Env["MOONCAKE_CONFIG_PATH"] != "" {
		t.Errorf("SGLang worker env %v", dec.Env)
	}
	if p := procNamed(t, sg, "mooncake_master"); len(p.Files) != 0 || p.Image != "" {
		t.Errorf("SGLang master: files %v, image %q (the job's)", p.Files, p.Image)
	}
}

// TestKVEventsConfig: srtctl's --kv-events-config per engine and mode, as
// Python's json.dumps writes it, on the process's KV-events port.
func TestKVEventsConfig(t *testing.T) {
	text := strings.Replace(string(readTestdata(t, "recipes", "gb300.yaml")), "  type: sglang\n",
		"  type: sglang\n  kv_events_config: {decode: {topic: d, note: \"é\"}}\n", 1)
	pl := buildText(t, "gb300.toml", text)
	if got := argAfter(procNamed(t, pl, "prefill_w0").Argv, "--kv-events-config"); got != "" {
		t.Errorf("prefill publishes %s; only decode was asked", got)
	}
	// Ports count every node process: two prefill, then the decode leader.
	want := `{"publisher": "zmq", "topic": "d", "note": "\u00e9", "endpoint": "tcp://*:5202"}`
	dec := procNamed(t, pl, "decode_w0_r0")
	if got := argAfter(dec.Argv, "--kv-events-config"); got != want {
		t.Errorf("decode --kv-events-config %s, want %s", got, want)
	}
	if i, j := indexOf(dec.Argv, "--kv-events-config"), indexOf(dec.Argv, "--request-plane"); i < 0 || j != i+2 {
		t.Errorf("srtctl puts it right before --request-plane: %q", dec.Argv)
	}
	// true enables prefill and decode, never aggregated workers.
	for _, p := range buildText(t, "b200.toml", string(readTestdata(t, "recipes", "vllm-coloc.yaml"))).Processes {
		if (p.Role == plan.RolePrefill || p.Role == plan.RoleDecode) && argAfter(p.Argv, "--kv-events-config") == "" {
			t.Errorf("%s: no --kv-events-config", p.Name)
		}
	}
	agg := strings.Replace(string(readTestdata(t, "recipes", "agg.yaml")), "backend:\n", "backend:\n  kv_events_config: true\n", 1)
	for _, p := range buildText(t, "b200.toml", agg).Processes {
		if p.Role == plan.RoleAgg && argAfter(p.Argv, "--kv-events-config") != "" {
			t.Errorf("%s: aggregated worker publishes KV events under kv_events_config: true", p.Name)
		}
	}
}

// TestColocation: colocated prefill and decode pack one node (srtctl sizes
// the job by its GPUs); without the flag they keep separate nodes.
func TestColocation(t *testing.T) {
	text := string(readTestdata(t, "recipes", "vllm-coloc.yaml"))
	pl := buildText(t, "b200.toml", text)
	if pl.Nodes != 1 || procNamed(t, pl, "decode_w0_r0").Nodes[0] != 0 {
		t.Errorf("colocated: %d nodes", pl.Nodes)
	}
	apart := buildText(t, "b200.toml", strings.Replace(text, "  allow_prefill_decode_colocation: true\n", "", 1))
	if apart.Nodes != 2 || procNamed(t, apart, "decode_w0_r0").Nodes[0] != 1 {
		t.Errorf("not colocated: %d nodes, decode on %v", apart.Nodes, procNamed(t, apart, "decode_w0_r0").Nodes)
	}
	if pf, dc := pl.Registrations(); pf != 2 || dc != 4 {
		t.Errorf("registrations %d/%d: every per-GPU DP rank registers", pf, dc)
	}
}
