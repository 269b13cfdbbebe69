package driver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// startWorkers starts the workers. A worker that names others in After
// (TRT-LLM's sequential_node_start) starts once each of them serves. The
// workers start in rounds, a worker's round being one past the latest of
// those it waits for, so every node's first batch starts before the driver
// waits for any, and the batches of different nodes load together.
func (d *driver) startWorkers(ctx context.Context) error {
	workers := d.byRole(plan.RolePrefill, plan.RoleDecode, plan.RoleAgg)
	byName := map[string]plan.Process{}
	round := map[string]int{}
	for _, p := range workers {
		byName[p.Name] = p
		// The plan names only earlier workers in After (Validate).
		for _, a := range p.After {
			round[p.Name] = max(round[p.Name], round[a]+1)
		}
	}
	sort.SliceStable(workers, func(i, j int) bool { return round[workers[i].Name] < round[workers[j].Name] })
	served := map[string]bool{}
	for _, p := range workers {
		for _, a := range p.After {
			if served[a] {
				continue
			}
			q, ok := byName[a]
			if !ok || q.Ready == nil {
				return fmt.Errorf("process %s waits for %s, which is no worker with a readiness probe", p.Name, a)
			}
			if err := d.waitServes(ctx, q); err != nil {
				return err
			}
			served[a] = true
		}
		if err := d.startStep(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// waitServes polls p's HTTP probe until it answers 200, as srtctl's
// wait_for_health does, for the health check's attempts and interval,
// while watching every step.
func (d *driver) waitServes(ctx context.Context, p plan.Process) error {
	h := d.plan.Health
	attempts, interval := max(h.MaxAttempts, 1), time.Duration(max(h.IntervalSeconds, 1))*time.Second
	url := "http://" + net.JoinHostPort(d.alloc.IPs[p.Ready.Node], strconv.Itoa(p.Ready.Port)) + p.Ready.Path
	d.logf("waiting for %s to serve at %s before the next workers on its node start", p.Name, url)
	var last string
	for attempt := 1; ; attempt++ {
		status, err := d.probeHTTP(ctx, url)
		if err == nil && status == http.StatusOK {
			d.logf("%s serves", p.Name)
			return nil
		}
		if err != nil {
			last = err.Error()
		} else {
			last = "HTTP " + strconv.Itoa(status)
		}
		if attempt >= attempts {
			return &failure{class: diagnose.HealthDeadline, step: d.stepOf(p.Name), code: exitcode.Health,
				msg: fmt.Sprintf("%s did not serve at %s after %d attempts %s apart (last: %s); the workers started after it never started", p.Name, url, attempts, interval, last)}
		}
		t := time.NewTimer(interval)
		select {
		case s := <-d.exited:
			t.Stop()
			return d.died(s, diagnose.ExitedBeforeHealthy, exitcode.Engine, "before it was ready")
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// probeHTTP is one GET of url, bounded as srtctl bounds it (5 s).
func (d *driver) probeHTTP(ctx context.Context, url string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := d.opts.HTTPClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
