package planner

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

var fileLineField = regexp.MustCompile(`recipe\.yaml:\d+: resources\.(prefill|agg)_nodes: `)

// TestIdleNodesPlannedAsSrtctl: a recipe whose workers' GPUs fill fewer
// nodes than it reserves is planned as srtctl places it (topology.py
// allocate_endpoints: workers packed in role order, partial-node workers
// sharing a node unless resources.spread_workers) on the node count it
// asks Slurm for (prefill_nodes + decode_nodes, or agg_nodes), and the
// nodes left over are named in a warning instead of refusing the recipe.
func TestIdleNodesPlannedAsSrtctl(t *testing.T) {
	oneP1D := string(readTestdata(t, "recipes", "1p1d.yaml"))
	agg := string(readTestdata(t, "recipes", "agg.yaml"))
	const res1p1d = "  prefill_nodes: 1\n  decode_nodes: 1\n  prefill_workers: 1\n  decode_workers: 1\n"
	const prefillTP = "      tensor-parallel-size: 8\n      mem-fraction-static: 0.85\n"
	tp4 := func(base, resources string) string {
		s := strings.Replace(base, res1p1d, resources, 1)
		return strings.Replace(s, prefillTP, "      tensor-parallel-size: 4\n      mem-fraction-static: 0.85\n", 1)
	}
	type layout map[string][]int // process name → nodes
	cases := []struct {
		name   string
		recipe string
		nodes  int
		want   layout
		idle   string // "" when every node holds a worker
	}{
		{
			// override_stp_maxtpt_7p2d's shape (dsr1 b200-fp4 8k1k): seven
			// 4-GPU prefill workers pack two to a node.
			name:   "7p2d packed",
			recipe: tp4(oneP1D, "  prefill_nodes: 7\n  decode_nodes: 2\n  prefill_workers: 7\n  decode_workers: 2\n  gpus_per_prefill: 4\n  gpus_per_decode: 8\n"),
			nodes:  9,
			want: layout{"prefill_w0": {0}, "prefill_w1": {0}, "prefill_w2": {1}, "prefill_w3": {1}, "prefill_w4": {2}, "prefill_w5": {2},
				"prefill_w6": {3}, "decode_w0": {4}, "decode_w1": {5}},
			idle: "prefill_nodes 7 + decode_nodes 2 = 9 worker nodes, but the workers' 44 GPUs fill only 6 of them (8 GPUs per node): node(s) 6,7,8 stay idle",
		},
		{
			name:   "7p2d spread",
			recipe: tp4(oneP1D, "  prefill_nodes: 7\n  decode_nodes: 2\n  prefill_workers: 7\n  decode_workers: 2\n  gpus_per_prefill: 4\n  gpus_per_decode: 8\n  spread_workers: true\n"),
			nodes:  9,
			want: layout{"prefill_w0": {0}, "prefill_w1": {1}, "prefill_w2": {2}, "prefill_w3": {3}, "prefill_w4": {4}, "prefill_w5": {5},
				"prefill_w6": {6}, "decode_w0": {7}, "decode_w1": {8}},
		},
		{
			// zip_override_stp_lowlat[2]: two 4-GPU prefill workers share a
			// node; decode starts on the next one.
			name:   "2p5d packed",
			recipe: tp4(oneP1D, "  prefill_nodes: 2\n  decode_nodes: 5\n  prefill_workers: 2\n  decode_workers: 5\n  gpus_per_prefill: 4\n  gpus_per_decode: 8\n"),
			nodes:  7,
			want:   layout{"prefill_w0": {0}, "prefill_w1": {0}, "decode_w0": {1}, "decode_w1": {2}, "decode_w2": {3}, "decode_w3": {4}, "decode_w4": {5}},
			idle:   "prefill_nodes 2 + decode_nodes 5 = 7 worker nodes, but the workers' 48 GPUs fill only 6 of them (8 GPUs per node): node(s) 6 stay idle",
		},
		{
			// A partial prefill node is left before decode when more nodes
			// follow, so decode never shares it.
			name:   "1p3d partial prefill",
			recipe: tp4(oneP1D, "  prefill_nodes: 1\n  decode_nodes: 3\n  prefill_workers: 1\n  decode_workers: 2\n  gpus_per_prefill: 4\n  gpus_per_decode: 8\n"),
			nodes:  4,
			want:   layout{"prefill_w0": {0}, "decode_w0": {1}, "decode_w1": {2}},
			idle:   "prefill_nodes 1 + decode_nodes 3 = 4 worker nodes, but the workers' 20 GPUs fill only 3 of them (8 GPUs per node): node(s) 3 stay idle",
		},
		{
			name:   "agg over-reserved",
			recipe: strings.Replace(agg, "  agg_nodes: 1\n", "  agg_nodes: 3\n  gpus_per_agg: 4\n", 1),
			nodes:  3,
			want:   layout{"agg_w0": {0}, "agg_w1": {0}},
			idle:   "agg_nodes 3 = 3 worker nodes, but the workers' 8 GPUs fill only 1 of them (8 GPUs per node): node(s) 1,2 stay idle",
		},
		{
			name:   "every node used",
			recipe: tp4(oneP1D, "  prefill_nodes: 1\n  decode_nodes: 1\n  prefill_workers: 2\n  decode_workers: 1\n  gpus_per_prefill: 4\n"),
			nodes:  2,
			want:   layout{"prefill_w0": {0}, "prefill_w1": {0}, "decode_w0": {1}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pl := buildText(t, "b200.toml", tc.recipe)
			if pl.Nodes != tc.nodes || pl.Slurm.Nodes != tc.nodes {
				t.Errorf("nodes %d, slurm nodes %d; want %d (what srtctl asks Slurm for)", pl.Nodes, pl.Slurm.Nodes, tc.nodes)
			}
			got := layout{}
			for _, p := range pl.Processes {
				if p.Role == plan.RolePrefill || p.Role == plan.RoleDecode || p.Role == plan.RoleAgg {
					got[p.Name] = p.Nodes
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("workers on nodes %v, want %v", got, tc.want)
			}
			var warned []string
			for _, w := range pl.Recipe.Warnings {
				if strings.Contains(w, "stay idle") {
					warned = append(warned, w)
				}
			}
			switch {
			case tc.idle == "" && len(warned) > 0:
				t.Errorf("warned %q with every node used", warned)
			case tc.idle != "" && (len(warned) != 1 || !strings.Contains(warned[0], tc.idle)):
				t.Errorf("warnings %q, want one saying %q", pl.Recipe.Warnings, tc.idle)
			case tc.idle != "" && !fileLineField.MatchString(warned[0]):
				t.Errorf("warning %q does not name the file, line and field", warned[0])
			}
		})
	}
}
