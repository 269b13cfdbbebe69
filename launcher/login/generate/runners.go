package generate

import (
	"context"
	"fmt"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
	"github.com/slurmbench/slurmbench/launcher/inputs/srtlanes"
)

// RunnersClusters is Clusters over runners.yaml's records (package
// runners): each cluster's srt-slurm fabric, rendered as recipes read it
// (the names runners.FabricNames knows), its DCGM exporter port and the
// AgentX client paths of a multi-node agentic job there
// (runners.Cluster.AgenticClientEnv; the binder writes them only on that
// lane). The
// staged checkpoint and squash file are the profile's to resolve when the
// bound recipe is planned (profile.Profile.ModelDir, the squash policy),
// so they are not set here.
type RunnersClusters struct{ Inventory *runners.Inventory }

// Cluster is the binder's facts of cluster id.
func (r RunnersClusters) Cluster(_ context.Context, id string) (fragment.Cluster, error) {
	c, ok := r.Inventory.Clusters[id]
	if !ok {
		return fragment.Cluster{}, fmt.Errorf("%s: no cluster %q", r.Inventory.Path, id)
	}
	fc := fragment.Cluster{ID: id, GPUsPerNode: c.GPUsPerNode, Fabric: fragment.Fabric{Known: runners.FabricNames(), Values: map[string]string{}}}
	if s := c.Slurm.SrtSlurm; s != nil {
		fc.PowerExporterPort = s.PowerExporterPort
		fc.Fabric.Values = s.Fabric.Rendered()
	}
	// The binder's facts are per cluster, not per point: the lane's
	// request-specific mounts are the workflow's to add (its BindFragment
	// derives them from the whole request); here a multi-node AgentX
	// point with no other field, which every Always mount matches.
	for _, p := range c.AgenticClientEnv(srtlanes.Request{Agentic: true, MultiNode: true}) {
		fc.ClientEnv = append(fc.ClientEnv, fragment.EnvVar{Name: p.Name, Value: p.Value})
	}
	return fc, nil
}
