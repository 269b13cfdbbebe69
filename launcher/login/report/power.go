package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
)

// PowerRow is what a run's power package says (docs/power.md): whether it is
// publishable and, when it is, energy per output token and average board
// power per role for each point.
type PowerRow struct {
	Valid   bool            `json:"publication_valid"`
	Status  string          `json:"status"`
	Reasons []string        `json:"reason_codes,omitempty"`
	Points  []PowerPointRow `json:"points,omitempty"`
	// Error is set when the package could not be read at all.
	Error string `json:"error,omitempty"`
}

// PowerPointRow is one point's energy over its measurement window.
type PowerPointRow struct {
	Concurrency          int                `json:"concurrency"`
	WindowSeconds        float64            `json:"window_seconds"`
	JoulesPerOutputToken float64            `json:"joules_per_output_token"`
	AvgPowerW            map[string]float64 `json:"avg_power_w"` // per role
}

// powerSummary reads the run's power package; nil when the plan collects
// none.
func powerSummary(pl *plan.Plan, points []results.CollectedPoint) *PowerRow {
	t := pl.Telemetry
	if t == nil || t.PowerDir == "" { // a client's windows only (bench --url in a custom benchmark)
		return nil
	}
	m, err := power.ReadManifest(filepath.Join(t.PowerDir, power.ManifestFile))
	if err != nil {
		return &PowerRow{Error: err.Error()}
	}
	row := &PowerRow{Status: m.Status, Valid: m.PublicationValid != nil && *m.PublicationValid}
	for _, r := range m.Reasons {
		row.Reasons = append(row.Reasons, string(r))
	}
	if !row.Valid {
		return row
	}
	for _, cp := range points {
		if cp.Result == nil {
			continue
		}
		e, err := power.WindowEnergy(t.PowerDir, m, cp.Point.Concurrency, cp.Result.TotalOutputTokens)
		if err != nil {
			row.Error = err.Error()
			continue
		}
		pr := PowerPointRow{Concurrency: cp.Point.Concurrency, WindowSeconds: e.WindowSeconds,
			JoulesPerOutputToken: e.JoulesPerToken, AvgPowerW: map[string]float64{}}
		for role := range e.RoleGPUs {
			pr.AvgPowerW[role] = e.AvgPowerW(role)
		}
		row.Points = append(row.Points, pr)
	}
	sort.Slice(row.Points, func(i, j int) bool { return row.Points[i].Concurrency < row.Points[j].Concurrency })
	return row
}

// powerLines are the summary's power lines, the same in text and Markdown.
func (s Summary) powerLines() []string {
	p := s.Power
	if p == nil {
		return nil
	}
	if p.Error != "" && len(p.Points) == 0 && p.Status == "" {
		return []string{"power: no package: " + p.Error}
	}
	if !p.Valid {
		return []string{fmt.Sprintf("power: package %s, not publishable: %s", p.Status, strings.Join(p.Reasons, ", "))}
	}
	lines := []string{"power: package valid (dcgm-power v1, LOGS/power)"}
	for _, pt := range p.Points {
		roles := make([]string, 0, len(pt.AvgPowerW))
		for r := range pt.AvgPowerW {
			roles = append(roles, r)
		}
		sort.Strings(roles)
		var avg []string
		for _, r := range roles {
			avg = append(avg, fmt.Sprintf("%s %.1f W/GPU", r, pt.AvgPowerW[r]))
		}
		lines = append(lines, fmt.Sprintf("power c%d: %.4f J per output token over %.2f s; %s",
			pt.Concurrency, pt.JoulesPerOutputToken, pt.WindowSeconds, strings.Join(avg, ", ")))
	}
	return lines
}
