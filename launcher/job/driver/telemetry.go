package driver

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strconv"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results/power"
)

// startTelemetry starts the exporter steps and the collector when the plan
// asks for power telemetry. It does not wait: the exporters come up while the
// engines load, and awaitTelemetry checks coverage after the health gate.
// An eval-only run measures nothing, so it collects nothing.
func (d *driver) startTelemetry(ctx context.Context) error {
	t := d.plan.Telemetry
	if t == nil {
		return nil
	}
	if d.plan.Benchmark.Type == "" {
		d.logf("power telemetry: no benchmark to measure (eval only), not collecting")
		return nil
	}
	for _, p := range d.plan.Processes {
		if p.Role == plan.RoleTelemetry {
			if err := d.startStep(ctx, p); err != nil {
				return err
			}
		}
	}
	set := power.Settings{
		PowerDir: t.PowerDir, ResultRoot: t.ResultRoot, JobID: d.alloc.JobID, RunName: d.plan.Name,
		Interval:        seconds(t.IntervalSeconds),
		StartupTimeout:  seconds(t.StartupTimeoutSeconds),
		RequestTimeout:  seconds(t.RequestTimeoutSeconds),
		JoinTimeout:     seconds(t.JoinTimeoutSeconds),
		Required:        t.Required,
		ExporterImage:   t.ExporterImage,
		ExporterPort:    t.Port,
		ExporterCommand: t.ExporterCommand,
		ProducerVersion: d.opts.ProducerVersion,
		ProducerCommit:  d.opts.ProducerCommit,
		Client:          d.opts.HTTPClient,
	}
	for _, n := range t.Nodes {
		set.Endpoints = append(set.Endpoints, power.Endpoint{
			Hostname: d.alloc.Hosts[n],
			URL:      "http://" + net.JoinHostPort(d.alloc.IPs[n], strconv.Itoa(t.Port)) + t.Path,
		})
	}
	set.ExpectedDevices = expectedDevices(t.Devices, d.alloc.Hosts)
	for _, w := range t.Windows {
		set.ExpectedWindows = append(set.ExpectedWindows, power.ExpectedWindow{BenchmarkType: w.BenchmarkType, Concurrency: w.Concurrency})
	}
	s, err := power.NewSession(set)
	if err == nil {
		err = s.Start(ctx)
	}
	if err != nil {
		if t.Required {
			return &failure{class: diagnose.PowerTelemetry, code: exitcode.Benchmark, msg: "starting required power telemetry: " + err.Error()}
		}
		d.logf("power telemetry not collected: %v", err)
		return nil
	}
	d.power = s
	d.logf("power telemetry: polling %d exporters on port %d for %d GPUs every %gs into %s",
		len(set.Endpoints), t.Port, len(set.ExpectedDevices), t.IntervalSeconds, t.PowerDir)
	return nil
}

// awaitTelemetry waits until one scrape covered every expected GPU. Without
// coverage a required package cannot be valid, so the benchmark is not run.
func (d *driver) awaitTelemetry(ctx context.Context) error {
	if d.power == nil {
		return nil
	}
	ready, err := d.power.WaitReady(ctx)
	if err != nil {
		return err
	}
	if ready {
		d.logf("power telemetry: every GPU reported")
		return nil
	}
	msg := fmt.Sprintf("power telemetry did not cover every GPU within %gs", d.plan.Telemetry.StartupTimeoutSeconds)
	if d.plan.Telemetry.Required {
		return &failure{class: diagnose.PowerTelemetry, code: exitcode.Benchmark, msg: "required " + msg + "; the benchmark was not run"}
	}
	d.logf("%s; the benchmark runs, the power package will be invalid", msg)
	return nil
}

// finishTelemetry commits the terminal manifest before any step is stopped,
// so the last samples bracket the last window. It returns a failure only
// when telemetry must fail the job (required and invalid, or a collector
// that did not stop).
func (d *driver) finishTelemetry(interrupted bool) *failure {
	if d.power == nil {
		return nil
	}
	out, err := d.power.Stop(interrupted)
	if err != nil {
		d.logf("power telemetry: %v", err)
	}
	d.logf("power telemetry: status %s, publication valid %v, reasons %v", out.Status, out.PublicationValid, out.Reasons)
	if out.FailJob {
		return &failure{class: diagnose.PowerTelemetry, code: exitcode.Benchmark,
			msg: fmt.Sprintf("power telemetry is required and not publishable: %v", out.Reasons)}
	}
	return nil
}

// telemetryExited records an exporter that exited: the package becomes
// invalid, the run goes on.
func (d *driver) telemetryExited(s *step) {
	d.logf("%s on %s exited with code %d: the power package will be invalid", s.proc.Name, s.host, s.code)
	if d.power != nil {
		d.power.RecordReason(power.ExporterExited)
	}
}

// expectedDevices names each worker GPU by host, one entry per GPU with
// every worker that claims it.
func expectedDevices(devs []plan.TelemetryDevice, hosts []string) []power.ExpectedDevice {
	byKey := map[power.DeviceKey]*power.ExpectedDevice{}
	var keys []power.DeviceKey
	for _, dv := range devs {
		k := power.DeviceKey{Hostname: hosts[dv.Node], GPUIndex: dv.GPU}
		e, ok := byKey[k]
		if !ok {
			e = &power.ExpectedDevice{Hostname: k.Hostname, GPUIndex: k.GPUIndex}
			byKey[k] = e
			keys = append(keys, k)
		}
		e.Assignments = append(e.Assignments, power.Assignment{WorkerRole: dv.Role, WorkerIndex: dv.Worker, WorkerProcess: dv.Rank})
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Hostname != keys[j].Hostname {
			return keys[i].Hostname < keys[j].Hostname
		}
		return keys[i].GPUIndex < keys[j].GPUIndex
	})
	out := make([]power.ExpectedDevice, 0, len(keys))
	for _, k := range keys {
		out = append(out, *byKey[k])
	}
	return out
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
