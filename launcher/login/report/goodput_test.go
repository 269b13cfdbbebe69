package report

import (
	"strings"
	"testing"
)

// The goodput column appears when a point has a goodput, in both tables,
// with a dash for a point without one; without any goodput the table is
// as before.
func TestGoodputColumn(t *testing.T) {
	g := 12.5
	s := Summary{Name: "x", Outcome: OutcomeSucceeded, Points: []PointRow{
		{Label: "gpus8 c8", Concurrency: 8, GPUs: 8, HasResult: true, Completed: 80, NumPrompts: 80, Valid: true, Goodput: &g},
		{Label: "gpus8 c16", Concurrency: 16, GPUs: 8, HasResult: true, Completed: 160, NumPrompts: 160, Valid: true},
	}}
	text, md := s.Text(), s.Markdown()
	for name, out := range map[string]string{"text": text, "markdown": md} {
		if !strings.Contains(out, goodputColumn) || !strings.Contains(out, "12.50") {
			t.Errorf("%s table lacks the goodput column or value:\n%s", name, out)
		}
	}
	if !strings.Contains(md, "|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|:--|") {
		t.Errorf("markdown separator does not match 11 columns:\n%s", md)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "gpus8 c16") && !strings.Contains(line, " -  yes") {
			t.Errorf("a point without goodput shows %q, want a dash before yes", line)
		}
	}
	s.Points[0].Goodput = nil
	if out := s.Text() + s.Markdown(); strings.Contains(out, goodputColumn) {
		t.Errorf("no goodput, yet the column:\n%s", out)
	}
}
