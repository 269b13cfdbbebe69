package planner

import (
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner/hostsetup"
)

// hostSetup plans srt-slurm 2.x's host_setup (package hostsetup) on the
// nodes the topology placed: the recipe's block, else the profile's
// default (a runners.yaml record's srt-slurm.host-setup).
func (b *builder) hostSetup() error {
	var workers []int
	for _, p := range b.plan.Processes {
		if plan.IsWorker(p.Role) {
			workers = append(workers, p.Nodes...)
		}
	}
	src := b.p.Path
	if s, ok := b.p.SourceOf("host_setup"); ok {
		src = s.String()
	}
	procs, hs, err := hostsetup.Plan(hostsetup.Input{Recipe: b.r.HostSetup, Default: b.p.HostSetup, DefaultSource: src,
		Workspace: b.workspace(), ProfilePath: b.p.Path, RunDir: b.plan.RunDir, Env: b.p.Env.Set,
		Head: b.headNode, Infra: b.infraNode, Workers: workers, LogPath: b.logPath})
	if err != nil || hs == nil {
		return err
	}
	for _, p := range procs {
		b.add(p)
	}
	b.plan.HostSetup = hs
	return nil
}
