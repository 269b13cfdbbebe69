package planner

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestImageImportsOnNodes: with a squash cache on each node's own disk
// (container.import_on = "nodes"), every node of the job gets one image
// step, outside any container, running slurmbench import-node with the
// plan's squash file and image; without it no step is planned.
func TestImageImportsOnNodes(t *testing.T) {
	const text = `name: nodes
model: {path: dsr1, container: sglang}
resources: {gpu_type: b200, gpus_per_node: 8, prefill_nodes: 2, prefill_workers: 1, decode_nodes: 1, decode_workers: 1}
frontend: {type: dynamo, enable_multiple_frontends: false}
infra: {etcd_nats_dedicated_node: %v}
dynamo: {install: false}
backend:
  type: sglang
  sglang_config:
    prefill: {tensor-parallel-size: 16}
    decode: {tensor-parallel-size: 8}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: [8]}
`
	for _, tc := range []struct {
		name      string
		importOn  string
		enroot    string
		dedicated bool
		nodes     []int // nodes with an image step; nil: none
	}{
		{name: "shared cache", importOn: "", nodes: nil},
		{name: "compute import", importOn: "compute", nodes: nil},
		{name: "every node", importOn: profile.ImportOnNodes, nodes: []int{0, 1, 2}},
		{name: "every node and a dedicated infra node", importOn: profile.ImportOnNodes, dedicated: true, enroot: "/opt/enroot/bin/enroot", nodes: []int{0, 1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := loadProfile(t, filepath.Join(testdataDir(t), "profiles", "b200.toml"))
			p.Container.ImportOn, p.Container.Enroot = tc.importOn, tc.enroot
			path := filepath.Join(t.TempDir(), "recipe.yaml")
			writeFile(t, path, fmt.Sprintf(text, tc.dedicated))
			pl, err := Build(inputs(p, loadRecipe(t, path)))
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, pl)
			var nodes []int
			prog := tc.enroot
			if prog == "" {
				prog = "enroot"
			}
			for _, proc := range pl.Processes {
				if proc.Role != plan.RoleImage {
					continue
				}
				nodes = append(nodes, proc.Nodes...)
				want := []string{pl.Binary, "import-node", "--enroot", prog, "--lock-timeout", "30m0s", pl.Image.Squash, pl.Image.Ref}
				if !slices.Equal(proc.Argv, want) || proc.Container || len(proc.Nodes) != 1 {
					t.Errorf("%s: argv %q container %v nodes %v; want %q outside a container on one node", proc.Name, proc.Argv, proc.Container, proc.Nodes, want)
				}
			}
			if !slices.Equal(nodes, tc.nodes) || len(nodes) > 0 && len(nodes) != pl.Nodes {
				t.Errorf("image steps on %v of %d nodes, want %v", nodes, pl.Nodes, tc.nodes)
			}
			if pl.Image.PerNode != (tc.nodes != nil) {
				t.Errorf("Image.PerNode %v", pl.Image.PerNode)
			}
		})
	}
}
