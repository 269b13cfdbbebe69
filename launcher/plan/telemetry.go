package plan

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
	// WindowDir, when set, is where windows are written instead of
	// <PowerDir>/windows, and WindowBenchmarkType the benchmark_type they
	// carry instead of sa-bench: what a client run inside a custom
	// benchmark is told through srtctl's SRT_MEASUREMENT_WINDOW_* variables.
	WindowDir           string `json:"window_dir,omitempty"`
	WindowBenchmarkType string `json:"window_benchmark_type,omitempty"`
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

// Measurement-window variables of srtctl's power contract: the directory
// the benchmark client writes windows into (srtctl sets it for every client
// when telemetry is on), and the two a custom workload's recipe sets for
// its own client (InferenceX's power recipes): what window result_path is
// relative to, and the benchmark_type windows carry.
const (
	EnvMeasurementWindowDir        = "SRT_MEASUREMENT_WINDOW_DIR"
	EnvMeasurementWindowResultRoot = "SRT_MEASUREMENT_WINDOW_RESULT_ROOT"
	EnvMeasurementWindowType       = "SRT_MEASUREMENT_WINDOW_BENCHMARK_TYPE"
)
