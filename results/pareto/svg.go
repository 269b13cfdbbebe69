package pareto

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
)

// The SVG's geometry: the plot area and the legend to its right.
const (
	svgWidth, svgHeight            = 760, 460
	plotLeft, plotTop              = 80, 44
	plotRight, plotBottom          = 560, 400
	legendX, legendY, legendLineDY = 580, 60, 22
)

// colors are the curves' colors, in order (then repeated).
var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"}

// WriteSVG draws the curves: interactivity (tok/s per user) on x,
// tput/GPU on y, both from 0, each point marked and labelled with its
// concurrency, hovering a point shows its numbers.
func WriteSVG(w io.Writer, title string, curves []Curve) error {
	xMaxData, yMaxData := 0.0, 0.0
	for _, c := range curves {
		for _, p := range c.Points {
			xMaxData, yMaxData = math.Max(xMaxData, p.Interactivity), math.Max(yMaxData, p.TputPerGPU)
		}
	}
	xMax, yMax := axisMax(xMaxData), axisMax(yMaxData)
	px := func(x float64) float64 { return plotLeft + x/xMax*(plotRight-plotLeft) }
	py := func(y float64) float64 { return plotBottom - y/yMax*(plotBottom-plotTop) }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		svgWidth, svgHeight, svgWidth, svgHeight)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	fmt.Fprintf(&b, `<text x="%d" y="24" text-anchor="middle" font-size="15">%s</text>`+"\n", (plotLeft+plotRight)/2, esc(title))

	// Grid, ticks and their labels.
	for x, step := 0.0, tickStep(xMaxData); x <= xMax+step/2; x += step {
		fmt.Fprintf(&b, `<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#ddd"/>`+"\n", f1(px(x)), plotTop, f1(px(x)), plotBottom)
		fmt.Fprintf(&b, `<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", f1(px(x)), plotBottom+18, tick(x))
	}
	for y, step := 0.0, tickStep(yMaxData); y <= yMax+step/2; y += step {
		fmt.Fprintf(&b, `<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#ddd"/>`+"\n", plotLeft, f1(py(y)), plotRight, f1(py(y)))
		fmt.Fprintf(&b, `<text x="%d" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotLeft-8, f1(py(y)), tick(y))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", plotLeft, plotTop, plotRight-plotLeft, plotBottom-plotTop)
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">interactivity: output tok/s per user (1000 / median TPOT)</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+44)
	fmt.Fprintf(&b, `<text transform="translate(22 %d) rotate(-90)" text-anchor="middle">throughput: total tok/s per GPU</text>`+"\n", (plotTop+plotBottom)/2)

	for i, c := range curves {
		color := colors[i%len(colors)]
		pts := make([]string, len(c.Points))
		for j, p := range c.Points {
			pts[j] = f1(px(p.Interactivity)) + "," + f1(py(p.TputPerGPU))
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		}
		for _, p := range c.Points {
			x, y := f1(px(p.Interactivity)), f1(py(p.TputPerGPU))
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="4" fill="%s"><title>%s %s: %s tok/s/user, %s tok/s/GPU</title></circle>`+"\n",
				x, y, color, esc(c.Name), esc(p.Label), num(p.Interactivity, 1), num(p.TputPerGPU, 1))
			fmt.Fprintf(&b, `<text x="%s" y="%s" dx="6" dy="-6" fill="%s">c%d</text>`+"\n", x, y, color, p.Concurrency)
		}
		ly := legendY + i*legendLineDY
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/>`+"\n", legendX, ly, legendX+24, ly, color)
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", legendX+30, ly, esc(shorten(c.Name, 24)))
	}
	if len(curves) == 0 || xMaxData == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">no point with a median TPOT and a throughput</text>`+"\n", (plotLeft+plotRight)/2, (plotTop+plotBottom)/2)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func f1(v float64) string { return num(v, 1) }

// tick writes an axis value without needless decimals.
func tick(v float64) string {
	if v == math.Trunc(v) {
		return num(v, 0)
	}
	return strings.TrimRight(num(v, 3), "0")
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// shorten keeps a legend entry inside the picture: the end of a long
// name (a path's last elements say most).
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}
