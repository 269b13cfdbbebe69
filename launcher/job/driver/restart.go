package driver

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// This file restarts a held deployment's servers in place (issue 35): a
// queued run whose servers differ from the held ones (engine or frontend
// arguments, the prefill/decode split) replaces them without giving the
// allocation up. What stays valid is kept: the imported image and the
// node-local files are the allocation's anyway; infra (NATS, etcd) whose
// process is the same stays up, and a prepare step the held servers
// already ran to success (the model staging) is not run again. Workers,
// routers and frontends are all restarted when any differs: an engine
// registers with the frontend and the discovery plane when it starts, so a
// half-kept topology would mix the old registrations with the new.

// defaultCleanWait bounds the proof that the nodes are clean after a stop.
const defaultCleanWait = 60 * time.Second

// keptAcross are the processes of next that a restart in place keeps from
// cur: infra still running with the same process, and prepare steps cur
// ran (its servers passed their gate after them) that next runs the same.
func (d *driver) keptAcross(cur, next *plan.Plan) map[string]bool {
	keep := map[string]bool{}
	byName := map[string]plan.Process{}
	for _, p := range cur.Processes {
		byName[p.Name] = p
	}
	for _, p := range next.Processes {
		if p.Role != plan.RoleInfra && p.Role != plan.RolePrepare && p.Role != plan.RoleHostSetup {
			continue
		}
		old, ok := byName[p.Name]
		if !ok || old.Role != p.Role || !plan.SameProcess(cur, old, next, p) {
			continue
		}
		if p.Role == plan.RoleInfra {
			s := d.stepOf(p.Name)
			if s == nil {
				continue
			}
			select {
			case <-s.done:
				continue // gone: start it again
			default:
			}
		}
		keep[p.Name] = true
	}
	return keep
}

// restartInPlace stops every held server next does not keep, proves the
// nodes clean and leaves next's start to runPhases (which skips what is
// kept). It returns the kept processes, with the times in hr; an error
// means the nodes could not be proven clean.
func (d *driver) restartInPlace(ctx context.Context, cur, next *plan.Plan, hr *rundir.HeldRun) (map[string]bool, error) {
	keep := d.keptAcross(cur, next)
	for n := range keep {
		hr.Kept = append(hr.Kept, n)
	}
	slices.Sort(hr.Kept)
	d.logf("run %s: restarting the held servers of run %s in place; keeping %v", next.RunID, cur.RunID, hr.Kept)
	t0 := time.Now()
	var stopped []*step
	d.mu.Lock()
	for _, s := range d.steps {
		if !keep[s.proc.Name] {
			stopped = append(stopped, s)
		}
	}
	d.mu.Unlock()
	d.stopSteps(func(s *step) bool { return !keep[s.proc.Name] })
	d.drainExited()
	hr.StopSeconds = time.Since(t0).Seconds()
	t1 := time.Now()
	err := d.proveClean(ctx, stopped, cur, next, keep)
	hr.CleanSeconds = time.Since(t1).Seconds()
	if err != nil {
		return nil, err
	}
	d.status.update(func(s *rundir.Status) {
		for i := range s.Processes {
			if keep[s.Processes[i].Name] {
				s.Processes[i].State = "held"
			}
		}
	})
	return keep, nil
}

// proveClean proves the nodes clean before new servers start: every
// stopped step has exited (srun reports its tasks ended, so their
// processes and the GPU memory they held are released), and every port
// the stopped processes or next's new ones use refuses connections on its
// node, within CleanWait. A port still answering means a process outlived
// its step (a container that did not stop): the nodes are not clean.
func (d *driver) proveClean(ctx context.Context, stopped []*step, cur, next *plan.Plan, keep map[string]bool) error {
	wait := d.opts.CleanWait
	if wait <= 0 {
		wait = defaultCleanWait
	}
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, s := range stopped {
		select {
		case <-s.done:
		case <-deadline.C:
			return fmt.Errorf("nodes not clean: step %s on %s did not exit within %s of its stop", s.proc.Name, s.host, wait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	addrs := d.portsOf(cur, keep)
	for a := range d.portsOf(next, keep) {
		addrs[a] = true
	}
	for {
		var open []string
		for a := range addrs {
			conn, err := (&net.Dialer{Timeout: 500 * time.Millisecond}).DialContext(ctx, "tcp", a)
			if err == nil {
				conn.Close()
				open = append(open, a)
			}
		}
		if len(open) == 0 {
			d.logf("nodes clean: %d steps exited, %d ports free", len(stopped), len(addrs))
			return nil
		}
		slices.Sort(open)
		select {
		case <-deadline.C:
			return fmt.Errorf("nodes not clean: %s still accepting connections %s after the servers stopped", strings.Join(open, ", "), wait)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// portsOf are host:port of every server port of pl but the kept
// processes', on every node each process runs on.
func (d *driver) portsOf(pl *plan.Plan, keep map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, p := range pl.Processes {
		if !plan.IsServer(p.Role) || keep[p.Name] {
			continue
		}
		for _, n := range p.Nodes {
			if n < 0 || n >= len(d.alloc.IPs) {
				continue
			}
			for _, port := range p.Ports {
				if port > 0 {
					out[net.JoinHostPort(d.alloc.IPs[n], strconv.Itoa(port))] = true
				}
			}
		}
	}
	return out
}
