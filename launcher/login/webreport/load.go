// Package webreport writes what a person opens after a run: one
// self-contained report.html per run (and per matrix, and for a
// comparison) — what ran, each point's figures and goodput, the Pareto
// chart, per-point TTFT and ITL distributions from the per-request records,
// the power trace with each point's measurement window, the eval score,
// and for a failed run its failing layer, diagnosis and log tail. The page
// carries its CSS and SVG inline and no script: it opens offline, reads
// without JavaScript and prints.
//
// It reads only what a stage directory holds (summary.json, manifest.json,
// the staged results and their requests files, LOGS/power), so `slurmbench
// report DIR` rebuilds the page from a downloaded workflow artifact.
package webreport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/slurmbench/slurmbench/internal/readlimit"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/compare"
	"github.com/slurmbench/slurmbench/results/power"
)

// File names in a stage directory.
const (
	PageName    = "report.html"
	SummaryName = "summary.json"
)

// Bounds of what the page reads: a summary and a manifest are small, the
// power samples are downsampled (maxTracePoints a line).
const (
	maxSummaryBytes = 4 << 20
	maxManifestSize = 32 << 20
	maxTracePoints  = 1500
)

// Run is one run's page data.
type Run struct {
	Dir      string
	Summary  *report.Summary   // nil when the directory has no summary.json
	Manifest *results.Manifest // nil without manifest.json
	Set      *compare.ResultSet
	// Requests are each point's per-request records (absent: none kept).
	Requests map[results.PointID][]results.RequestRecord
	Power    *PowerTrace
	// Problems are what could not be read; the page lists them.
	Problems []string
}

// PowerTrace is the power package's samples summed per role over time,
// with each point's measurement window.
type PowerTrace struct {
	Origin  float64 // Unix seconds of the first sample
	Roles   map[string][][2]float64
	Windows []span
	Valid   bool
	Reasons []string
}

// Load reads a stage directory (or a run's results directory). Nothing in
// it is required: a failed run's page shows its failure and whatever else
// is there.
func Load(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the run for its report: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("reading the run for its report: %s is not a directory", dir)
	}
	r := &Run{Dir: dir, Requests: map[results.PointID][]results.RequestRecord{}}
	var sum report.Summary
	switch err := readJSON(filepath.Join(dir, SummaryName), maxSummaryBytes, &sum); {
	case err == nil:
		r.Summary = &sum
	case !errors.Is(err, fs.ErrNotExist):
		r.Problems = append(r.Problems, err.Error())
	}
	var m results.Manifest
	switch err := readJSON(filepath.Join(dir, results.ManifestName), maxManifestSize, &m); {
	case err == nil:
		r.Manifest = &m
	case !errors.Is(err, fs.ErrNotExist):
		r.Problems = append(r.Problems, err.Error())
	}
	if set, err := compare.LoadResultSet(dir); err == nil {
		r.Set = set
		for id, cp := range set.Points {
			recs, err := results.ReadRequests(results.RequestsPath(cp.Path))
			switch {
			case err == nil:
				r.Requests[id] = recs
			case !errors.Is(err, fs.ErrNotExist):
				r.Problems = append(r.Problems, err.Error())
			}
		}
	} else if r.Summary == nil {
		return nil, fmt.Errorf("reading the run for its report: %s has neither %s nor results: %w", dir, SummaryName, err)
	}
	if pt, err := loadPower(filepath.Join(dir, "LOGS", "power")); err == nil {
		r.Power = pt
	} else if !errors.Is(err, fs.ErrNotExist) {
		r.Problems = append(r.Problems, err.Error())
	}
	return r, nil
}

func readJSON(path string, limit int64, v any) error {
	b, err := readlimit.ReadFile(path, limit)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// loadPower sums the package's samples per role and scrape, downsampled.
func loadPower(dir string) (*PowerTrace, error) {
	m, err := power.ReadManifest(filepath.Join(dir, power.ManifestFile))
	if err != nil {
		return nil, err
	}
	pt := &PowerTrace{Roles: map[string][][2]float64{}, Valid: m.PublicationValid != nil && *m.PublicationValid}
	for _, r := range m.Reasons {
		pt.Reasons = append(pt.Reasons, string(r))
	}
	role := map[power.DeviceKey]string{}
	for _, d := range m.ExpectedDevices {
		if len(d.Assignments) > 0 {
			role[d.Key()] = d.Assignments[0].WorkerRole
		}
	}
	rows, _ := power.ReadSamples(filepath.Join(dir, power.SamplesFile))
	type key struct {
		seq  int
		role string
	}
	sums, at := map[key]float64{}, map[key]float64{}
	for _, row := range rows {
		rl := role[power.DeviceKey{Hostname: row.Hostname, GPUIndex: row.GPUIndex}]
		if rl == "" {
			rl = "other"
		}
		k := key{row.ScrapeSeq, rl}
		sums[k] += row.PowerW
		at[k] = max(at[k], row.TimestampUnix)
		if pt.Origin == 0 || row.TimestampUnix < pt.Origin {
			pt.Origin = row.TimestampUnix
		}
	}
	for k, w := range sums {
		pt.Roles[k.role] = append(pt.Roles[k.role], [2]float64{at[k] - pt.Origin, w})
	}
	for rl, pts := range pt.Roles {
		sort.Slice(pts, func(i, j int) bool { return pts[i][0] < pts[j][0] })
		pt.Roles[rl] = downsample(pts, maxTracePoints)
	}
	wins, _ := filepath.Glob(filepath.Join(dir, power.WindowsDir, "*.json"))
	for _, w := range wins {
		var rec power.WindowRecord
		if readJSON(w, 1<<20, &rec) != nil || rec.EndUnix == nil {
			continue
		}
		pt.Windows = append(pt.Windows, span{label: fmt.Sprintf("c%d", rec.Concurrency), start: rec.StartUnix - pt.Origin, end: *rec.EndUnix - pt.Origin})
	}
	sort.Slice(pt.Windows, func(i, j int) bool { return pt.Windows[i].start < pt.Windows[j].start })
	return pt, nil
}

// downsample keeps at most n points, evenly spaced by index (the first and
// the last always).
func downsample(pts [][2]float64, n int) [][2]float64 {
	if len(pts) <= n || n < 2 {
		return pts
	}
	out := make([][2]float64, 0, n)
	for i := range n {
		out = append(out, pts[i*(len(pts)-1)/(n-1)])
	}
	return out
}
