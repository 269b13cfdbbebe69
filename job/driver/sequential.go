package driver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/slurmbench/slurmbench/diagnose"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/plan"
)

// startWorkers starts the engine workers: every worker that waits for
// nothing first, then each one with StartAfter (srtctl's
// sequential_node_start batches) once the workers it names are ready, so
// one node's batches do not hold back another node's first ones.
func (d *driver) startWorkers(ctx context.Context, workers []plan.Process) error {
	for _, p := range workers {
		if len(p.StartAfter) == 0 {
			if err := d.startStep(ctx, p); err != nil {
				return err
			}
		}
	}
	byName := map[string]plan.Process{}
	for _, p := range d.plan.Processes {
		byName[p.Name] = p
	}
	ready := map[string]bool{}
	for _, p := range workers {
		if len(p.StartAfter) == 0 {
			continue
		}
		for _, dep := range p.StartAfter {
			if ready[dep] {
				continue
			}
			if err := d.waitHealthy(ctx, byName[dep]); err != nil {
				return err
			}
			ready[dep] = true
		}
		if err := d.startStep(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// waitHealthy polls p's HTTP readiness probe until it answers 200, within
// the health gate's budget (srtctl's wait_for_health with health_check's
// attempts and interval), while watching every step.
func (d *driver) waitHealthy(ctx context.Context, p plan.Process) error {
	h := d.plan.Health
	budget := time.Duration(max(h.MaxAttempts, 1)*max(h.IntervalSeconds, 1)) * time.Second
	url := "http://" + net.JoinHostPort(d.alloc.IPs[p.Ready.Node], strconv.Itoa(p.Ready.Port)) + p.Ready.Path
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(budget)
	d.logf("sequential node start: waiting for %s at %s", p.Name, url)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("readiness of %s: %w", p.Name, err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				d.logf("%s ready at %s", p.Name, url)
				return nil
			}
		}
		if time.Now().After(deadline) {
			return &failure{class: diagnose.HealthDeadline, step: d.stepOf(p.Name), code: exitcode.Health,
				msg: fmt.Sprintf("sequential node start: %s did not answer %s with 200 within %s", p.Name, url, budget)}
		}
		select {
		case s := <-d.exited:
			return d.died(s, diagnose.ExitedBeforeHealthy, exitcode.Engine, "before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}
