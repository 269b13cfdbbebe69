package planner

import (
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// TestDedicatedClientNode: benchmark.client_dedicated_node (schema 2:
// benchmark.placement.node: dedicated) reserves one more node, the last of
// the allocation, for the client; a dedicated infra node then shares it
// (srtctl's RuntimeContext with benchmark.colocate_with_frontend's default),
// and without the client it stays the first node.
func TestDedicatedClientNode(t *testing.T) {
	base := string(readTestdata(t, "recipes", "4p1d.yaml")) // 2 prefill + 1 decode node
	cases := []struct {
		name                     string
		extra                    string
		nodes, bench, infra, min int // min: the first worker node
	}{
		{"none", "", 3, 0, 0, 0},
		{"client", "  client_dedicated_node: true\n", 4, 3, 0, 0},
		{"infra", "infra: {etcd_nats_dedicated_node: true}\n", 4, 1, 0, 1},
		{"client and infra share", "  client_dedicated_node: true\ninfra: {etcd_nats_dedicated_node: true}\n", 4, 3, 3, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := base
			if strings.HasPrefix(c.extra, "  ") {
				text = strings.Replace(text, "benchmark:\n", "benchmark:\n"+c.extra[:strings.Index(c.extra, "\n")+1], 1)
				c.extra = c.extra[strings.Index(c.extra, "\n")+1:]
			}
			text += c.extra
			pl := buildText(t, "b200.toml", text)
			if pl.Nodes != c.nodes || pl.Slurm.Nodes != c.nodes {
				t.Errorf("nodes %d (slurm %d), want %d", pl.Nodes, pl.Slurm.Nodes, c.nodes)
			}
			if n := procNamed(t, pl, "benchmark").Nodes[0]; n != c.bench {
				t.Errorf("benchmark client on node %d, want %d", n, c.bench)
			}
			if n := procNamed(t, pl, "infra_nats").Nodes[0]; n != c.infra {
				t.Errorf("nats on node %d, want %d", n, c.infra)
			}
			lowest := pl.Nodes
			for _, p := range pl.Processes {
				if p.Role == plan.RolePrefill || p.Role == plan.RoleDecode {
					for _, n := range p.Nodes {
						lowest = min(lowest, n)
						if n == c.bench && c.bench != c.min && c.name != "none" && c.name != "infra" {
							t.Errorf("worker %s on the reserved client node %d", p.Name, n)
						}
					}
				}
			}
			if lowest != c.min {
				t.Errorf("first worker node %d, want %d", lowest, c.min)
			}
			for _, e := range invariantErrors(pl) {
				t.Error(e)
			}
		})
	}
}
