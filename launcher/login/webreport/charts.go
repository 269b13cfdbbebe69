package webreport

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"
	"strings"
)

// The charts are inline SVG written here: no script, no fonts or styles
// from outside the file, so the page reads offline and prints.

// chartGeometry is one chart's plot area inside its view box.
type chartGeometry struct {
	width, height            float64
	left, top, right, bottom float64
}

var small = chartGeometry{width: 440, height: 240, left: 56, top: 28, right: 424, bottom: 196}
var wide = chartGeometry{width: 900, height: 300, left: 64, top: 28, right: 884, bottom: 250}

func (g chartGeometry) x(v, max float64) float64 { return g.left + v/max*(g.right-g.left) }
func (g chartGeometry) y(v, max float64) float64 { return g.bottom - v/max*(g.bottom-g.top) }

func svgOpen(b *strings.Builder, g chartGeometry, class, label string) {
	fmt.Fprintf(b, `<svg class="%s" role="img" aria-label="%s" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" font-family="sans-serif" font-size="11">`,
		class, template.HTMLEscapeString(label), n0(g.width), n0(g.height), n0(g.width), n0(g.height))
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`)
}

// axes draws the frame, the grid and the tick labels of both axes.
func axes(b *strings.Builder, g chartGeometry, xMax, yMax float64, xLabel, yLabel string) {
	for _, x := range ticks(xMax) {
		px := g.x(x, xMax)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e4e4e4"/>`, n1(px), n1(g.top), n1(px), n1(g.bottom))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, n1(px), n1(g.bottom+14), tickText(x))
	}
	for _, y := range ticks(yMax) {
		py := g.y(y, yMax)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e4e4e4"/>`, n1(g.left), n1(py), n1(g.right), n1(py))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`, n1(g.left-6), n1(py), tickText(y))
	}
	fmt.Fprintf(b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#444"/>`, n1(g.left), n1(g.top), n1(g.right-g.left), n1(g.bottom-g.top))
	fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle">%s</text>`, n1((g.left+g.right)/2), n1(g.bottom+32), template.HTMLEscapeString(xLabel))
	fmt.Fprintf(b, `<text transform="translate(14 %s) rotate(-90)" text-anchor="middle">%s</text>`, n1((g.top+g.bottom)/2), template.HTMLEscapeString(yLabel))
}

// histogram draws values (one bar a bin, about 24 bins from 0) with the
// median and p99 marked; an empty set says so.
func histogram(values []float64, label, unit string) template.HTML {
	var b strings.Builder
	g := small
	svgOpen(&b, g, "chart histogram", label)
	if len(values) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">no per-request data</text></svg>`, n1(g.width/2), n1(g.height/2))
		return ownSVG(b.String())
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	hi := sorted[len(sorted)-1]
	xMax := niceMax(hi)
	const bins = 24
	counts := make([]int, bins)
	for _, v := range sorted {
		i := min(int(v/xMax*bins), bins-1)
		counts[max(i, 0)]++
	}
	top := 0
	for _, c := range counts {
		top = max(top, c)
	}
	yMax := niceMax(float64(top))
	axes(&b, g, xMax, yMax, label+" ("+unit+")", "requests")
	w := (g.right - g.left) / bins
	for i, c := range counts {
		if c == 0 {
			continue
		}
		x := g.left + float64(i)*w
		y := g.y(float64(c), yMax)
		fmt.Fprintf(&b, `<rect class="bar" x="%s" y="%s" width="%s" height="%s" fill="#4c78a8"><title>%s–%s %s: %d</title></rect>`,
			n1(x+0.5), n1(y), n1(w-1), n1(g.bottom-y), tickText(float64(i)*xMax/bins), tickText(float64(i+1)*xMax/bins), unit, c)
	}
	for _, m := range []struct {
		name, anchor string
		q, dx        float64
	}{{"p50", "end", 0.5, -3}, {"p99", "start", 0.99, 3}} {
		v := quantile(sorted, m.q)
		x := g.x(v, xMax)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#d62728" stroke-dasharray="4 3"/>`, n1(x), n1(g.top), n1(x), n1(g.bottom))
		fmt.Fprintf(&b, `<text class="marker" x="%s" y="%s" fill="#d62728" text-anchor="%s">%s %s</text>`, n1(x+m.dx), n1(g.top-6), m.anchor, m.name, tickText(round(v, 2)))
	}
	b.WriteString("</svg>")
	return ownSVG(b.String())
}

// series is one line of a time chart.
type series struct {
	name   string
	color  string
	points [][2]float64 // seconds from the chart's origin, value
}

// span is a shaded interval of a time chart (a measurement window).
type span struct {
	label      string
	start, end float64
}

// timeChart draws lines over time with shaded, labelled spans.
func timeChart(ss []series, spans []span, label, yLabel string) template.HTML {
	var b strings.Builder
	g := wide
	svgOpen(&b, g, "chart timeseries", label)
	xHi, yHi := 0.0, 0.0
	for _, s := range ss {
		for _, p := range s.points {
			xHi, yHi = math.Max(xHi, p[0]), math.Max(yHi, p[1])
		}
	}
	for _, sp := range spans {
		xHi = math.Max(xHi, sp.end)
	}
	if xHi == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle">no samples</text></svg>`, n1(g.width/2), n1(g.height/2))
		return ownSVG(b.String())
	}
	xMax, yMax := niceMax(xHi), niceMax(yHi)
	for _, sp := range spans {
		x0, x1 := g.x(math.Max(sp.start, 0), xMax), g.x(sp.end, xMax)
		fmt.Fprintf(&b, `<rect class="window" x="%s" y="%s" width="%s" height="%s" fill="#f2c14e" fill-opacity="0.25"><title>%s</title></rect>`,
			n1(x0), n1(g.top), n1(math.Max(x1-x0, 1)), n1(g.bottom-g.top), template.HTMLEscapeString(sp.label))
		fmt.Fprintf(&b, `<text class="window-label" x="%s" y="%s" text-anchor="middle">%s</text>`, n1((x0+x1)/2), n1(g.top+12), template.HTMLEscapeString(sp.label))
	}
	axes(&b, g, xMax, yMax, "seconds since the first sample", yLabel)
	for i, s := range ss {
		pts := make([]string, len(s.points))
		for j, p := range s.points {
			pts[j] = n1(g.x(p[0], xMax)) + "," + n1(g.y(p[1], yMax))
		}
		fmt.Fprintf(&b, `<polyline class="line" fill="none" stroke="%s" stroke-width="1.5" points="%s"><title>%s</title></polyline>`, s.color, strings.Join(pts, " "), template.HTMLEscapeString(s.name))
		fmt.Fprintf(&b, `<text class="legend" x="%s" y="%s" fill="%s" text-anchor="end">%s</text>`, n1(g.right-6), n1(g.bottom-8-float64(i)*14), s.color, template.HTMLEscapeString(s.name))
	}
	b.WriteString("</svg>")
	return ownSVG(b.String())
}

// quantile is nearest-rank on sorted values.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// niceMax is an axis end at or above v: 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// ticks are five steps from 0 to max (max is a niceMax).
func ticks(max float64) []float64 {
	out := make([]float64, 0, 6)
	for i := 0; i <= 5; i++ {
		out = append(out, max*float64(i)/5)
	}
	return out
}

func tickText(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(round(v, 3), 'f', -1, 64)
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

func n0(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
func n1(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// ownSVG marks SVG this package wrote as safe for the page: every text in
// it (labels, names, titles) was escaped as it was written, and every
// number formatted here, so no input reaches the page as markup.
func ownSVG(s string) template.HTML {
	return template.HTML(s) //nolint:gosec // written here with every text escaped (see above)
}
