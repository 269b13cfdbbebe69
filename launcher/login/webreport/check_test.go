package webreport

import (
	"regexp"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/browsertest"
)

var labelRE = regexp.MustCompile(`<text[^>]*>c(\d+)</text>`)

// CheckRendered checks what a browser made of a run page with points
// Pareto points: no console message at all (the page has no script), the
// sections, and every point drawn and labelled.
func CheckRendered(t testing.TB, p browsertest.Page, points int) {
	t.Helper()
	for _, c := range p.Console {
		t.Errorf("console: %s", c)
	}
	for _, id := range []string{"what-ran", "points", "pareto", "distributions"} {
		if !strings.Contains(p.DOM, `id="`+id+`"`) {
			t.Errorf("the rendered page has no section %q", id)
		}
	}
	i := strings.Index(p.DOM, `class="chart pareto"`)
	if i < 0 {
		t.Errorf("the rendered page has no Pareto chart")
		return
	}
	chart := p.DOM[i:]
	chart = chart[:strings.Index(chart, "</svg>")]
	if n := len(circleRE.FindAllString(chart, -1)); n != points {
		t.Errorf("the Pareto chart has %d points, want %d", n, points)
	}
	if n := len(labelRE.FindAllString(chart, -1)); n != points {
		t.Errorf("the Pareto chart has %d point labels, want %d", n, points)
	}
}
