package launcher

import (
	"cmp"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/recipe"
)

// RoleTelemetry is a power exporter step: one per worker node, never
// critical (an exporter that exits makes the power package invalid, not the
// benchmark).
const RoleTelemetry Role = "telemetry"

// Telemetry is a run's power telemetry (docs/power.md): the exporter steps
// are ordinary processes of RoleTelemetry; this says what the driver's
// collector polls, expects and writes.
type Telemetry struct {
	Required              bool    `json:"required"`
	IntervalSeconds       float64 `json:"interval_seconds"`
	StartupTimeoutSeconds float64 `json:"startup_timeout_seconds"`
	RequestTimeoutSeconds float64 `json:"request_timeout_seconds"`
	JoinTimeoutSeconds    float64 `json:"join_timeout_seconds"`
	// Port is each exporter's port on its node; Path its metrics path.
	Port int    `json:"port"`
	Path string `json:"path"`
	// ExporterImage and ExporterCommand are recorded in the manifest as
	// what produced the samples.
	ExporterImage   string `json:"exporter_image"`
	ExporterCommand string `json:"exporter_command"`
	// PowerDir is <logs>/<storage_subdir>; ResultRoot what the windows'
	// result_path values are relative to (the benchmark's results root).
	PowerDir   string `json:"power_dir"`
	ResultRoot string `json:"result_root"`
	// Nodes are the plan node indices scraped (every worker node).
	Nodes   []int             `json:"nodes"`
	Devices []TelemetryDevice `json:"devices"`
	// Windows are the benchmark points expected to record a window.
	Windows []TelemetryWindow `json:"windows"`
}

// TelemetryDevice is one GPU a worker occupies.
type TelemetryDevice struct {
	Node   int    `json:"node"`
	GPU    int    `json:"gpu"`
	Role   string `json:"role"` // prefill, decode or agg
	Worker int    `json:"worker"`
	Rank   int    `json:"rank"`
}

// TelemetryWindow is one expected measurement window.
type TelemetryWindow struct {
	BenchmarkType string `json:"benchmark_type"`
	Concurrency   int    `json:"concurrency"`
}

// defaultExporterCommand is srtctl's DCGM exporter command; {port} is the
// exporter's port.
const defaultExporterCommand = "dcgm-exporter --collect-interval=100 --address :{port}"

// defaultExporterPort is the port when neither recipe nor profile names one.
const defaultExporterPort = 9401

// telemetry plans power telemetry from the recipe's telemetry block, or the
// profile's [telemetry] default for a recipe without one: one exporter step
// over every worker node, the GPUs each worker occupies, and one window per
// benchmark point. Nothing is planned for an eval-only or custom run (no
// SA-Bench window to measure).
func (b *builder) telemetry() error {
	r, p, plan := b.r, b.p, b.plan
	set, on := r.Telemetry.Settings()
	if !on && p.Telemetry.Enabled && plan.Benchmark.Type == "sa-bench" {
		// The profile's default is a recipe block with srtctl's defaults.
		image, port := p.Telemetry.ExporterImage, p.Telemetry.Port
		set, on = (&recipe.Telemetry{Enabled: true, Required: p.Telemetry.Required,
			DCGMExporter: &recipe.TelemetryExporter{ContainerImage: &image, Port: &port}}).Settings()
	}
	if !on || plan.Benchmark.Type != "sa-bench" {
		return nil
	}
	if set.ExporterPort == 0 {
		set.ExporterPort = cmp.Or(p.Telemetry.Port, defaultExporterPort)
	}
	t := &Telemetry{
		Required: set.Required, IntervalSeconds: set.FrequencySeconds,
		StartupTimeoutSeconds: set.StartupTimeoutSeconds, RequestTimeoutSeconds: set.RequestTimeoutSeconds,
		JoinTimeoutSeconds: set.JoinTimeoutSeconds, Port: set.ExporterPort, Path: "/metrics",
		PowerDir:   filepath.Join(plan.Layout.Logs, filepath.FromSlash(set.StorageSubdir)),
		ResultRoot: filepath.Dir(plan.Benchmark.ResultDir),
	}
	nodes := map[int]bool{}
	for _, proc := range plan.Processes {
		switch proc.Role {
		case RolePrefill, RoleDecode, RoleAgg:
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
				t.Devices = append(t.Devices, TelemetryDevice{Node: n, GPU: g, Role: string(proc.Role), Worker: proc.Worker, Rank: proc.Rank + i})
			}
		}
	}
	for n := range nodes {
		t.Nodes = append(t.Nodes, n)
	}
	sort.Ints(t.Nodes)
	for _, pt := range plan.Points {
		t.Windows = append(t.Windows, TelemetryWindow{BenchmarkType: "sa-bench", Concurrency: pt.Concurrency})
	}

	proc := Process{Name: "telemetry_dcgm_exporter", Role: RoleTelemetry, Nodes: t.Nodes, Container: true,
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
		proc.Argv = []string{plan.Binary, "mock-dcgm-exporter", "--listen", "0.0.0.0:" + strconv.Itoa(t.Port),
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
		argv, err := SplitCommand(cmdline)
		if err != nil {
			return b.fail("telemetry.dcgm_exporter.command", "%q %v", cmdline, err)
		}
		proc.Argv = argv
	}
	t.ExporterCommand = QuoteArgv(proc.Argv)
	b.add(proc)
	plan.Telemetry = t
	return nil
}
