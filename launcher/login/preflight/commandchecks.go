package preflight

import (
	"context"

	"github.com/slurmbench/slurmbench/slurm"
)

// commandChecks are slurmChecks over Slurm's own commands (slurm.transport
// "cli"): the commands answer (scontrol ping), the data_parser version
// they print, no token, then the partition, nodes and account as over
// slurmrestd.
func (r *run) commandChecks(ctx context.Context, skipRest func(from int, why string) bool) bool {
	p := r.p
	where := "Slurm's commands on PATH"
	if p.Slurm.BinDir != "" {
		where = "Slurm's commands in " + p.Slurm.BinDir
	}
	fix := "check that scontrol ping works for this user (slurm.bin_dir in " + p.Path + ")"
	client, err := p.SlurmClient(func(cfg *slurm.Config) {
		cfg.Retry.Max = -1 // one attempt: preflight reports, it does not wait
		cfg.RequestTimeout = requestTimeout
	})
	if err != nil {
		r.fail("slurm-commands", layerConfig, errText(err), fix)
		return skipRest(0, "no Slurm client")
	}
	r.client = client
	srv, err := client.Negotiate(ctx)
	if err != nil {
		r.fail("slurm-commands", layerSlurm, where+" fail: "+errText(err), fix)
		return skipRest(0, "Slurm's commands fail")
	}
	r.pass("slurm-commands", "%s answer: Slurm %s", where, orUnknown(srv.SlurmRelease))
	r.pass("api-version", "%s (the data_parser version the commands print)", srv.APIVersion)
	r.pass("token", "none needed: the commands authenticate as the user running them")
	parts, err := client.ListPartitions(ctx)
	if err != nil {
		r.fail("partition", layerSlurm, errText(err), "check slurmctld (slurmbench ping --profile "+p.Path+")")
		return skipRest(3, "partitions could not be listed")
	}
	part, ok := r.partition(parts)
	if !ok {
		return skipRest(3, "no usable partition")
	}
	nodes, err := client.ListNodes(ctx)
	if err != nil {
		r.fail("nodes", layerSlurm, errText(err), "check slurmctld (slurmbench nodes --profile "+p.Path+")")
		r.account(part)
		return false
	}
	okNodes := r.nodes(part, nodes)
	okAccount := r.account(part)
	return okNodes && okAccount
}
