// Package pareto draws the trade-off people read off a benchmark sweep:
// throughput per GPU against interactivity (output tokens per second per
// user, 1000 / median TPOT in ms), one point per concurrency, one curve
// per result set. It writes the picture as SVG, the same data as CSV, and
// a Mermaid xychart GitHub renders in a step summary. Everything is plain
// Go text output: no plotting library, no cgo.
package pareto

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/compare"
)

// Point is one concurrency of a curve.
type CurvePoint struct {
	Label       string // the point's results.Point.Label, e.g. "ctx8/gen4 c32"
	Concurrency int
	// Interactivity is output tok/s per user: 1000 / median TPOT (ms).
	Interactivity float64
	// TputPerGPU is total tok/s over all GPUs (process_result.py's tput_per_gpu).
	TputPerGPU float64
}

// Curve is one result set's points, by rising interactivity.
type Curve struct {
	Name   string
	Points []CurvePoint
}

// FromSet builds the curve of a result set. Points without a median TPOT
// or throughput are left out and named in skipped.
func FromSet(name string, set *compare.ResultSet) (c Curve, skipped []string) {
	c.Name = name
	for _, cp := range set.Points {
		p, ok := pointOf(cp)
		if !ok {
			skipped = append(skipped, cp.Point.Label())
			continue
		}
		c.Points = append(c.Points, p)
	}
	c.sort()
	sort.Strings(skipped)
	return c, skipped
}

// FromCollected builds the curve of a run's collected points.
func FromCollected(name string, points []results.CollectedPoint) (c Curve, skipped []string) {
	c.Name = name
	for i := range points {
		p, ok := pointOf(&points[i])
		if !ok {
			skipped = append(skipped, points[i].Point.Label())
			continue
		}
		c.Points = append(c.Points, p)
	}
	c.sort()
	return c, skipped
}

func pointOf(cp *results.CollectedPoint) (CurvePoint, bool) {
	r := cp.Result
	tpot, ok := r.Metric("tpot")
	if !ok || !(tpot.Median > 0) || !r.Has("total_token_throughput") || !r.Has("output_throughput") {
		return CurvePoint{}, false
	}
	g, err := results.PerGPUThroughput(cp.Point, r.TotalTokenThroughput, r.OutputThroughput)
	if err != nil || math.IsNaN(g.TputPerGPU) || math.IsInf(g.TputPerGPU, 0) {
		return CurvePoint{}, false
	}
	return CurvePoint{Label: cp.Point.Label(), Concurrency: cp.Point.Concurrency,
		Interactivity: 1000 / tpot.Median, TputPerGPU: g.TputPerGPU}, true
}

func (c *Curve) sort() {
	sort.Slice(c.Points, func(i, j int) bool {
		a, b := c.Points[i], c.Points[j]
		if a.Interactivity != b.Interactivity {
			return a.Interactivity < b.Interactivity
		}
		return a.Label < b.Label
	})
}

// WriteCSV writes every curve's points, one line each: by side as given,
// then by concurrency and point label (the order a person reads a table
// in; the curves keep their drawing order, by interactivity).
func WriteCSV(w io.Writer, curves []Curve) error {
	var b strings.Builder
	b.WriteString("side,point,concurrency,interactivity_tok_s_per_user,tput_per_gpu_tok_s\n")
	for _, c := range curves {
		points := append([]CurvePoint(nil), c.Points...)
		sort.SliceStable(points, func(i, j int) bool {
			if points[i].Concurrency != points[j].Concurrency {
				return points[i].Concurrency < points[j].Concurrency
			}
			return points[i].Label < points[j].Label
		})
		for _, p := range points {
			fmt.Fprintf(&b, "%s,%s,%d,%s,%s\n", csvField(c.Name), csvField(p.Label), p.Concurrency, num(p.Interactivity, 3), num(p.TputPerGPU, 3))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func csvField(s string) string {
	if strings.ContainsAny(s, ",\"\n\r") {
		return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
	}
	return s
}

// num formats a finite float with prec decimals, ASCII only.
func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// WriteMermaid writes a Mermaid xychart of the curves for a GitHub step
// summary. Mermaid's xychart has a categorical x axis only, so the axis is
// the concurrencies every curve has, by falling concurrency (interactivity
// rises to the right, as on the SVG), and each curve is one line of
// tput/GPU; a data table under the chart gives both coordinates.
func WriteMermaid(w io.Writer, title string, curves []Curve) error {
	concs := commonConcurrencies(curves)
	var b strings.Builder
	b.WriteString("```mermaid\nxychart-beta\n")
	fmt.Fprintf(&b, "    title %q\n", title)
	cats := make([]string, len(concs))
	for i, c := range concs {
		cats[i] = strconv.Quote("c" + strconv.Itoa(c))
	}
	fmt.Fprintf(&b, "    x-axis \"concurrency (interactivity rises →)\" [%s]\n", strings.Join(cats, ", "))
	_, hi := yRange(curves)
	fmt.Fprintf(&b, "    y-axis \"total tok/s per GPU\" 0 --> %s\n", num(axisMax(hi), 0))
	for _, c := range curves {
		byConc := map[int]float64{}
		for _, p := range c.Points {
			byConc[p.Concurrency] = p.TputPerGPU
		}
		vals := make([]string, len(concs))
		for i, cc := range concs {
			vals[i] = num(byConc[cc], 1)
		}
		fmt.Fprintf(&b, "    line [%s]\n", strings.Join(vals, ", "))
	}
	b.WriteString("```\n\n")
	names := make([]string, len(curves))
	for i, c := range curves {
		names[i] = fmt.Sprintf("line %d: %s", i+1, c.Name)
	}
	b.WriteString(strings.Join(names, "; ") + ".\n\n")
	b.WriteString("| Side | Point | Interactivity (tok/s/user) | tput/GPU (tok/s) |\n| --- | --- | ---: | ---: |\n")
	for _, c := range curves {
		for _, p := range c.Points {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Name, p.Label, num(p.Interactivity, 1), num(p.TputPerGPU, 1))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commonConcurrencies are the concurrencies every curve has, falling.
func commonConcurrencies(curves []Curve) []int {
	count := map[int]int{}
	for _, c := range curves {
		seen := map[int]bool{}
		for _, p := range c.Points {
			if !seen[p.Concurrency] {
				seen[p.Concurrency] = true
				count[p.Concurrency]++
			}
		}
	}
	var out []int
	for conc, n := range count {
		if n == len(curves) {
			out = append(out, conc)
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(out)))
	return out
}

func yRange(curves []Curve) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, c := range curves {
		for _, p := range c.Points {
			lo, hi = math.Min(lo, p.TputPerGPU), math.Max(hi, p.TputPerGPU)
		}
	}
	if math.IsInf(lo, 1) {
		return 0, 1
	}
	return lo, hi
}

// tickStep is a round step (1, 2 or 5 × 10^k) that cuts [0, max] into
// about five intervals.
func tickStep(max float64) float64 {
	if !(max > 0) {
		return 1
	}
	raw := max / 5
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}

// axisMax is max rounded up to a whole tick.
func axisMax(max float64) float64 {
	step := tickStep(max)
	return math.Max(step, math.Ceil(max/step)*step)
}

// Save writes the picture to svgPath and its data to csvPath (either may
// be empty), each atomically, replacing an older copy.
func Save(svgPath, csvPath, title string, curves []Curve) error {
	if svgPath != "" {
		if err := atomicfile.Write(svgPath, atomicfile.Options{Overwrite: true}, func(w io.Writer) error {
			return WriteSVG(w, title, curves)
		}); err != nil {
			return fmt.Errorf("writing the Pareto picture: %w", err)
		}
	}
	if csvPath != "" {
		if err := atomicfile.Write(csvPath, atomicfile.Options{Overwrite: true}, func(w io.Writer) error {
			return WriteCSV(w, curves)
		}); err != nil {
			return fmt.Errorf("writing the Pareto data: %w", err)
		}
	}
	return nil
}

// File names of a run's picture and data, beside its results.
const (
	SVGName = "pareto.svg"
	CSVName = "pareto.csv"
)

// SaveRun writes a run's picture and data (one curve, named name) into dir
// as SVGName and CSVName and returns their paths and the Mermaid chart for
// the step summary.
func SaveRun(dir, name string, points []results.CollectedPoint) (svgPath, csvPath, mermaid string, err error) {
	c, _ := FromCollected(name, points)
	curves := []Curve{c}
	svgPath, csvPath = filepath.Join(dir, SVGName), filepath.Join(dir, CSVName)
	if err := Save(svgPath, csvPath, name+": tput/GPU vs interactivity", curves); err != nil {
		return "", "", "", err
	}
	var b strings.Builder
	_ = WriteMermaid(&b, name+": tput/GPU by concurrency", curves)
	return svgPath, csvPath, b.String(), nil
}
