package power

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// Energy is a package's energy over one window, as InferenceX's aggregator
// integrates it: per GPU, trapezoids over the samples inside the window with
// the boundary values linearly interpolated, summed per role.
type Energy struct {
	Concurrency    int
	WindowSeconds  float64
	TotalJoules    float64
	RoleJoules     map[string]float64 // prefill, decode, agg
	RoleGPUs       map[string]int
	OutputTokens   int
	JoulesPerToken float64 // per output token
}

// AvgPowerW is the mean board power of one role's GPUs over the window.
func (e Energy) AvgPowerW(role string) float64 {
	if e.RoleGPUs[role] == 0 || e.WindowSeconds <= 0 {
		return 0
	}
	return e.RoleJoules[role] / e.WindowSeconds / float64(e.RoleGPUs[role])
}

// WindowEnergy integrates a valid package over the completed window of one
// concurrency. outputTokens is the point's total_output_tokens.
func WindowEnergy(powerDir string, m *Manifest, concurrency, outputTokens int) (Energy, error) {
	if m.PublicationValid == nil || !*m.PublicationValid {
		return Energy{}, fmt.Errorf("the power package is not valid: %v", m.Reasons)
	}
	var win *WindowRecord
	for _, v := range m.WindowValidations {
		if v.Concurrency == concurrency && v.WindowFile != nil {
			b, err := readlimit.ReadFile(filepath.Join(powerDir, filepath.FromSlash(*v.WindowFile)), 1<<20)
			if err != nil {
				return Energy{}, err
			}
			var w WindowRecord
			if err := json.Unmarshal(b, &w); err != nil {
				return Energy{}, fmt.Errorf("window %s: %w", *v.WindowFile, err)
			}
			win = &w
		}
	}
	if win == nil || win.EndUnix == nil {
		return Energy{}, fmt.Errorf("no completed window for concurrency %d", concurrency)
	}
	rows, rs := ReadSamples(filepath.Join(powerDir, SamplesFile))
	if len(rs) > 0 {
		return Energy{}, fmt.Errorf("samples: %v", rs)
	}
	e := Energy{Concurrency: concurrency, WindowSeconds: *win.EndUnix - win.StartUnix,
		RoleJoules: map[string]float64{}, RoleGPUs: map[string]int{}, OutputTokens: outputTokens}
	groups := byDevice(rows)
	for _, d := range m.ExpectedDevices {
		if len(d.Assignments) == 0 {
			continue
		}
		j := integrate(groups[d.Key()], win.StartUnix, *win.EndUnix)
		role := d.Assignments[0].WorkerRole
		e.RoleJoules[role] += j
		e.RoleGPUs[role]++
		e.TotalJoules += j
	}
	if outputTokens > 0 {
		e.JoulesPerToken = e.TotalJoules / float64(outputTokens)
	}
	return e, nil
}

// integrate is the trapezoid over [start, end] with interpolated boundaries.
func integrate(rows []SampleRow, start, end float64) float64 {
	pts := make([][2]float64, 0, len(rows))
	for _, r := range rows {
		pts = append(pts, [2]float64{r.TimestampUnix, r.PowerW})
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i][0] < pts[j][0] })
	clipped := [][2]float64{{start, interpolate(pts, start)}}
	for _, p := range pts {
		if p[0] > start && p[0] < end {
			clipped = append(clipped, p)
		}
	}
	clipped = append(clipped, [2]float64{end, interpolate(pts, end)})
	j := 0.0
	for i := 1; i < len(clipped); i++ {
		j += (clipped[i][0] - clipped[i-1][0]) * (clipped[i][1] + clipped[i-1][1]) / 2
	}
	return j
}

func interpolate(pts [][2]float64, t float64) float64 {
	if len(pts) == 0 {
		return 0
	}
	i := sort.Search(len(pts), func(i int) bool { return pts[i][0] >= t })
	switch {
	case i < len(pts) && pts[i][0] == t:
		return pts[i][1]
	case i == 0:
		return pts[0][1]
	case i == len(pts):
		return pts[len(pts)-1][1]
	}
	a, b := pts[i-1], pts[i]
	return a[1] + (b[1]-a[1])*(t-a[0])/(b[0]-a[0])
}
