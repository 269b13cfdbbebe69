package webreport

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/compare"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// MatrixRun is one matrix point's stage directory and the allocation that
// served it.
type MatrixRun struct {
	Name       string // the point's name (its recipe and topology)
	Dir        string // its stage directory
	Allocation string // which allocation (group) served it, e.g. "1 of 3, job 42"
}

// MatrixGroup is one allocation: its points and GPU-hours.
type MatrixGroup struct {
	Name     string
	Job      string
	Points   int
	GPUs     int
	GPUHours float64
}

// Matrix is a matrix run's page: every point's curve on one Pareto chart,
// the points' figures grouped by allocation, and the GPU-hours the
// allocations used and what sharing them saved against one allocation per
// point (SavedGPUHours, the caller's estimate).
type Matrix struct {
	Title         string
	Runs          []MatrixRun
	Groups        []MatrixGroup
	SavedGPUHours float64
}

// WriteMatrix writes m's page to path (atomically).
func WriteMatrix(path string, m Matrix) error {
	v := view{Kind: "matrix", Title: m.Title, Outcome: "matrix", OutcomeCSS: "unknown", Columns: pointColumns}
	var curves []pareto.Curve
	used := 0.0
	for _, g := range m.Groups {
		used += g.GPUHours
		v.Groups = append(v.Groups, group{Name: g.Name, Allocation: g.Job, Points: g.Points, GPUHours: fmt.Sprintf("%.2f (%d GPUs)", g.GPUHours, g.GPUs)})
	}
	if len(m.Groups) > 0 {
		v.Ran = append(v.Ran, kv{"GPU-hours used", fmt.Sprintf("%.2f over %d allocations", used, len(m.Groups))},
			kv{"GPU-hours saved by sharing allocations", fmt.Sprintf("%.2f", m.SavedGPUHours)})
	}
	for _, mr := range m.Runs {
		r, err := Load(mr.Dir)
		if err != nil {
			v.Problems = append(v.Problems, fmt.Sprintf("%s: %v", mr.Name, err))
			continue
		}
		v.Problems = append(v.Problems, r.Problems...)
		if r.Set == nil {
			continue
		}
		for _, id := range sortedIDs(r.Set.Points) {
			v.Points = append(v.Points, pointRow(mr.Name+" ("+mr.Allocation+")", r.Set.Points[id], energyText(r, id)))
		}
		c, _ := pareto.FromSet(mr.Name, r.Set)
		curves = append(curves, c)
	}
	if len(curves) > 0 {
		v.Pareto = paretoSVG(m.Title, curves)
	}
	return writeView(path, v)
}

// WriteCompare writes the comparison page of two result sets to path:
// both curves on one Pareto chart, both sides' points, and the regression
// gate's verdict ("" when no gate ran).
func WriteCompare(path string, base, cand *compare.ResultSet, verdict string) error {
	v := view{Kind: "comparison", Title: "baseline against candidate", Outcome: "compared", OutcomeCSS: "unknown", Columns: pointColumns, Verdict: verdict}
	v.Ran = []kv{{"Baseline", base.Dir}, {"Candidate", cand.Dir}}
	var curves []pareto.Curve
	for _, side := range []struct {
		name string
		set  *compare.ResultSet
	}{{"baseline", base}, {"candidate", cand}} {
		for _, id := range sortedIDs(side.set.Points) {
			cp := side.set.Points[id]
			v.Points = append(v.Points, pointRow(side.name, cp, ""))
			// Each side's per-request records, when it kept them: the
			// distributions behind the two medians the table compares.
			recs, err := results.ReadRequests(results.RequestsPath(cp.Path))
			if err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					v.Problems = append(v.Problems, err.Error())
				}
				continue
			}
			label := side.name + " " + id.Label()
			ttft, itl, failed := distributions(recs)
			v.Dists = append(v.Dists, dist{Label: label, Requests: len(recs), Failed: failed,
				TTFT: histogram(ttft, "TTFT "+label, "ms"), ITL: histogram(itl, "ITL "+label+" (per request, mean)", "ms")})
		}
		c, _ := pareto.FromSet(side.name, side.set)
		curves = append(curves, c)
	}
	v.Pareto = paretoSVG("baseline and candidate", curves)
	switch {
	case verdict == "":
	case verdict == "pass":
		v.OutcomeCSS, v.Outcome = "ok", "gate passed"
	default:
		v.OutcomeCSS, v.Outcome = "fail", "gate failed"
	}
	return writeView(path, v)
}

func writeView(path string, v view) error {
	if err := atomicfile.Write(path, atomicfile.Options{Overwrite: true}, func(w io.Writer) error { return pageTmpl.Execute(w, v) }); err != nil {
		return fmt.Errorf("writing the report %s: %w", filepath.Base(path), err)
	}
	return nil
}
