package pareto

import (
	"bytes"
	"encoding/xml"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/golden"
	"github.com/slurmbench/slurmbench/results/compare"
)

// curves are the results package's comparison fixtures as two curves.
func curves(t *testing.T) []Curve {
	t.Helper()
	var out []Curve
	for _, side := range []string{"baseline", "candidate"} {
		set, err := compare.LoadResultSet(filepath.Join("..", "compare", "testdata", "compare", side))
		if err != nil {
			t.Fatal(err)
		}
		c, skipped := FromSet(side, set)
		if len(skipped) != 0 {
			t.Errorf("%s: skipped %v", side, skipped)
		}
		out = append(out, c)
	}
	return out
}

func TestCurvesFromSets(t *testing.T) {
	cs := curves(t)
	if len(cs[0].Points) != 3 || len(cs[1].Points) != 3 {
		t.Fatalf("points %d and %d, want 3 and 3", len(cs[0].Points), len(cs[1].Points))
	}
	// ctx16/gen8 c2048: median TPOT 21.72 ms → 1000/21.72 tok/s/user;
	// 204835.2 tok/s over 24 GPUs (the compare fixtures' hand-computed figures).
	var p CurvePoint
	for _, q := range cs[0].Points {
		if q.Label == "ctx16/gen8 c2048" {
			p = q
		}
	}
	if math.Abs(p.Interactivity-1000/21.72) > 1e-9 || math.Abs(p.TputPerGPU-8534.8) > 1e-9 {
		t.Errorf("c2048: %+v, want interactivity %v and tput/GPU 8534.8", p, 1000/21.72)
	}
	for _, c := range cs {
		for i := 1; i < len(c.Points); i++ {
			if c.Points[i].Interactivity < c.Points[i-1].Interactivity {
				t.Errorf("%s: points not ordered by interactivity", c.Name)
			}
		}
	}
}

func TestGoldens(t *testing.T) {
	cs := curves(t)
	var svg, csv, md bytes.Buffer
	if err := WriteSVG(&svg, "baseline vs candidate", cs); err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(&csv, cs); err != nil {
		t.Fatal(err)
	}
	if err := WriteMermaid(&md, "tput/GPU by concurrency", cs); err != nil {
		t.Fatal(err)
	}
	// The SVG is well-formed XML with one marker per point.
	dec := xml.NewDecoder(bytes.NewReader(svg.Bytes()))
	circles := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "circle" {
			circles++
		}
	}
	if circles != 6 {
		t.Errorf("%d point markers, want 6", circles)
	}
	if lines := strings.Count(csv.String(), "\n"); lines != 7 {
		t.Errorf("CSV has %d lines, want a header and 6 points", lines)
	}
	// Mermaid: the concurrencies both sides have (c2048, c1024), falling.
	if !strings.Contains(md.String(), `x-axis "concurrency (interactivity rises →)" ["c2048", "c1024"]`) {
		t.Errorf("Mermaid x axis:\n%s", md.String())
	}
	golden.Assert(t, filepath.Join("testdata", "pareto.golden.svg"), svg.Bytes())
	golden.Assert(t, filepath.Join("testdata", "pareto.golden.csv"), csv.Bytes())
	golden.Assert(t, filepath.Join("testdata", "pareto.golden.md"), md.Bytes())
}

func TestEmptyAndAxis(t *testing.T) {
	var svg bytes.Buffer
	if err := WriteSVG(&svg, "none", nil); err != nil || !strings.Contains(svg.String(), "no point with a median TPOT") {
		t.Errorf("empty SVG: %v\n%s", err, svg.String())
	}
	for max, want := range map[float64]float64{0: 1, 9: 10, 10500: 15000, 46.04: 50, 0.7: 0.8} {
		if got := axisMax(max); math.Abs(got-want) > 1e-9 {
			t.Errorf("axisMax(%v) = %v, want %v", max, got, want)
		}
	}
}
