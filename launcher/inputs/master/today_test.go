package master

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
)

const todayDoc = `sn-fixed:
  image: sglang:1
  model: org/sn
  model-prefix: dsr1
  runner: cluster:b200-nscale
  precision: fp4
  framework: sglang
  multinode: false
  srt-recipe-dir: dsr1/sglang/b200
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - {tp: 4, conc-start: 4, conc-end: 64, srt-recipe: 8k1k.yaml}
mn-disagg:
  image: dynamo:1
  model: org/mn
  model-prefix: dsr1
  runner: cluster:gb300-nv
  precision: fp8
  framework: dynamo-sglang
  multinode: true
  disagg: true
  kv-p2p-transfer: nixl
  srt-recipe-dir: dsr1/sglang/gb300/8k1k
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      require-power: true
      search-space:
      - conc-list: [8, 48]
        power: true
        srt-recipe: disagg.yaml:override_a
        eval-srt-recipe: eval.yaml
        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true, hardware: gb300}
        decode: {num-worker: 2, tp: 8, ep: 8, dp-attn: true, hardware: h100}
      - conc-list: [64]
        srt-recipe: disagg.yaml:zip_override_b[0]
        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true, additional-settings: [PREFILL_NODES=3]}
        decode: {num-worker: 2, tp: 8, ep: 8, dp-attn: true}
    - isl: 1024
      osl: 1024
      search-space:
      - conc-start: 16
        conc-end: 48
        srt-recipe: disagg.yaml:override_a
        prefill: {num-worker: 1, tp: 4, ep: 4, dp-attn: true}
        decode: {num-worker: 2, tp: 8, ep: 8, dp-attn: true}
mn-agentic:
  image: vllm:k3
  model: org/k3
  model-prefix: kimik3
  runner: cluster:h200-dgxc
  precision: fp4
  framework: vllm
  multinode: true
  disagg: false
  router: {name: vllm-router, version: 0.1.9}
  srt-recipe-dir: kimik3/vllm/h200/agentx
  scenarios:
    agentic-coding:
    - dram-utilization: 0.8
      search-space:
      - conc-list: [1, 8]
        num-nodes: 4
        power: true
        kv-offloading: dram
        kv-offload-backend: {name: lmcache, version: 0.3.1}
        srt-recipe: agg.yaml
        worker: {num-worker: 2, tp: 16, ep: 32, dp-attn: true}
sn-agentic:
  image: sglang:2
  model: org/v4
  model-prefix: dsv4
  runner: cluster:b200-nscale
  precision: fp4
  framework: sglang
  multinode: false
  srt-recipe-dir: dsv4/sglang/b200
  scenarios:
    agentic-coding:
    - search-space:
      - {tp: 8, kv-offloading: none, spec-decoding: mtp, conc-list: [2, 5, 3], srt-recipe: agentic.yaml}
`

func todayRunners() *RunnerFacts {
	return &RunnerFacts{Labels: map[string][]string{
		"cluster:gb300-nv": {"gb300-nv_0", "gb300-nv_1"}, "cluster:b300-x": {"b300-x_0"},
		"gb300": {"gb300-nv_1"}, "blackwell": {"gb300-nv_0", "b300-x_0"},
	}, Clusters: map[string]ClusterFacts{
		"b200-nscale": {GPUsPerNode: 8, DRAMMiB: 3_000_000},
		"gb300-nv":    {GPUsPerNode: 4},
		"h100-dgxc":   {GPUsPerNode: 8},
		"h200-dgxc":   {GPUsPerNode: 8, DRAMMiB: 2_000_000},
	}}
}

// TestExpandToday builds one entry per kind and checks the rows as the
// generator's rules make them.
func TestExpandToday(t *testing.T) {
	pts, err := ExpandWith("m.yaml", []byte(todayDoc), ExpandOptions{Runners: todayRunners()})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pts {
		names = append(names, fmt.Sprintf("%s/%s/%v/eval=%v@%d/only=%v", p.Key, p.Scenario, p.Conc, p.RunEval, p.EvalConc, p.EvalOnly))
	}
	want := []string{
		// Benchmark rows first, without evals (the planner's eval mode
		// "none"). single-node fixed: one row per concurrency.
		"sn-fixed/fixed-seq-len/[4]/eval=false@0/only=false",
		"sn-fixed/fixed-seq-len/[8]/eval=false@0/only=false",
		"sn-fixed/fixed-seq-len/[16]/eval=false@0/only=false",
		"sn-fixed/fixed-seq-len/[32]/eval=false@0/only=false",
		"sn-fixed/fixed-seq-len/[64]/eval=false@0/only=false",
		// multi-node fixed: one row per search-space entry with its list.
		"mn-disagg/fixed-seq-len/[8 48]/eval=false@0/only=false",
		"mn-disagg/fixed-seq-len/[64]/eval=false@0/only=false",
		"mn-disagg/fixed-seq-len/[16 32 48]/eval=false@0/only=false",
		// agentic: one row per concurrency.
		"mn-agentic/agentic-coding/[1]/eval=false@0/only=false",
		"mn-agentic/agentic-coding/[8]/eval=false@0/only=false",
		"sn-agentic/agentic-coding/[2]/eval=false@0/only=false",
		"sn-agentic/agentic-coding/[5]/eval=false@0/only=false",
		"sn-agentic/agentic-coding/[3]/eval=false@0/only=false",
		// Then the eval-only rows (mode "subset"). single-node 8k1k: the
		// highest (64) and the median (32) of the eligible 16, 32, 64.
		"sn-fixed/fixed-seq-len/[32]/eval=true@0/only=true",
		"sn-fixed/fixed-seq-len/[64]/eval=true@0/only=true",
		// multi-node 8k1k: each parallelism group at its highest eligible
		// concurrency; 1k1k never.
		"mn-disagg/fixed-seq-len/[8 48]/eval=true@48/only=true",
		"mn-disagg/fixed-seq-len/[64]/eval=true@64/only=true",
		// kimik3 runs its vendor suite on every agentic row (eval-conc its
		// only conc) ...
		"mn-agentic/agentic-coding/[1]/eval=true@1/only=true",
		"mn-agentic/agentic-coding/[8]/eval=true@8/only=true",
		// single-node agentic: GSM8K at the highest concurrency.
		"sn-agentic/agentic-coding/[5]/eval=true@0/only=true",
		// ... and, no concurrency being >= 16, one GSM8K row at the
		// deployment's highest concurrency, at the end.
		"mn-agentic/agentic-coding/[8]/eval=true@8/only=true",
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("rows:\n got %s\nwant %s", strings.Join(names, "\n     "), strings.Join(want, "\n     "))
	}
	if len(pts) != len(want) {
		t.FailNow()
	}

	sn := pts[3].Row
	for k, v := range map[string]any{"tp": 4, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": false, "conc": 32,
		"max-model-len": 8192 + 1024 + 256, "exp-name": "dsr1_8k1k", "disagg": false, "spec-decoding": "none",
		"srt-recipe": "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/b200/8k1k.yaml", "run-eval": false} {
		if !reflect.DeepEqual(sn[k], v) {
			t.Errorf("single-node row %s = %#v, want %#v", k, sn[k], v)
		}
	}
	for _, f := range []string{"eval-framework", "eval-suite", "eval-conc", "eval-only"} {
		if _, ok := sn[f]; ok {
			t.Errorf("a benchmark row has %s", f)
		}
	}
	ev := pts[13].Row
	for k, v := range map[string]any{"conc": 32, "run-eval": true, "eval-only": true, "eval-framework": "lm-eval", "eval-suite": ""} {
		if !reflect.DeepEqual(ev[k], v) {
			t.Errorf("single-node eval row %s = %#v, want %#v", k, ev[k], v)
		}
	}
	if _, ok := pts[15].Row["require-power"]; ok || pts[5].Row["require-power"] != true {
		t.Errorf("require-power: benchmark %v, eval row %v (eval rows drop it)", pts[5].Row["require-power"], pts[15].Row["require-power"])
	}
	if _, ok := sn["node-count"]; ok {
		t.Error("a single-node row has node-count")
	}
	if pts[3].GPUs() != 4 {
		t.Errorf("single-node GPUs = %d, want 4", pts[3].GPUs())
	}

	mn := pts[5]
	if mn.Row["srt-recipe"] != "benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300/8k1k/disagg.yaml:override_a" ||
		mn.Row["eval-srt-recipe"] != "benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300/8k1k/eval.yaml" {
		t.Errorf("recipe paths: %v / %v", mn.Row["srt-recipe"], mn.Row["eval-srt-recipe"])
	}
	if mn.Cluster != "gb300-nv" || pts[0].Cluster != "b200-nscale" {
		t.Errorf("clusters %q %q", mn.Cluster, pts[0].Cluster)
	}
	if mn.Selector != "override_a" || mn.RecipeFile() != "benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300/8k1k/disagg.yaml" {
		t.Errorf("selector %q file %q", mn.Selector, mn.RecipeFile())
	}
	if !mn.Power || !mn.RequirePower || mn.Row["kv-p2p-transfer"] != "nixl" {
		t.Errorf("power %v require-power %v kv-p2p %v", mn.Power, mn.RequirePower, mn.Row["kv-p2p-transfer"])
	}
	if ph, dh := mn.Hardware(); ph != "gb300" || dh != "h100" {
		t.Errorf("hardware %q/%q, want gb300/h100", ph, dh)
	}
	if b := pts[8].KVOffloadBackend(); b["name"] != "lmcache" || pts[0].KVOffloadBackend() != nil {
		t.Errorf("kv-offload-backend %v / %v", b, pts[0].KVOffloadBackend())
	}
	// The same recipe at two concurrencies: one fingerprint; the row
	// without a recipe given is refused, as it names srt-recipe.
	rec := map[string]any{"schema": 2, "benchmark": map[string]any{"concurrencies": []any{1}}}
	rec2 := map[string]any{"schema": 2, "benchmark": map[string]any{"concurrencies": []any{2}}}
	f0, err0 := pts[0].Fingerprint(rec)
	f1, err1 := pts[1].Fingerprint(rec2)
	if err0 != nil || err1 != nil || f0 != f1 {
		t.Errorf("single-node rows at 4 and 8: %s %s (%v %v)", f0, f1, err0, err1)
	}
	if _, err := pts[0].Fingerprint(); err == nil {
		t.Error("a row naming srt-recipe fingerprinted without its recipe")
	}
	if _, ok := pts[6].Row["power"]; ok {
		t.Error("a row without power: true carries power")
	}
	// Node counts from GPUs per node: prefill 4 GPUs on gb300 hardware (the
	// gb300 family: 4/node) = 1
	// node; decode 16 GPUs on h100 hardware (8/node) = 2 nodes.
	if mn.NodeCount != 3 {
		t.Errorf("node-count = %d (%s), want 3", mn.NodeCount, mn.NodeCountNote)
	}
	// PREFILL_NODES=3 overrides the prefill count; decode 16 GPUs at 4 per
	// node = 4.
	if pts[6].NodeCount != 7 {
		t.Errorf("node-count with PREFILL_NODES = %d (%s), want 7", pts[6].NodeCount, pts[6].NodeCountNote)
	}
	if pts[7].ExpName != "dsr1_1k1k" || !reflect.DeepEqual(pts[7].Conc, []int{16, 32, 48}) {
		t.Errorf("1k1k row: %s %v", pts[7].ExpName, pts[7].Conc)
	}

	ag := pts[9].Row
	// 2,000,000 MiB × 0.8 × 8 of 8 GPUs (a 16-GPU replica fills its
	// nodes) = 1677.7216 GB, truncated.
	for k, v := range map[string]any{"total-cpu-dram-gb": 1677, "duration": 3600, "scenario-type": "agentic-coding",
		"kv-offloading": "dram", "node-count": 4, "power": true, "disagg": false,
		"exp-name":   "kimik3_p2x16ep32dpa_d0x16ep32dpa_conc8_kvdram-lmcache",
		"srt-recipe": "benchmarks/multi_node/srt-slurm-recipes/kimik3/vllm/h200/agentx/agg.yaml"} {
		if !reflect.DeepEqual(ag[k], v) {
			t.Errorf("multi-node agentic row %s = %#v, want %#v", k, ag[k], v)
		}
	}
	if _, ok := ag["run-eval"]; ok {
		t.Error("an agentic benchmark row has run-eval (the generator sets it only when marking evals)")
	}
	if r := pts[18].Row; r["eval-framework"] != "kimi-vendor" || r["eval-suite"] != "kimi_tool_call_schema_full" || r["eval-conc"] != 8 {
		t.Errorf("vendor eval row: %v", r)
	}
	if r := pts[20].Row; r["eval-framework"] != "lm-eval" || r["eval-suite"] != "" || r["eval-only"] != true || r["eval-conc"] != 8 {
		t.Errorf("eval-only GSM8K row: %v", r)
	}
	j, err := pts[9].RowJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(j), `{"image":"vllm:k3","model":"org/k3","model-prefix":"kimik3","precision":"fp4","framework":"vllm","runner":"cluster:h200-dgxc","spec-decoding":"none","prefill"`) {
		t.Errorf("row JSON not in the generator's order: %s", j)
	}
	if !strings.Contains(string(j), `"exp-name":"kimik3_p2x16ep32dpa_d0x16ep32dpa_conc8_kvdram-lmcache","disagg":false,"scenario-type":"agentic-coding","kv-offload-backend":{"name":"lmcache","version":"0.3.1"},"router":`) {
		t.Errorf("row JSON middle not in the generator's order: %s", j)
	}
	sa := pts[11].Row
	for k, v := range map[string]any{"exp-name": "dsv4_tp8_conc5_kvnone_spec-mtp", "total-cpu-dram-gb": 0, "conc": 5, "ep": 1} {
		if !reflect.DeepEqual(sa[k], v) {
			t.Errorf("single-node agentic row %s = %#v, want %#v", k, sa[k], v)
		}
	}
	if _, ok := sa["disagg"]; ok {
		t.Error("a single-node agentic row has disagg")
	}
}

func TestClusterOf(t *testing.T) {
	f := todayRunners()
	for label, want := range map[string]string{
		"cluster:gb300-nv": "gb300-nv", "gb300": "gb300-nv", "blackwell": "", "cluster:nowhere": "", "unknown": "",
	} {
		if got := f.ClusterOf(label); got != want {
			t.Errorf("ClusterOf(%q) = %q, want %q", label, got, want)
		}
	}
	var none *RunnerFacts
	if got := none.ClusterOf("cluster:x"); got != "x" {
		t.Errorf("without runners.yaml, a cluster label still names its cluster: %q", got)
	}
}

// TestExpandTodayNeedsRunnerFacts: without runners.yaml facts a DRAM point
// is refused by name and multi-node node counts are left out with the
// reason; a cluster without DRAM facts is named.
func TestExpandTodayNeedsRunnerFacts(t *testing.T) {
	pts, err := ExpandWith("m.yaml", []byte(todayDoc), ExpandOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pts {
		dram := p.Key == "mn-agentic"
		if got := p.Refusal != ""; got != dram {
			t.Errorf("%s: refusal %q", p.Name(), p.Refusal)
		}
		if dram && !strings.Contains(p.Refusal, "runners.yaml") {
			t.Errorf("%s: refusal %q does not say what it needs", p.Name(), p.Refusal)
		}
		if p.Key == "mn-disagg" && p.Conc[0] == 8 && (p.NodeCount != 0 || !strings.Contains(p.NodeCountNote, "runners.yaml")) {
			t.Errorf("%s: node-count %d note %q", p.Name(), p.NodeCount, p.NodeCountNote)
		}
	}
	f := todayRunners()
	f.Clusters["h200-dgxc"] = ClusterFacts{GPUsPerNode: 8}
	pts, err = ExpandWith("m.yaml", []byte(todayDoc), ExpandOptions{Runners: f})
	if err != nil {
		t.Fatal(err)
	}
	if r := pts[8].Refusal; !strings.Contains(r, "available-cpu-dram-mib") {
		t.Errorf("cluster without DRAM facts: refusal %q", r)
	}
}

// TestRecipeNodeCount: with the project root, a multi-node row's node
// count is its recipe's (roles plus dedicated nodes), variant merged over
// base; a zip selector falls back to the workers.
func TestRecipeNodeCount(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/gb300/8k1k")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	recipe := `schema: 2
base:
  roles:
    prefill: {nodes: 1}
    decode: {nodes: 4}
  frontend: {placement: {node: dedicated}}
  benchmark: {client_dedicated_node: true}
override_a:
  roles:
    decode: {nodes: 2}
    extra: {nodes: colocate}
  services:
  - {type: etcd, nodes: 1, placement: {node: dedicated}}
  - {type: nats, placement: {node: dedicated}}
  - {type: other, nodes: 5, enabled: false}
`
	if err := os.WriteFile(filepath.Join(dir, "disagg.yaml"), []byte(recipe), 0o644); err != nil {
		t.Fatal(err)
	}
	pts, err := ExpandWith("m.yaml", []byte(todayDoc), ExpandOptions{Runners: todayRunners(), Root: root})
	if err != nil {
		t.Fatal(err)
	}
	// override_a: prefill 1 + decode 2 + colocate 0 = 3 worker nodes; one
	// etcd pool node; dedicated roles (etcd/nats, frontend, benchmark)
	// collapse to 1 because the client colocates with the frontend.
	if pts[5].NodeCount != 5 {
		t.Errorf("override_a: node-count %d (%s), want 5", pts[5].NodeCount, pts[5].NodeCountNote)
	}
	if pts[6].NodeCount != 7 {
		t.Errorf("zip selector: node-count %d, want the workers' 7", pts[6].NodeCount)
	}
}

// TestExpandTodaySample expands InferenceX's NVIDIA master of the sample:
// 149 entries, 579 search-space rows, every one validated and expanded.
func TestExpandTodaySample(t *testing.T) {
	root := shareddata.Path(t, "data", "inferencex-v3", "inferencex-e2e")
	data, err := os.ReadFile(filepath.Join(root, "configs", "nvidia-master.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rdata, err := os.ReadFile(filepath.Join(root, "configs", "runners.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	facts, err := ReadRunnerFacts("runners.yaml", rdata)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := ExpandWith("nvidia-master.yaml", data, ExpandOptions{Runners: facts, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	keys := map[string]bool{}
	for _, p := range pts {
		keys[p.Key] = true
		count[fmt.Sprintf("multinode=%v %s eval-only=%v", p.Multinode, p.Scenario, p.EvalOnly)]++
		if p.Refusal != "" {
			t.Errorf("%s: refused: %s", p.Name(), p.Refusal)
		}
		if p.Multinode && p.NodeCount == 0 {
			t.Errorf("%s: no node count: %s", p.Name(), p.NodeCountNote)
		}
	}
	if len(keys) != 149 {
		t.Errorf("%d entries expanded, want all 149", len(keys))
	}
	// The 233 multi-node fixed-seq-len rows are the measured count
	// (one per search-space entry); the rest follow from the generator's
	// rules (one row per concurrency for single-node and agentic rows).
	if got := count["multinode=true fixed-seq-len eval-only=false"]; got != 233 {
		t.Errorf("%d multi-node fixed-seq-len rows, want 233", got)
	}
	t.Logf("%d rows: %v", len(pts), count)
}

// BenchmarkExpandTodaySample expands the sample's NVIDIA master (149
// entries, 1904 points) with runners.yaml and the recipe node counts.
func BenchmarkExpandTodaySample(b *testing.B) {
	root := shareddata.Path(b, "data", "inferencex-v3", "inferencex-e2e")
	data, err := os.ReadFile(filepath.Join(root, "configs", "nvidia-master.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	rdata, err := os.ReadFile(filepath.Join(root, "configs", "runners.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	facts, err := ReadRunnerFacts("runners.yaml", rdata)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		pts, err := ExpandWith("nvidia-master.yaml", data, ExpandOptions{Runners: facts, Root: root})
		if err != nil || len(pts) != 1904 {
			b.Fatalf("%d points, %v", len(pts), err)
		}
	}
}
