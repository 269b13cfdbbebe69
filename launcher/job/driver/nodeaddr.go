package driver

import (
	"context"

	"github.com/slurmbench/slurmbench/launcher/job/nodeaddr"
)

// learnAddrs replaces the DNS addresses with each node's own, on the
// plan's network interface (launcher/job/nodeaddr), as srtctl finds them.
func (d *driver) learnAddrs(ctx context.Context) {
	iface := d.plan.Slurm.NetworkInterface
	if iface == "" {
		return
	}
	ips, notes := nodeaddr.Learn(ctx, nodeaddr.Options{Srun: d.opts.Srun, Binary: d.plan.Binary, JobID: d.alloc.JobID,
		Hosts: d.alloc.Hosts, Interface: iface, DNS: d.alloc.IPs, Run: d.opts.RunNodeAddr})
	for _, n := range notes {
		d.logf("node addresses: %s", n)
	}
	d.alloc.IPs = ips
}
