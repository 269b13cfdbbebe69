package driver

import (
	"context"
	"fmt"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// waitWorkersServe holds a frontend that names workers in After until each
// of them serves: trtllm-serve's disaggregated orchestrator reads its
// workers' addresses once and does not retry one it cannot reach, so
// srtctl waits on every worker's /health in turn before starting it
// (srt-slurm src/srtctl/frontends/trtllm_serve.py@3c0b8d46,
// start_frontends), with the health check's attempts and interval.
func (d *driver) waitWorkersServe(ctx context.Context, p plan.Process) error {
	for _, a := range p.After {
		q, ok := d.workerNamed(a)
		if !ok || q.Ready == nil {
			return fmt.Errorf("process %s waits for %s, which is no worker with a readiness probe", p.Name, a)
		}
		if err := d.waitServes(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func (d *driver) workerNamed(name string) (plan.Process, bool) {
	for _, q := range d.plan.Processes {
		if q.Name == name && plan.IsWorker(q.Role) {
			return q, true
		}
	}
	return plan.Process{}, false
}
