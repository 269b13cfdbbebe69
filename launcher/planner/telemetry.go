package planner

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/shellwords"
	"github.com/slurmbench/slurmbench/launcher/plan"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/telemetry"
)

// defaultExporterCommand is srtctl's DCGM exporter command; {port} is the
// exporter's port.
const defaultExporterCommand = "dcgm-exporter --collect-interval=100 --address :{port}"

// defaultExporterPort is the port when neither recipe nor profile names one.
const defaultExporterPort = 9401

// telemetry plans power telemetry from the recipe's telemetry block, or the
// profile's [telemetry] default for a recipe without one (its exporter
// image, port and command also for a block that names no dcgm_exporter,
// as srtctl runs the cluster's default_gpu_exporter then): one exporter step
// over every worker node, the GPUs each worker occupies, and one window per
// benchmark point. A custom benchmark (srt-slurm 2.x measures those too)
// expects one window of its own type per concurrency it is asked for
// (CONC_LIST, else benchmark.concurrencies; none without either), written by its client where
// SRT_MEASUREMENT_WINDOW_DIR says, result paths relative to the logs
// (/logs). Nothing is planned for an eval-only run.
func (b *builder) telemetry() error {
	r, p, pl := b.r, b.p, b.plan
	set, on := r.Telemetry.Settings()
	if !on && p.Telemetry.Enabled && pl.Benchmark.Type == "sa-bench" {
		// The profile's default is a recipe block with srtctl's defaults.
		image, port := p.Telemetry.ExporterImage, p.Telemetry.Port
		set, on = (&telemetry.Config{Enabled: true, Required: p.Telemetry.Required,
			DCGMExporter: &telemetry.Exporter{ContainerImage: &image, Port: &port}}).Settings()
	}
	if r.Telemetry == nil || r.Telemetry.DCGMExporter == nil {
		// No exporter of the recipe's own: the cluster's default stands in
		// whole, its command too (srtslurm.yaml's default_gpu_exporter,
		// the profile's [telemetry] exporter; a recipe's exporter without
		// a command takes srtctl's, not the cluster's).
		set.ExporterCommand = p.Telemetry.ExporterCommand
	}
	custom := pl.Benchmark.Type == "custom"
	if !on || pl.Benchmark.Type != "sa-bench" && !custom {
		return nil
	}
	if set.ExporterPort == 0 {
		set.ExporterPort = cmp.Or(p.Telemetry.Port, defaultExporterPort)
	}
	t := &plan.Telemetry{
		Required: set.Required, IntervalSeconds: set.FrequencySeconds,
		StartupTimeoutSeconds: set.StartupTimeoutSeconds, RequestTimeoutSeconds: set.RequestTimeoutSeconds,
		JoinTimeoutSeconds: set.JoinTimeoutSeconds, Port: set.ExporterPort, Path: "/metrics",
		PowerDir:   filepath.Join(pl.Layout.Logs, filepath.FromSlash(set.StorageSubdir)),
		ResultRoot: filepath.Dir(pl.Benchmark.ResultDir),
	}
	nodes := map[int]bool{}
	for _, proc := range pl.Processes {
		switch proc.Role {
		case plan.RolePrefill, plan.RoleDecode, plan.RoleAgg:
		default:
			continue
		}
		for i, n := range proc.Nodes {
			nodes[n] = true
			gpus := proc.GPUs
			if len(gpus) == 0 {
				gpus = make([]int, b.gpn)
				for g := range gpus {
					gpus[g] = g
				}
			}
			for _, g := range gpus {
				t.Devices = append(t.Devices, plan.TelemetryDevice{Node: n, GPU: g, Role: string(proc.Role), Worker: proc.Worker, Rank: proc.Rank + i})
			}
		}
	}
	for n := range nodes {
		t.Nodes = append(t.Nodes, n)
	}
	sort.Ints(t.Nodes)
	for _, pt := range pl.Points {
		t.Windows = append(t.Windows, plan.TelemetryWindow{BenchmarkType: "sa-bench", Concurrency: pt.Concurrency})
	}
	if custom {
		if err := b.customTelemetry(t, set.StorageSubdir); err != nil {
			return err
		}
	}

	proc := plan.Process{Name: "telemetry_dcgm_exporter", Role: plan.RoleTelemetry, Nodes: t.Nodes, Container: true,
		Mounts: b.mounts(), Ports: map[string]int{"metrics": t.Port}, Log: b.logPath("telemetry_dcgm_exporter"),
		Env: map[string]string{}}
	for k, v := range p.Env.Set {
		proc.Env[k] = v // the profile's env reaches every step
	}
	if w := p.Telemetry.MockWatts; w > 0 {
		gpus := make([]string, b.gpn)
		for g := range gpus {
			gpus[g] = strconv.Itoa(g)
		}
		proc.Argv = []string{pl.Binary, "mock-dcgm-exporter", "--listen", "0.0.0.0:" + strconv.Itoa(t.Port),
			"--gpus", strings.Join(gpus, ","), "--watts", strconv.FormatFloat(w, 'f', -1, 64)}
		t.ExporterImage = "slurmbench mock-dcgm-exporter"
	} else {
		image := cmp.Or(set.ExporterImage, p.Telemetry.ExporterImage)
		if image == "" {
			return b.fail("telemetry.dcgm_exporter.container_image", "no DCGM exporter image: name one in the recipe or as [telemetry] exporter_image in profile %s", p.Path)
		}
		if ref, ok := p.Containers[image]; ok {
			image = ref
		}
		proc.Image = image
		t.ExporterImage = image
		cmdline := cmp.Or(set.ExporterCommand, defaultExporterCommand)
		cmdline = strings.ReplaceAll(cmdline, "{port}", strconv.Itoa(t.Port))
		argv, err := shellwords.Split(cmdline)
		if err != nil {
			return b.fail("telemetry.dcgm_exporter.command", "%q %v", cmdline, err)
		}
		proc.Argv = argv
		if strings.Contains(cmdline, plan.ConfigsMount+"/") && p.Paths.Configs == "" {
			// The sample's exporters read their counters file from srtctl's
			// configs/ (-f /configs/dcgm-counters-noprof.csv).
			b.plan.Recipe.Warnings = append(slices.Clip(b.plan.Recipe.Warnings), fmt.Sprintf(
				"the DCGM exporter's command %q reads %s, and nothing is mounted there: set paths.configs (a workflow or matrix run stages it)", cmdline, plan.ConfigsMount))
		}
	}
	t.ExporterCommand = plan.QuoteArgv(proc.Argv)
	b.add(proc)
	pl.Telemetry = t
	return nil
}

// customTelemetry sets a custom benchmark's expected windows and tells its
// client where to write them (srtctl's _get_measurement_window_env; the
// recipe's benchmark.env, applied last in srtctl, wins).
func (b *builder) customTelemetry(t *plan.Telemetry, subdir string) error {
	var bench *plan.Process
	for i := range b.plan.Processes {
		if b.plan.Processes[i].Role == plan.RoleBenchmark {
			bench = &b.plan.Processes[i]
		}
	}
	if bench == nil {
		return nil
	}
	// The workload's own concurrencies, derived once (benchargs.CustomConcurrencies);
	// else the recipe's benchmark.concurrencies, as srtctl's windows go.
	concs := b.r.Benchmark.Concurrencies.Values
	if c := b.plan.Benchmark.Custom; c != nil && len(c.Concurrencies) > 0 {
		concs = c.Concurrencies
	}
	// Without concurrencies (InferenceX's workflow gives CONC_LIST at run
	// time) no window is expected: the samples cover the serve session and
	// the package cannot be published.
	typ := cmp.Or(bench.Env[plan.EnvMeasurementWindowType], "custom")
	for _, c := range concs {
		t.Windows = append(t.Windows, plan.TelemetryWindow{BenchmarkType: typ, Concurrency: c})
	}
	t.ResultRoot = b.plan.Layout.Logs
	if _, ok := bench.Env[plan.EnvMeasurementWindowDir]; !ok {
		bench.Env[plan.EnvMeasurementWindowDir] = "/logs/" + filepath.ToSlash(subdir) + "/windows"
	}
	return nil
}
