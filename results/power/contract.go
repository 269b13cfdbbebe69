// Package power produces the dcgm-power v1 telemetry package that InferenceX's
// multinode power aggregator consumes: power/manifest.json, power/samples.csv
// and power/windows/*.json. The wire format (file names, the CSV header, field
// names, reason codes, the 3 s sample-gap rule, the validity verdict) is the
// contract srt-slurm's producer and InferenceX's consumer share; docs/power.md
// describes it. Only the producer's identity differs: slurmbench names itself.
//
// The package knows nothing about Slurm or plans: the driver hands it the
// endpoints to scrape, the GPUs it expects and the windows the benchmark will
// record, and gets back a verdict. It never fails a benchmark by itself; the
// caller decides what an invalid package means (telemetry.required).
package power

// SchemaVersion is the contract version every artifact carries.
const SchemaVersion = 1

// Producer names who wrote the package. The consumer checks this field; its
// owners must accept slurmbench's name to publish slurmbench's energy numbers.
const Producer = "slurmbench.dcgm-power"

// Fixed vocabulary of the contract.
const (
	PowerMetric = "DCGM_FI_DEV_POWER_USAGE"
	PowerUnit   = "W"
	PowerScope  = "gpu_device_board_as_reported_by_dcgm"
	ClockSource = "head_node_unix_clock"

	ManifestFile = "manifest.json"
	SamplesFile  = "samples.csv"
	WindowsDir   = "windows"

	// BenchmarkTypeSABench is the benchmark_type of SA-Bench windows.
	BenchmarkTypeSABench = "sa-bench"

	// WindowDirEnv tells a benchmark client where to write its window files.
	WindowDirEnv = "SRT_MEASUREMENT_WINDOW_DIR"
)

// MaxSampleGapSeconds is the largest gap between two samples of one GPU that a
// window may contain (including the samples that bracket it). It is fixed by
// the contract, not derived from the sampling interval.
const MaxSampleGapSeconds = 3.0

// collectCycleGraceSeconds is added to a scrape cycle's deadline beyond two
// request timeouts (connect and read are timed separately).
const collectCycleGraceSeconds = 1.0

// SamplesHeader is samples.csv's exact first line.
var SamplesHeader = []string{"schema_version", "timestamp_unix", "scrape_seq", "hostname", "gpu_index", "gpu_uuid", "power_w"}

// Reason is a stable, machine-readable reason code recorded in artifacts.
type Reason string

// The contract's reason codes (the subset this producer can emit, plus those
// the validator shares with the consumer).
const (
	ExporterStartupTimeout  Reason = "exporter_startup_timeout"
	ExporterLaunchFailed    Reason = "exporter_launch_failed"
	ExporterExited          Reason = "exporter_exited"
	EndpointTimeout         Reason = "endpoint_timeout"
	EndpointHTTPError       Reason = "endpoint_http_error"
	EndpointParseError      Reason = "endpoint_parse_error"
	EndpointResolutionFail  Reason = "endpoint_resolution_failed"
	PowerMetricMissing      Reason = "power_metric_missing"
	DuplicatePowerMetric    Reason = "duplicate_power_metric"
	SamplesCSVMissing       Reason = "samples_csv_missing"
	SamplesCSVHeader        Reason = "samples_csv_header_mismatch"
	SamplesCSVMalformed     Reason = "samples_csv_malformed"
	DuplicateSampleRow      Reason = "duplicate_sample_row"
	GPUIndexMissing         Reason = "gpu_index_missing"
	GPUUUIDMissing          Reason = "gpu_uuid_missing"
	InvalidPowerValue       Reason = "invalid_power_value"
	UnexpectedDevice        Reason = "unexpected_device"
	ExpectedDeviceMissing   Reason = "expected_device_missing"
	GPUUUIDChanged          Reason = "gpu_uuid_changed"
	MIGInstanceUnsupported  Reason = "mig_instance_unsupported"
	TimestampNonMonotonic   Reason = "timestamp_non_monotonic"
	ConflictingWorkerRoles  Reason = "conflicting_worker_roles"
	ConflictingHetGroups    Reason = "conflicting_het_groups"
	CollectorException      Reason = "collector_exception"
	CollectorInterrupted    Reason = "collector_interrupted"
	CollectorJoinTimeout    Reason = "collector_join_timeout"
	WindowMissing           Reason = "measurement_window_missing"
	WindowUnexpected        Reason = "measurement_window_unexpected"
	WindowDuplicate         Reason = "measurement_window_duplicate"
	WindowMalformed         Reason = "measurement_window_malformed"
	WindowArtifactPathBad   Reason = "measurement_window_artifact_path_invalid"
	WindowIncomplete        Reason = "measurement_window_incomplete"
	WindowResultMissing     Reason = "measurement_window_result_missing"
	WindowResultMismatch    Reason = "measurement_window_result_mismatch"
	WindowResultPathInvalid Reason = "measurement_window_result_path_invalid"
	WindowClockMismatch     Reason = "measurement_window_clock_mismatch"
	WindowNotBracketed      Reason = "measurement_window_not_bracketed"
	SampleGapExceeded       Reason = "sample_gap_exceeded"
)

// fatalLifecycle reasons make a package incomplete whatever else holds.
var fatalLifecycle = []Reason{ExporterExited, CollectorException, CollectorInterrupted, CollectorJoinTimeout}

// startupFailure reasons make a required package failed.
var startupFailure = []Reason{ExporterStartupTimeout, ExporterLaunchFailed, EndpointResolutionFail}

// reasons accumulates codes in first-seen order without duplicates, as the
// contract records them.
type reasons []Reason

func (rs *reasons) add(r ...Reason) {
	for _, x := range r {
		if !rs.has(x) {
			*rs = append(*rs, x)
		}
	}
}

func (rs reasons) has(r Reason) bool {
	for _, x := range rs {
		if x == r {
			return true
		}
	}
	return false
}

func (rs reasons) any(set []Reason) bool {
	for _, r := range set {
		if rs.has(r) {
			return true
		}
	}
	return false
}

// list returns the codes as a non-nil slice, so JSON writes [] not null.
func (rs reasons) list() []Reason {
	if rs == nil {
		return []Reason{}
	}
	return rs
}
