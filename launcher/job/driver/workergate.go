package driver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/job/health"
)

// workerGate runs after the frontend's counts pass when the plan lists
// worker endpoints (plan.Health.Workers, a vLLM Router's routed workers):
// each must answer 200 in one pass (health.WaitEndpoints), on the gate's
// interval and attempts; a step exiting meanwhile ends the wait as it
// ends the health gate.
func (d *driver) workerGate(ctx context.Context) error {
	h := d.plan.Health
	if len(h.Workers) == 0 {
		return nil
	}
	urls := make([]string, 0, len(h.Workers))
	for _, w := range h.Workers {
		if w.Node < 0 || w.Node >= len(d.alloc.IPs) {
			return fmt.Errorf("health.workers: node %d outside the allocation of %d", w.Node, len(d.alloc.IPs))
		}
		urls = append(urls, "http://"+net.JoinHostPort(d.alloc.IPs[w.Node], strconv.Itoa(w.Port))+w.Path)
	}
	abort, stopWatch := d.watchExits(ctx)
	last := time.Time{}
	err := health.WaitEndpoints(ctx, health.EndpointsOptions{
		Client: d.opts.HTTPClient, URLs: urls, Abort: abort,
		Interval: time.Duration(h.IntervalSeconds) * time.Second, MaxAttempts: h.MaxAttempts,
		OnPass: func(attempt int, pending []string) {
			if time.Since(last) >= 10*time.Second || len(pending) == 0 {
				last = time.Now()
				d.logf("worker health %d/%d: %d of %d answering %s", attempt, h.MaxAttempts, len(urls)-len(pending), len(urls), strings.Join(pending, " "))
			}
		},
	})
	dead := stopWatch()
	if err == nil && dead != nil {
		d.exited <- dead
	}
	switch {
	case err == nil:
		d.logf("worker health passed: %d endpoints answer 200", len(urls))
		return nil
	case dead != nil:
		return d.died(dead, diagnose.ExitedBeforeHealthy, exitcode.Engine, "before the workers were healthy")
	case errors.Is(err, health.ErrDeadline):
		return &failure{class: diagnose.HealthDeadline, code: exitcode.Health, msg: err.Error()}
	default:
		return err
	}
}
