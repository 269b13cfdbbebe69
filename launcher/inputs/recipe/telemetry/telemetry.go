// Package telemetry is a recipe's telemetry block, srtctl's
// TelemetryConfig: its fields as the recipe writes them, their values with
// srtctl's defaults applied (Settings), and the block's checks. Package
// recipe decodes the block into Config and runs Validate with what of the
// rest of the recipe the checks read.
package telemetry

import (
	"math"
	"path"
	"strings"
)

// Config is srtctl's `telemetry` block (its TelemetryConfig): DCGM power
// samples over the benchmark's measurement windows. Provider is the corpus's
// newer spelling (`provider: dcgm-power`), which srtctl c88ef731 refuses as
// an unknown field; it is read so the refusal can name it.
type Config struct {
	Enabled                     bool      `yaml:"enabled"`
	Provider                    string    `yaml:"provider"`
	DCGMExporter                *Exporter `yaml:"dcgm_exporter"`
	DefaultFrequency            *float64  `yaml:"default_frequency"`
	StorageSubdir               *string   `yaml:"storage_subdir"`
	Required                    bool      `yaml:"required"`
	StartupTimeoutSeconds       *float64  `yaml:"startup_timeout_seconds"`
	RequestTimeoutSeconds       *float64  `yaml:"request_timeout_seconds"`
	CollectorJoinTimeoutSeconds *float64  `yaml:"collector_join_timeout_seconds"`
	// Schema 2 (srtctl 2.x's TelemetryConfig): CollectIntervalMS replaces
	// default_frequency (a period in seconds); the reader fills
	// DefaultFrequency = CollectIntervalMS/1000, which Settings reads.
	CollectIntervalMS *int              `yaml:"collect_interval_ms" schema:"2"`
	CPUPowerExporter  *CPUPowerExporter `yaml:"cpu_power_exporter" schema:"2"`
	ClockSyncCheck    *bool             `yaml:"clock_sync_check" schema:"2"`
}

// Exporter is the DCGM exporter each worker node runs.
type Exporter struct {
	ContainerImage *string `yaml:"container_image"`
	Port           *int    `yaml:"port"`
	Command        *string `yaml:"command"`
}

// CPUPowerExporter is telemetry.cpu_power_exporter (CpuPowerExporterConfig):
// its presence turns head-node scraping of a per-node CPU power exporter on.
type CPUPowerExporter struct {
	Port   *int   `yaml:"port"`   // default 9405
	Source string `yaml:"source"` // auto (default), acpi, dcgm
}

// srtctl's TelemetryConfig defaults and its power validator's limits.
const (
	telemetryMaxSampleGapSeconds = 3.0
	telemetryCycleGraceSeconds   = 1.0
)

// Settings are the block's values with srtctl's defaults applied.
type Settings struct {
	Provider              string  `json:"provider"`
	Required              bool    `json:"required"`
	ExporterImage         string  `json:"exporter_image"`
	ExporterPort          int     `json:"exporter_port"`
	ExporterCommand       string  `json:"exporter_command,omitempty"`
	FrequencySeconds      float64 `json:"default_frequency"`
	StorageSubdir         string  `json:"storage_subdir"`
	StartupTimeoutSeconds float64 `json:"startup_timeout_seconds"`
	RequestTimeoutSeconds float64 `json:"request_timeout_seconds"`
	JoinTimeoutSeconds    float64 `json:"collector_join_timeout_seconds"`
	// CPUExporterPort and CPUExporterSource are the CPU power leg's, when
	// cpu_power_exporter is set (port 0: off).
	CPUExporterPort   int    `json:"cpu_power_exporter_port,omitempty"`
	CPUExporterSource string `json:"cpu_power_exporter_source,omitempty"`
}

// srtctl 2.x's CpuPowerExporterConfig defaults.
const (
	defaultCPUExporterPort   = 9405
	defaultCPUExporterSource = "auto"
)

// Settings resolves the block; ok is false when telemetry is not enabled.
func (t *Config) Settings() (s Settings, ok bool) {
	if t == nil || !t.Enabled {
		return s, false
	}
	s = Settings{Provider: "dcgm-power", Required: t.Required, FrequencySeconds: 1.0, StorageSubdir: "power",
		StartupTimeoutSeconds: 30.0, RequestTimeoutSeconds: 2.0}
	if t.Provider != "" {
		s.Provider = t.Provider
	}
	if e := t.DCGMExporter; e != nil {
		s.ExporterImage, s.ExporterPort, s.ExporterCommand = deref(e.ContainerImage), derefInt(e.Port), deref(e.Command)
	}
	setF := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	setF(&s.FrequencySeconds, t.DefaultFrequency)
	if t.CollectIntervalMS != nil {
		s.FrequencySeconds = float64(*t.CollectIntervalMS) / 1000
	}
	if c := t.CPUPowerExporter; c != nil {
		s.CPUExporterPort, s.CPUExporterSource = defaultCPUExporterPort, defaultCPUExporterSource
		if c.Port != nil {
			s.CPUExporterPort = *c.Port
		}
		if c.Source != "" {
			s.CPUExporterSource = c.Source
		}
	}
	setF(&s.StartupTimeoutSeconds, t.StartupTimeoutSeconds)
	setF(&s.RequestTimeoutSeconds, t.RequestTimeoutSeconds)
	if t.StorageSubdir != nil {
		s.StorageSubdir = *t.StorageSubdir
	}
	// srtctl: None derives the join budget from the request timeout.
	s.JoinTimeoutSeconds = 2*(2*s.RequestTimeoutSeconds+telemetryCycleGraceSeconds) + 2.0
	setF(&s.JoinTimeoutSeconds, t.CollectorJoinTimeoutSeconds)
	return s, true
}

// Recipe is what of the rest of the recipe the block's checks read.
type Recipe struct {
	SchemaVersion   int
	BenchmarkType   string // benchmark.type
	ClientPlacement string // benchmark.client_placement
	// DedicatedInfraNode is infra.etcd_nats_dedicated_node.
	DedicatedInfraNode bool
	Concurrencies      []int // benchmark.concurrencies, as written
}

// Validate checks the block field by field as srtctl's schema and its
// _validate_dcgm_power do: types and non-finite numbers always (its
// marshmallow fields refuse nan and inf), the rest when enabled. add
// reports one malformed field; a nil t has nothing to check.
func (t *Config) Validate(r Recipe, add func(field, format string, args ...any)) {
	if t == nil {
		return
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{
		{"default_frequency", t.DefaultFrequency}, {"startup_timeout_seconds", t.StartupTimeoutSeconds},
		{"request_timeout_seconds", t.RequestTimeoutSeconds}, {"collector_join_timeout_seconds", t.CollectorJoinTimeoutSeconds},
	} {
		if f.v != nil && (math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			add("telemetry."+f.name, "%v is not a finite number", *f.v)
		}
	}
	if e := t.DCGMExporter; e != nil {
		if e.ContainerImage == nil {
			add("telemetry.dcgm_exporter.container_image", "required")
		}
		if e.Port == nil {
			add("telemetry.dcgm_exporter.port", "required")
		}
	}
	s, ok := t.Settings()
	if !ok {
		return
	}
	if t.DCGMExporter == nil {
		// srtctl 2.x then runs the cluster's default_gpu_exporter: the
		// profile's [telemetry] exporter, which planning requires.
		if r.SchemaVersion < 2 {
			add("telemetry.dcgm_exporter", "required when telemetry is enabled")
		}
	} else {
		if t.DCGMExporter.ContainerImage != nil && strings.TrimSpace(s.ExporterImage) == "" {
			add("telemetry.dcgm_exporter.container_image", "must not be empty")
		}
		if t.DCGMExporter.Port != nil && (s.ExporterPort < 1 || s.ExporterPort > 65535) {
			add("telemetry.dcgm_exporter.port", "%d is not in 1..65535", s.ExporterPort)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"default_frequency", s.FrequencySeconds}, {"startup_timeout_seconds", s.StartupTimeoutSeconds}, {"request_timeout_seconds", s.RequestTimeoutSeconds}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			add("telemetry."+f.name, "must be finite and positive, got %v", f.v)
		}
	}
	switch ms := t.CollectIntervalMS; {
	case ms != nil && *ms <= 0:
		add("telemetry.collect_interval_ms", "must be positive, got %d", *ms)
	case ms != nil && s.FrequencySeconds > telemetryMaxSampleGapSeconds:
		add("telemetry.collect_interval_ms", "%d ms exceeds the %v s largest sample gap the power validator accepts; every window would fail", *ms, telemetryMaxSampleGapSeconds)
	case s.FrequencySeconds > telemetryMaxSampleGapSeconds:
		add("telemetry.default_frequency", "%v s exceeds the %v s largest sample gap the power validator accepts; every window would fail", s.FrequencySeconds, telemetryMaxSampleGapSeconds)
	}
	if c := t.CPUPowerExporter; c != nil {
		if s.CPUExporterPort < 1 || s.CPUExporterPort > 65535 {
			add("telemetry.cpu_power_exporter.port", "%d is not in 1..65535", s.CPUExporterPort)
		} else if s.CPUExporterPort == s.ExporterPort {
			add("telemetry.cpu_power_exporter.port", "%d collides with telemetry.dcgm_exporter.port; both run on every worker node", s.CPUExporterPort)
		}
		switch s.CPUExporterSource {
		case "auto", "acpi", "dcgm":
		default:
			add("telemetry.cpu_power_exporter.source", "%q is not one of auto, acpi, dcgm", s.CPUExporterSource)
		}
	}
	// srtctl c88ef731 wants strictly more than two worst-case collector
	// cycles; the newer form (provider: dcgm-power, the corpus's) sets
	// exactly two (10 s for a 2 s request timeout), which still lets the
	// collector finish its cycle and the final one, so it is accepted.
	worst := 2 * (2*s.RequestTimeoutSeconds + telemetryCycleGraceSeconds)
	// Schema 2 is the newer form too (it retired provider).
	enough := s.JoinTimeoutSeconds > worst || ((t.Provider != "" || r.SchemaVersion >= 2) && s.JoinTimeoutSeconds >= worst)
	if !enough || math.IsInf(s.JoinTimeoutSeconds, 0) {
		add("telemetry.collector_join_timeout_seconds", "%v must be finite and more than two collector cycles (2 × (2 × request_timeout_seconds + 1) = %v)", s.JoinTimeoutSeconds, worst)
	}
	if t.Provider != "" && t.Provider != "dcgm-power" {
		add("telemetry.provider", "%q is not a provider slurmbench has (dcgm-power)", t.Provider)
	}
	if !safeRelativeSubpath(s.StorageSubdir) {
		add("telemetry.storage_subdir", "%q must be a relative path below the run's log directory", s.StorageSubdir)
	}
	if r.SchemaVersion >= 2 {
		// srt-slurm 2.x: custom (and agentic) benchmarks have no
		// concurrency windows, so telemetry samples the whole serve session;
		// the client may run on any node, the allocation's clocks being
		// NTP-synchronised (TelemetryConfig.clock_sync_check). InferenceX's
		// v2.2.1 tree enables telemetry on such recipes, including beside a
		// dedicated infra node, which srt-slurm's later schema.py refuses.
		switch typ := r.BenchmarkType; typ {
		case "sa-bench":
		case "custom", "manual":
			return
		default:
			add("telemetry.enabled", "requires benchmark.type sa-bench, custom or manual, not %q", typ)
			return
		}
	} else {
		if typ := r.BenchmarkType; typ != "sa-bench" {
			add("telemetry.enabled", "requires benchmark.type: sa-bench, not %q", typ)
		}
		if p := r.ClientPlacement; p != "" && p != "head" {
			add("telemetry.enabled", "requires benchmark.client_placement: head (samples and windows share the head node's clock), not %q", p)
		}
		if r.DedicatedInfraNode {
			add("telemetry.enabled", "requires infra.etcd_nats_dedicated_node: false (a dedicated infra node moves the head off the benchmark's clock)")
		}
	}
	seen := map[int]bool{}
	concs := r.Concurrencies
	for _, c := range concs {
		if seen[c] || c <= 0 {
			concs = nil
			break
		}
		seen[c] = true
	}
	if len(concs) == 0 {
		add("telemetry.enabled", "requires a non-empty list of unique positive benchmark.concurrencies")
	}
}

// safeRelativeSubpath is srtctl's _is_safe_relative_subpath.
func safeRelativeSubpath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return false
		}
	}
	return path.Clean(p) != "."
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(i *int) int {
	if i == nil {
		return 0
	}
	return *i
}
