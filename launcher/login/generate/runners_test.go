package generate

import (
	"context"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/yamltree"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// TestClientEnvFromRecord binds points on clusters built as runners.yaml
// records: the AgentX client paths reach a multi-node agentic point's
// benchmark.env from the record's mounts, no other lane's, and a fragment
// setting HF_HOME keeps its own Hub cache.
func TestClientEnvFromRecord(t *testing.T) {
	const head = "labels:\n  cluster:c: [r_00]\nclusters:\n  c:\n    gpus-per-node: 8\n    arch: x86_64\n    scheduler: slurm\n    slurm:\n      partition: p\n      exclusive: true\n" +
		"      volumes:\n        hf-hub-cache: {path: /srv/hf}\n        aiperf-cache: {path: /srv/aiperf}\n      srt-slurm:\n        network-interface: eth0\n"
	withMounts := head + "        volume-mounts: {hf-hub-cache: /hf_hub_cache}\n        agentic-volume-mounts: {aiperf-cache: /aiperf_mmap_cache}\n"
	for _, tc := range []struct {
		name, record, fragEnv string
		lane                  fragment.Lane
		want                  string // benchmark.env, NAME=value in order
	}{
		{"multi-node agentic, both volumes mounted", withMounts, "", fragment.Lane{Agentic: true, MultiNode: true},
			"KV_OFFLOADING=none RESULT_DIR=/logs/agentic AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache HF_HUB_CACHE=/hf_hub_cache"},
		{"multi-node agentic, no volume mounted", head, "", fragment.Lane{Agentic: true, MultiNode: true},
			"KV_OFFLOADING=none RESULT_DIR=/logs/agentic"},
		{"multi-node agentic, fragment sets HF_HOME", withMounts, "HF_HOME: /hf", fragment.Lane{Agentic: true, MultiNode: true},
			"HF_HOME=/hf KV_OFFLOADING=none RESULT_DIR=/logs/agentic AIPERF_DATASET_MMAP_CACHE_DIR=/aiperf_mmap_cache"},
		{"single-node agentic gets none", withMounts, "", fragment.Lane{Agentic: true},
			"MODEL=org/M CONC=4 KV_OFFLOADING=none"},
		{"multi-node fixed-sequence gets none", withMounts, "", fragment.Lane{MultiNode: true},
			"ISL=1024 OSL=128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := runners.Parse("runners.yaml", []byte(tc.record), runners.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := RunnersClusters{Inventory: inv}.Cluster(context.Background(), "c")
			if err != nil {
				t.Fatal(err)
			}
			src := "schema: 2\nname: n\nbenchmark:\n  type: custom\n  env: {" + tc.fragEnv + "}\n"
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
				t.Fatal(err)
			}
			p := fragment.Point{Model: "org/M", Image: "img:1", Precision: "fp8", ISL: 1024, OSL: 128, Conc: []int{4}, KVOffloading: "none"}
			bound, err := fragment.Bind("f.yaml", doc.Content[0], fragment.Input{Lane: tc.lane, Point: p, Cluster: c})
			if err != nil {
				t.Fatal(err)
			}
			env := yamltree.Get(yamltree.Get(bound, "benchmark"), "env")
			var got []string
			for i := 0; i+1 < len(env.Content); i += 2 {
				got = append(got, env.Content[i].Value+"="+env.Content[i+1].Value)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("benchmark.env %q, want %q", g, tc.want)
			}
		})
	}
}

// TestFabricNamesAgree: the '@fabric.<name>' names a recipe may use
// without a cluster (fragment.FabricFields) are the fields a runners.yaml
// record may set (runners.FabricNames): one list of names, so a recipe
// cannot compose without a cluster and then fail on every record.
func TestFabricNamesAgree(t *testing.T) {
	a := slices.Clone(fragment.FabricFields)
	b := runners.FabricNames()
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("fragment.FabricFields %v, runners.FabricNames %v: want the same names", a, b)
	}
}
