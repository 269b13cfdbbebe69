package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/results"
)

// Rule is one clause of a regression gate, e.g. "median_tpot>+5%": the
// point fails when the candidate's change against the baseline in Metric
// is beyond Pct in the rule's direction.
type Rule struct {
	Metric string  // a comparison metric key, e.g. median_tpot_ms
	Above  bool    // ">": fail when the change exceeds Pct; "<": when it is below
	Pct    float64 // signed percentage
	Text   string  // the clause as written, for messages
}

// ruleAliases name metrics without their unit, as people write them.
var ruleAliases = map[string]string{
	"median_ttft": "median_ttft_ms",
	"median_tpot": "median_tpot_ms",
	"median_e2el": "median_e2el_s",
	"median_e2e":  "median_e2el_s",
}

var ruleRE = regexp.MustCompile(`^\s*([a-z0-9_]+)\s*([<>])\s*([+-]?[0-9]+(?:\.[0-9]+)?)\s*%\s*$`)

// ParseRules reads a comma-separated gate, e.g.
// "tput_per_gpu<-2%,median_ttft>+10%,median_tpot>+5%".
func ParseRules(s string) ([]Rule, error) {
	known := map[string]bool{}
	for _, m := range append(append([]metric{}, pointMetrics...), evalMetrics...) {
		known[m.key] = true
	}
	var rules []Rule
	for _, clause := range strings.Split(s, ",") {
		m := ruleRE.FindStringSubmatch(clause)
		if m == nil {
			return nil, fmt.Errorf("gate clause %q: want METRIC<PCT%% or METRIC>PCT%%, e.g. tput_per_gpu<-2%% or median_tpot>+5%%", strings.TrimSpace(clause))
		}
		key := m[1]
		if alias, ok := ruleAliases[key]; ok {
			key = alias
		}
		if !known[key] {
			return nil, fmt.Errorf("gate clause %q: unknown metric %q (want one of %s)", strings.TrimSpace(clause), m[1], strings.Join(ruleMetricNames(), ", "))
		}
		pct, _ := strconv.ParseFloat(m[3], 64)
		rules = append(rules, Rule{Metric: key, Above: m[2] == ">", Pct: pct, Text: strings.TrimSpace(clause)})
	}
	return rules, nil
}

func ruleMetricNames() []string {
	var names []string
	for _, m := range append(append([]metric{}, pointMetrics...), evalMetrics...) {
		names = append(names, m.key)
	}
	return append(names, "median_ttft", "median_tpot", "median_e2el")
}

// fails reports whether a change of delta percent breaks r.
func (r Rule) fails(delta float64) bool {
	if r.Above {
		return delta > r.Pct
	}
	return delta < r.Pct
}

// GateOptions configure Gate.
type GateOptions struct {
	Rules []Rule
	// AllowMissing lets a point that is missing or invalid on either side
	// pass (it is still listed); by default it fails the gate.
	AllowMissing bool
}

// GateRow is one point (or gsm8k run) of a gated comparison.
type GateRow struct {
	Point  string     `json:"point"`
	Status string     `json:"status"` // "pass", "fail", or "missing"/"invalid" when allowed
	Cells  []GateCell `json:"metrics"`
	// Reasons say why the row fails (or would, without --allow-missing).
	Reasons []string `json:"reasons,omitempty"`
}

// GateCell is one metric of a row.
type GateCell struct {
	Metric    string   `json:"metric"`
	Unit      string   `json:"unit"`
	Baseline  *float64 `json:"baseline"`
	Candidate *float64 `json:"candidate"`
	DeltaPct  *float64 `json:"delta_pct"`
	// Failed names the rule the change breaks.
	Failed string `json:"failed_rule,omitempty"`

	label string
	prec  int
}

// Gate statuses.
const (
	GatePass    = "pass"
	GateFail    = "fail"
	GateMissing = "missing"
	GateInvalid = "invalid"
)

// GateResult is a comparison judged by rules.
type GateResult struct {
	Baseline  string    `json:"baseline"`
	Candidate string    `json:"candidate"`
	Rules     []string  `json:"rules"`
	Pass      bool      `json:"pass"`
	Rows      []GateRow `json:"rows"`
	Notes     []string  `json:"notes"`
}

// Gate judges a comparison of baseline and candidate with opts.Rules: a
// point fails when a rule's metric changed beyond its threshold, or when
// it is missing or invalid on either side (unless opts.AllowMissing).
func Gate(baseline, candidate *ResultSet, opts GateOptions) *GateResult {
	c := Compare(baseline, candidate)
	g := &GateResult{Baseline: c.Baseline, Candidate: c.Candidate, Pass: true, Notes: c.Notes, Rows: []GateRow{}}
	for _, r := range opts.Rules {
		g.Rules = append(g.Rules, r.Text)
	}
	for i := 0; i < len(c.Rows); {
		j := i
		for j < len(c.Rows) && c.Rows[j].Point == c.Rows[i].Point {
			j++
		}
		g.Rows = append(g.Rows, gateRow(c.Rows[i:j], baseline, candidate, opts))
		if g.Rows[len(g.Rows)-1].Status == GateFail {
			g.Pass = false
		}
		i = j
	}
	return g
}

func gateRow(rows []ComparisonRow, baseline, candidate *ResultSet, opts GateOptions) GateRow {
	gr := GateRow{Point: rows[0].Point, Status: GatePass}
	inBase, inCand := false, false
	for _, r := range rows {
		inBase = inBase || r.Baseline != nil
		inCand = inCand || r.Candidate != nil
		cell := GateCell{Metric: r.Metric, Unit: r.Unit, Baseline: r.Baseline, Candidate: r.Candidate, DeltaPct: r.DeltaPct, label: r.Label, prec: r.prec}
		for _, rule := range opts.Rules {
			if rule.Metric == r.Metric && r.DeltaPct != nil && rule.fails(*r.DeltaPct) {
				cell.Failed = rule.Text
				gr.Reasons = append(gr.Reasons, fmt.Sprintf("%s %s (rule %s)", ruleName(rule), asciiDelta(*r.DeltaPct), rule.Text))
			}
		}
		gr.Cells = append(gr.Cells, cell)
	}
	if len(gr.Reasons) > 0 {
		gr.Status = GateFail
	}
	var problems []string
	switch {
	case !inBase:
		problems = append(problems, "missing in the baseline")
	case !inCand:
		problems = append(problems, "missing in the candidate")
	}
	status := GateMissing
	if rows[0].GPUs > 0 { // an SA-Bench point, not a gsm8k run
		p := results.PointID{Concurrency: rows[0].Concurrency, GPUs: rows[0].GPUs, PrefillGPUs: rows[0].PrefillGPUs, DecodeGPUs: rows[0].DecodeGPUs}
		for side, set := range map[string]*ResultSet{"baseline": baseline, "candidate": candidate} {
			if cp := set.Points[p]; cp != nil {
				if probs := cp.Result.Problems(); len(probs) > 0 {
					problems = append(problems, fmt.Sprintf("invalid in the %s: %s", side, strings.Join(probs, "; ")))
					if inBase && inCand {
						status = GateInvalid
					}
				}
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		gr.Reasons = append(problems, gr.Reasons...)
		switch {
		case !opts.AllowMissing:
			gr.Status = GateFail
		case gr.Status != GateFail:
			gr.Status = status
		}
	}
	return gr
}

// Failing names the rows that fail, with their reasons, for an error
// message: "ctx8/gen4 c32 (median_tpot +7.1% (rule median_tpot>+5%))".
func (g *GateResult) Failing() []string {
	var out []string
	for _, r := range g.Rows {
		if r.Status == GateFail {
			out = append(out, fmt.Sprintf("%s (%s)", r.Point, strings.Join(r.Reasons, "; ")))
		}
	}
	return out
}

// Err is nil when the gate passes, else an error naming every failing row.
func (g *GateResult) Err() error {
	if g.Pass {
		return nil
	}
	f := g.Failing()
	return fmt.Errorf("%d of %d rows fail the gate: %s", len(f), len(g.Rows), strings.Join(f, ", "))
}

// WriteJSON writes the gate as indented JSON: numbers and ASCII text only
// (a negative change is "-", never a typographic minus).
func (g *GateResult) WriteJSON(w io.Writer) error { return writeIndentedJSON(w, g) }

// writeIndentedJSON writes v as indented JSON and a newline.
func writeIndentedJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteMarkdown writes one row per point: each metric as "baseline →
// candidate ▲/▼ delta", a failing metric marked ✗, and the row's verdict.
func (g *GateResult) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	verdict := "✅ pass"
	if !g.Pass {
		verdict = "❌ fail"
	}
	fmt.Fprintf(&b, "Gate %s: `%s` → `%s`", verdict, g.Baseline, g.Candidate)
	if len(g.Rules) > 0 {
		fmt.Fprintf(&b, " (rules: `%s`)", strings.Join(g.Rules, "`, `"))
	}
	b.WriteString("\n\n")
	// Columns: every metric in the order rows first show it.
	var metrics []GateCell
	seen := map[string]bool{}
	for _, r := range g.Rows {
		for _, c := range r.Cells {
			if !seen[c.Metric] {
				seen[c.Metric] = true
				metrics = append(metrics, c)
			}
		}
	}
	b.WriteString("| Point |")
	align := "| --- |"
	for _, m := range metrics {
		label := m.label
		if m.Unit == "s" || m.Unit == "ms" {
			label += " (" + m.Unit + ")"
		}
		b.WriteString(" " + label + " |")
		align += " ---: |"
	}
	b.WriteString(" Verdict |\n" + align + " --- |\n")
	for _, r := range g.Rows {
		b.WriteString("| " + r.Point + " |")
		for _, m := range metrics {
			cell := "—"
			for _, c := range r.Cells {
				if c.Metric == m.Metric {
					cell = c.markdown()
				}
			}
			b.WriteString(" " + cell + " |")
		}
		v := "✅"
		switch r.Status {
		case GateFail:
			v = "❌"
		case GateMissing, GateInvalid:
			v = "⚠️ allowed:"
		}
		if len(r.Reasons) > 0 {
			v += " " + strings.ReplaceAll(strings.Join(r.Reasons, "; "), "|", "\\|")
		}
		b.WriteString(" " + v + " |\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (c GateCell) markdown() string {
	if c.Baseline == nil || c.Candidate == nil {
		return formatValue(c.Baseline, c.prec) + " → " + formatValue(c.Candidate, c.prec)
	}
	s := formatValue(c.Baseline, c.prec) + " → " + formatValue(c.Candidate, c.prec)
	if c.DeltaPct != nil {
		s += " " + arrow(*c.DeltaPct) + strings.TrimPrefix(strings.TrimPrefix(formatDelta(c.DeltaPct), "+"), "−")
	}
	if c.Failed != "" {
		s += " ✗"
	}
	return s
}

// arrow marks the direction of a change: ▲ up, ▼ down, = unchanged at the
// shown precision.
func arrow(delta float64) string {
	switch r := math.Round(delta*10) / 10; {
	case r > 0:
		return "▲"
	case r < 0:
		return "▼"
	}
	return "="
}

// asciiDelta is a signed percentage with an ASCII minus, for messages
// that machines read: "+7.1%", "-2.3%".
func asciiDelta(d float64) string {
	s := strconv.FormatFloat(d, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

// ruleName is the metric as the rule names it ("median_tpot", not the
// key median_tpot_ms), so a failure reads in the words of the rule.
func ruleName(r Rule) string {
	if i := strings.IndexAny(r.Text, "<>"); i > 0 {
		return strings.TrimSpace(r.Text[:i])
	}
	return r.Metric
}
