package planner

import (
	"fmt"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// imageImportName names node n's image step and its log.
func imageImportName(node int) string { return fmt.Sprintf("import_image_%d", node) }

// addImageImports adds, where the profile's squash cache is on each node's
// own disk (container.import_on = "nodes": a runners.yaml record's import:
// all-nodes, or a node-local cache), one step per node of the job that
// imports the image there before anything starts on it: `slurmbench
// import-node` (enroot.NodeImport), outside any container, locked per node
// and validated. Every node of the allocation gets one, the benchmark's
// and infra's too: each starts containers from the same path.
func (b *builder) addImageImports() {
	img := b.plan.Image
	if !b.p.ImportOnNodes() || img.Ref == "" {
		return
	}
	b.plan.Image.PerNode = true
	prog := b.p.Container.Enroot
	if prog == "" {
		prog = enroot.DefaultEnroot
	}
	for node := range b.plan.Nodes {
		name := imageImportName(node)
		b.add(plan.Process{
			Name: name, Role: plan.RoleImage, Nodes: []int{node}, Log: b.logPath(name),
			Argv: []string{b.plan.Binary, "import-node", "--enroot", prog,
				"--lock-timeout", (enroot.DefaultLockTimeout).Round(time.Second).String(), img.Squash, img.Ref},
			Env: map[string]string{},
		})
	}
}
