package compare

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
)

// energyMetrics compare a valid power package's figures (docs/power.md):
// rows appear only for points where either side has one, so comparisons of
// runs without telemetry are unchanged.
var energyMetrics = []metric{
	{key: "joules_per_output_token", label: "energy/out tok", unit: "J/tok", inline: " J/tok", prec: 4},
	{key: "prefill_avg_power_w", label: "prefill power", unit: "W/GPU", inline: " W", prec: 1},
	{key: "decode_avg_power_w", label: "decode power", unit: "W/GPU", inline: " W", prec: 1},
	{key: "agg_avg_power_w", label: "agg power", unit: "W/GPU", inline: " W", prec: 1},
}

func energyValue(e *power.Energy, key string) (float64, bool) {
	switch key {
	case "joules_per_output_token":
		return e.JoulesPerToken, e.OutputTokens > 0
	case "prefill_avg_power_w":
		return e.AvgPowerW(power.RolePrefill), e.RoleGPUs[power.RolePrefill] > 0
	case "decode_avg_power_w":
		return e.AvgPowerW(power.RoleDecode), e.RoleGPUs[power.RoleDecode] > 0
	case "agg_avg_power_w":
		return e.AvgPowerW(power.RoleAgg), e.RoleGPUs[power.RoleAgg] > 0
	}
	return 0, false
}

// loadEnergy reads the power package of a staged directory (LOGS/power) or
// a run's logs (power/) and integrates each point's window. An invalid
// package gives no figures and a note saying why.
func (s *ResultSet) loadEnergy() {
	var dir string
	for _, d := range []string{filepath.Join(s.Dir, "LOGS", "power"), filepath.Join(s.Dir, "power")} {
		if _, err := os.Stat(filepath.Join(d, power.ManifestFile)); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		return
	}
	m, err := power.ReadManifest(filepath.Join(dir, power.ManifestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		s.Notes = append(s.Notes, "power package: "+err.Error())
		return
	}
	if m.PublicationValid == nil || !*m.PublicationValid {
		s.Notes = append(s.Notes, fmt.Sprintf("power package %s is not publishable (%v): no energy figures", m.Status, m.Reasons))
		return
	}
	s.Energy = map[results.PointID]*power.Energy{}
	for p, cp := range s.Points {
		e, err := power.WindowEnergy(dir, m, p.Concurrency, cp.Result.TotalOutputTokens)
		if err != nil {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: no energy figures: %v", p.Label(), err))
			continue
		}
		s.Energy[p] = &e
	}
}
