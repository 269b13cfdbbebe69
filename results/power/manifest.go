package power

import (
	"encoding/json"
	"fmt"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// Manifest lifecycle statuses.
const (
	StatusStarting   = "starting"
	StatusRunning    = "running"
	StatusComplete   = "complete"
	StatusIncomplete = "incomplete"
	StatusFailed     = "failed"
)

// Worker roles a GPU can be assigned to.
const (
	RolePrefill = "prefill"
	RoleDecode  = "decode"
	RoleAgg     = "agg"
)

// Assignment is one worker process's claim on a GPU.
type Assignment struct {
	WorkerRole    string `json:"worker_role"`
	WorkerIndex   int    `json:"worker_index"`
	WorkerProcess int    `json:"worker_process"`
	HetGroup      *int   `json:"het_group"`
}

// ExpectedDevice is a GPU the run is expected to sample.
type ExpectedDevice struct {
	Hostname    string       `json:"hostname"`
	GPUIndex    int          `json:"gpu_index"`
	Assignments []Assignment `json:"assignments"`
}

// Key returns the device's key.
func (d ExpectedDevice) Key() DeviceKey { return DeviceKey{d.Hostname, d.GPUIndex} }

// ExpectedWindow is one measured point the benchmark is expected to record.
type ExpectedWindow struct {
	BenchmarkType string `json:"benchmark_type"`
	Concurrency   int    `json:"concurrency"`
}

// WindowValidation is the coverage audit of one expected window.
type WindowValidation struct {
	BenchmarkType string             `json:"benchmark_type"`
	Concurrency   int                `json:"concurrency"`
	WindowFile    *string            `json:"window_file"`
	CoverageValid bool               `json:"power_coverage_valid"`
	Reasons       []Reason           `json:"reason_codes"`
	MaxGapSeconds map[string]float64 `json:"per_device_max_sample_gap_seconds"`
}

// ArtifactError is a stale, malformed, duplicate or unsafe window file.
type ArtifactError struct {
	Path    string   `json:"path"`
	Reasons []Reason `json:"reason_codes"`
}

// Exporter says exactly which exporter produced the samples.
type Exporter struct {
	Image       string  `json:"container_image_resolved"`
	ImageSHA256 *string `json:"container_image_sha256"`
	Port        int     `json:"port"`
	Command     string  `json:"command"`
}

// Manifest is power/manifest.json. Field order is the contract's.
type Manifest struct {
	SchemaVersion     int                `json:"schema_version"`
	Producer          string             `json:"producer"`
	ProducerVersion   string             `json:"producer_version"`
	ProducerGitCommit *string            `json:"producer_git_commit"`
	SourceMetric      string             `json:"source_metric"`
	Unit              string             `json:"unit"`
	PowerScope        string             `json:"power_scope"`
	TimestampSource   string             `json:"timestamp_source"`
	JobID             string             `json:"job_id"`
	RunName           string             `json:"run_name"`
	SampleInterval    float64            `json:"sample_interval_seconds"`
	RequestTimeout    float64            `json:"request_timeout_seconds"`
	MaxScrapeDuration *float64           `json:"max_scrape_duration_seconds"`
	Required          bool               `json:"required"`
	StartedAt         float64            `json:"started_at_unix"`
	StoppedAt         *float64           `json:"stopped_at_unix"`
	Status            string             `json:"status"`
	PublicationValid  *bool              `json:"publication_valid"`
	Exporter          Exporter           `json:"dcgm_exporter"`
	ExpectedDevices   []ExpectedDevice   `json:"expected_devices"`
	ObservedDevices   []ObservedDevice   `json:"observed_devices"`
	ExpectedWindows   []ExpectedWindow   `json:"expected_windows"`
	ScrapeCount       int                `json:"scrape_count"`
	SampleRowCount    int                `json:"sample_row_count"`
	WindowValidations []WindowValidation `json:"window_validations"`
	ArtifactErrors    []ArtifactError    `json:"artifact_errors"`
	Reasons           []Reason           `json:"reason_codes"`
}

func writeManifest(path string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the power manifest: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), atomicfile.Options{Overwrite: true}); err != nil {
		return fmt.Errorf("writing the power manifest: %w", err)
	}
	return nil
}

// ReadManifest reads a manifest written by this package.
func ReadManifest(path string) (*Manifest, error) {
	b, err := readlimit.ReadFile(path, 64<<20)
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return &m, nil
}
