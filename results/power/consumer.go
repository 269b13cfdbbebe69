package power

import (
	"fmt"
	"path/filepath"
	"slices"
)

// SrtSlurmProducer is the producer name InferenceX's multinode power
// aggregator pins: as published it refuses any other
// (the reference data's facts/power-aggregator/as-published, recorded from
// utils/aggregate_power_multinode.py at InferenceX 843c6254).
const SrtSlurmProducer = "srt-slurm.dcgm-power"

// The consumer's verdict reasons, as its sidecar power_validation_*.json
// names them (same facts).
const (
	// ConsumerRecomputeInvalid: the verdict recomputed from the package's
	// bytes is not publishable.
	ConsumerRecomputeInvalid = "package_recompute_invalid"
	// ConsumerVerdictMismatch: the manifest's stored publication_valid
	// differs from the recomputed one.
	ConsumerVerdictMismatch = "producer_verdict_mismatch"
)

// Verdict is what the workflow's consumer decides about a staged package:
// it does not trust the manifest's publication_valid, it recomputes it from
// the samples and windows and with the producer names it accepts.
type Verdict struct {
	Valid      bool
	Stored     bool // the manifest's publication_valid
	Recomputed bool
	Reasons    []string
	Failures   []string
}

// Recheck recomputes a package's verdict as the consumer does: the
// collector's own checks (samples, expected devices, every window's
// coverage, stray artifacts), the package complete, and a producer among
// accept (the first is the one the failure names). resultRoot is what the
// windows' result_path is relative to (the staged LOGS directory).
func Recheck(powerDir, resultRoot string, accept ...string) (Verdict, error) {
	m, err := ReadManifest(filepath.Join(powerDir, ManifestFile))
	if err != nil {
		return Verdict{}, fmt.Errorf("rechecking the power package: %w", err)
	}
	v := Verdict{Stored: m.PublicationValid != nil && *m.PublicationValid}
	producerOK := slices.Contains(accept, m.Producer)
	if !producerOK {
		want := ""
		if len(accept) > 0 {
			want = accept[0]
		}
		v.Failures = append(v.Failures, fmt.Sprintf("producer is '%s', expected '%s'", m.Producer, want))
	}
	rows, sampleReasons := ReadSamples(filepath.Join(powerDir, SamplesFile))
	observed := DeriveObserved(rows)
	deviceReasons := ValidateDevices(m.ExpectedDevices, observed)
	validations, artifactErrs := ValidateWindows(powerDir, resultRoot, m.ExpectedWindows, m.ExpectedDevices, observed)
	windowsValid := len(validations) > 0
	for _, w := range validations {
		windowsValid = windowsValid && w.CoverageValid
	}
	v.Recomputed = producerOK && m.Status == StatusComplete && len(sampleReasons) == 0 &&
		len(deviceReasons) == 0 && windowsValid && len(artifactErrs) == 0
	if !v.Recomputed {
		v.Reasons = append(v.Reasons, ConsumerRecomputeInvalid)
	}
	if v.Stored != v.Recomputed {
		v.Reasons = append(v.Reasons, ConsumerVerdictMismatch)
		v.Failures = append(v.Failures, fmt.Sprintf("stored publication_valid=%s, recomputed=%s", pyBool(v.Stored), pyBool(v.Recomputed)))
	}
	v.Valid = v.Stored && v.Recomputed
	return v, nil
}

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// PointEnergy is one point's energy figures in the consumer's aggregate
// fields (agg_*.json: total_gpu_energy_j, joules_per_*, prefill_* and
// decode_*).
type PointEnergy struct {
	AvgPowerW            float64 // per GPU over the window
	AvgTotalGPUPowerW    float64 // all GPUs together
	TotalJoules          float64
	JoulesPerQuery       float64 // per completed request
	JoulesPerInputToken  float64
	JoulesPerOutputToken float64
	JoulesPerTotalToken  float64
	PrefillJoules        float64
	PrefillAvgPowerW     float64
	PrefillJoulesPerIn   float64 // prefill energy per input token
	DecodeJoules         float64
	DecodeAvgPowerW      float64
	DecodeJoulesPerOut   float64 // decode energy per output token
}

// Point derives the aggregate's energy figures from the window's energy and
// the point's completed requests and input tokens (the output tokens are
// e's).
func (e Energy) Point(completed, inputTokens int) PointEnergy {
	div := func(a float64, b int) float64 {
		if b <= 0 {
			return 0
		}
		return a / float64(b)
	}
	gpus := 0
	for _, n := range e.RoleGPUs {
		gpus += n
	}
	p := PointEnergy{TotalJoules: e.TotalJoules,
		JoulesPerQuery:       div(e.TotalJoules, completed),
		JoulesPerInputToken:  div(e.TotalJoules, inputTokens),
		JoulesPerOutputToken: div(e.TotalJoules, e.OutputTokens),
		JoulesPerTotalToken:  div(e.TotalJoules, inputTokens+e.OutputTokens),
		PrefillJoules:        e.RoleJoules["prefill"], PrefillAvgPowerW: e.AvgPowerW("prefill"),
		PrefillJoulesPerIn: div(e.RoleJoules["prefill"], inputTokens),
		DecodeJoules:       e.RoleJoules["decode"], DecodeAvgPowerW: e.AvgPowerW("decode"),
		DecodeJoulesPerOut: div(e.RoleJoules["decode"], e.OutputTokens),
	}
	if e.WindowSeconds > 0 {
		p.AvgTotalGPUPowerW = e.TotalJoules / e.WindowSeconds
		p.AvgPowerW = div(p.AvgTotalGPUPowerW, gpus)
	}
	return p
}
