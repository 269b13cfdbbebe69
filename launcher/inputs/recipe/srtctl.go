package recipe

import (
	"errors"
	"fmt"
)

// SrtctlRevision is the srt-slurm commit whose behaviour slurmbench
// reproduces and whose refusals it shares.
const SrtctlRevision = "c88ef731"

// ErrSrtctlRefuses marks a recipe srtctl itself refuses: a field its schema
// does not have (marshmallow's "Unknown field."), so no srtctl run defines
// what it would do.
var ErrSrtctlRefuses = errors.New("srtctl " + SrtctlRevision + " refuses it too")

// SrtctlRefusalError names the field srtctl refuses.
type SrtctlRefusalError struct{ Err Error }

func (e *SrtctlRefusalError) Error() string { return e.Err.Error() }
func (e *SrtctlRefusalError) Unwrap() error { return ErrSrtctlRefuses }

// srtctlUnknownFields are keys slurmbench reads (so it can name them) that
// srtctl's schema at SrtctlRevision does not have: its dry-run refuses every
// recipe that sets one. Each reason says what srtctl has instead.
var srtctlUnknownFields = []struct {
	field  string
	set    func(*Recipe) bool
	reason string
}{
	{"telemetry.provider", func(r *Recipe) bool { return r.Telemetry != nil && r.Telemetry.Provider != "" },
		"its TelemetryConfig has no provider field (DCGM power is the only collector it has; remove the key)"},
	{"benchmark.tokenizer_mode", func(r *Recipe) bool { return r.Benchmark.TokenizerMode != "" },
		"its BenchmarkConfig has no tokenizer_mode field (only custom_tokenizer)"},
	{"benchmark.aiperf_server_metrics", func(r *Recipe) bool { return r.Benchmark.AIPerfMetrics != nil },
		"its BenchmarkConfig has no aiperf_server_metrics field"},
}

// beyondSrtctl are fields of srtctlUnknownFields that slurmbench runs
// anyway, with what it does: a recipe that sets one is planned, with a
// warning that srtctl would refuse it. A feature that starts running one of
// the others adds it here (and the corpus test then expects its recipes to
// render).
var beyondSrtctl = map[string]string{ //nolint:gosec // recipe field names and notes, not credentials
	"benchmark.tokenizer_mode": "slurmbench passes it to the sa-bench client's --tokenizer-mode",
	"telemetry.provider":       "slurmbench collects DCGM power into the dcgm-power package (docs/power.md); dcgm-power is the only provider",
}

// BeyondSrtctl reports whether slurmbench runs a field srtctl refuses.
func BeyondSrtctl(field string) bool { return beyondSrtctl[field] != "" }

// srtctlRefuses returns a *SrtctlRefusalError for the first field srtctl's
// schema rejects and slurmbench does not run; one it runs anyway is a
// warning.
func (r *Recipe) srtctlRefuses() error {
	for _, f := range srtctlUnknownFields {
		if !f.set(r) {
			continue
		}
		if does := beyondSrtctl[f.field]; does != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s:%d: %s: srtctl %s refuses this recipe (%s); slurmbench plans it: %s", r.Path, r.Line(f.field), r.display(f.field), SrtctlRevision, f.reason, does))
			continue
		}
		return &SrtctlRefusalError{Error{File: r.Path, Line: r.Line(f.field), Field: r.display(f.field),
			Msg: ErrSrtctlRefuses.Error() + ": " + f.reason}}
	}
	return nil
}

// RefusedField names the field of a typed refusal — a feature slurmbench
// does not run yet, a field srtctl refuses too, or "duplicate key" for a
// key set twice — or returns "" for any other error. A recipe refused so is
// not wrong by slurmbench's own rules: corpus counts and migrate --verify
// set it aside rather than fail on it.
func RefusedField(err error) string {
	var ue *UnsupportedError
	var se *SrtctlRefusalError
	var de *DuplicateKeyError
	switch {
	case errors.As(err, &ue):
		return ue.Err.Field
	case errors.As(err, &se):
		return se.Err.Field
	case errors.As(err, &de):
		return "duplicate key"
	}
	return ""
}
