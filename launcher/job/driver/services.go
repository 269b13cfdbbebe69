package driver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// startServices starts the recipe's services of one start phase, in plan
// (declaration) order, as srtctl's services stage does: each service's
// instances are launched, then its readiness probe must pass on every one
// of them before the next service launches. A service whose process exits
// before it is ready fails the run at once, critical or not.
func (d *driver) startServices(ctx context.Context, start string) error {
	var group []plan.Process
	flush := func() error {
		for _, p := range group {
			if err := d.startStep(ctx, p); err != nil {
				return err
			}
		}
		for _, p := range group {
			if p.Ready != nil {
				if err := d.waitService(ctx, p); err != nil {
					return err
				}
			}
		}
		group = nil
		return nil
	}
	for _, p := range d.byRole(plan.RoleService) {
		if p.Start != start {
			continue
		}
		if p.Worker == 0 { // the first instance of the next service
			if err := flush(); err != nil {
				return err
			}
		}
		group = append(group, p)
	}
	return flush()
}

// serviceLogChunk bounds one read of a service log by a log probe.
const serviceLogChunk = 1 << 20

// waitService polls p's readiness probe every interval until it passes or
// its timeout runs out, watching p's own step and every other one.
func (d *driver) waitService(ctx context.Context, p plan.Process) error {
	r := p.Ready
	s := d.stepOf(p.Name)
	timeout := time.Duration(r.TimeoutSeconds) * time.Second
	interval := time.Duration(r.IntervalSeconds) * time.Second
	if timeout <= 0 {
		timeout = d.opts.ReadyTimeout
	}
	if interval <= 0 {
		interval = 500 * time.Millisecond
	}
	probe, what, err := d.serviceProbe(p)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		ok, err := probe(ctx)
		if ok {
			d.logf("%s ready (%s)", p.Name, what)
			return nil
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("%s was not ready within %s (%s)", p.Name, timeout, what)
			if err != nil {
				msg += ": " + err.Error()
			}
			return &failure{class: diagnose.HealthDeadline, step: s, code: exitcode.Health, msg: msg}
		}
		t := time.NewTimer(interval)
		select {
		case <-s.done:
			t.Stop()
			// One last look: it may have logged the pattern and exited.
			if ok, _ := probe(ctx); ok && r.Pattern != "" {
				d.logf("%s ready (%s), then exited with code %d", p.Name, what, s.code)
				return nil
			}
			return d.died(s, diagnose.ExitedBeforeHealthy, exitcode.Engine, "before it was ready ("+what+")")
		case o := <-d.exited:
			t.Stop()
			return d.died(o, diagnose.ExitedBeforeHealthy, exitcode.Engine, "while "+p.Name+" was starting")
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// serviceProbe returns one attempt of p's probe and its description.
func (d *driver) serviceProbe(p plan.Process) (func(context.Context) (bool, error), string, error) {
	r := p.Ready
	if r.Pattern != "" {
		re, err := regexp.Compile(r.Pattern)
		if err != nil {
			return nil, "", fmt.Errorf("process %s: readiness pattern: %w", p.Name, err)
		}
		lw := &logWatch{path: p.Log, re: re}
		return func(context.Context) (bool, error) { return lw.scan() }, fmt.Sprintf("log %s matches /%s/", p.Log, r.Pattern), nil
	}
	addr := net.JoinHostPort(d.alloc.IPs[r.Node], strconv.Itoa(r.Port))
	if r.Path == "" {
		return func(ctx context.Context) (bool, error) {
			c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return false, err
			}
			c.Close()
			return true, nil
		}, "tcp " + addr, nil
	}
	url := "http://" + addr + r.Path
	return func(ctx context.Context) (bool, error) {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := d.opts.HTTPClient.Do(req)
		if err != nil {
			return false, err
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		if r.Status != 0 && resp.StatusCode != r.Status || r.Status == 0 && resp.StatusCode/100 != 2 {
			return false, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return true, nil
	}, fmt.Sprintf("GET %s -> %d", url, r.Status), nil
}

// logWatch searches a growing log for a pattern line by line, reading
// only what was appended since the last look, at most serviceLogChunk at a
// time; a partial last line is kept (bounded) for the next look.
type logWatch struct {
	path    string
	re      *regexp.Regexp
	offset  int64
	partial []byte
}

func (w *logWatch) scan() (bool, error) {
	f, err := os.Open(w.path)
	if err != nil {
		return false, err // not written yet
	}
	defer f.Close()
	for {
		buf := make([]byte, serviceLogChunk)
		n, err := f.ReadAt(buf, w.offset)
		w.offset += int64(n)
		data := append(w.partial, buf[:n]...)
		lines := bytes.Split(data, []byte("\n"))
		w.partial = append([]byte(nil), lines[len(lines)-1]...)
		if len(w.partial) > serviceLogChunk {
			w.partial = w.partial[len(w.partial)-serviceLogChunk:]
		}
		for _, l := range lines[:len(lines)-1] {
			if w.re.Match(l) {
				return true, nil
			}
		}
		if err == io.EOF || n < len(buf) {
			// srtctl matches lines; a line still being written counts
			// once the pattern is in it.
			return w.re.Match(w.partial), nil
		}
		if err != nil {
			return false, err
		}
	}
}
