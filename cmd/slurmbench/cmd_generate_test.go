package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestFragmentCommandsRefuseABoundKey: render --composed and generate
// both refuse, exit 2, a fragment that sets a key the binder writes,
// naming its file, line and key; generate writes nothing.
func TestFragmentCommandsRefuseABoundKey(t *testing.T) {
	root := filepath.Join(t.TempDir(), "inferencex-e2e")
	rel := "benchmarks/multi_node/srt-slurm-recipes/m/sglang/h100-fp8/8k1k/disagg.yaml"
	for name, text := range map[string]string{
		"configs/srt-recipes/fixed-sequence-multi.yaml": "benchmark: {type: custom, command: bash run.sh}\n",
		"configs/runners.yaml": "labels:\n  cluster:c1: [r1]\nclusters:\n  c1:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n" +
			"    slurm: {partition: batch, exclusive: true}\n",
		"configs/nvidia-master.yaml": "m-fp8-h100-dynamo-sglang:\n  image: img:1\n  model: org/m\n  model-prefix: m\n  runner: cluster:c1\n" +
			"  precision: fp8\n  framework: dynamo-sglang\n  multinode: true\n  disagg: true\n  kv-p2p-transfer: nixl\n  srt-recipe-dir: m/sglang/h100-fp8/8k1k\n" +
			"  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n      osl: 1024\n      search-space:\n      - conc-list: [8]\n" +
			"        prefill: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n        decode: {num-worker: 1, tp: 8, ep: 1, dp-attn: false}\n        srt-recipe: disagg.yaml\n",
		rel: "schema: 2\nname: d\nmodel:\n  path: hf:org/m\nroles: {prefill: {nodes: 1, workers: 1, gpus: 8}, decode: {nodes: 1, workers: 1, gpus: 8}}\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"render", "--composed", "-r", filepath.Join(root, rel)},
		{"generate", "--master", filepath.Join(root, "configs", "nvidia-master.yaml"), "--key", "m-*", "--out", out},
	} {
		_, errOut, code := runCLI(t, args...)
		if code != exitcode.Config || !strings.Contains(errOut, rel+":4: model.path:") {
			t.Errorf("%v: exit %d, want 2 naming %s:4 and model.path:\n%s", args, code, rel, errOut)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("generate wrote %s for a refused recipe", out)
	}
}
