package launch

import (
	"bytes"
	"os"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/login/webreport"
	"github.com/slurmbench/slurmbench/results/compare"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// CompareOptions are `results compare`'s: the BASELINE and CANDIDATE
// directories (Args), the gate (FailOn's rules; nil is no gate, "" is
// refused) and the Pareto picture's files.
type CompareOptions struct {
	IO
	Args         []string
	FailOn       *string
	AllowMissing bool
	SVG, CSV     string
	// HTML, when set, is where the comparison's page goes (webreport):
	// both curves overlaid, both sides' points and the gate's verdict.
	HTML string
}

// Compare is `results compare`: the Markdown (or JSON) table of two runs'
// points, or with FailOn the gate, which exits 8 naming every failing
// point. In GitHub Actions the table and a Mermaid chart go to the step
// summary.
func Compare(o CompareOptions) error {
	if len(o.Args) != 2 {
		return exitcode.Errorf(exitcode.Config, "results compare: want BASELINE and CANDIDATE directories, got %d arguments", len(o.Args))
	}
	base, err := compare.LoadResultSet(o.Args[0])
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "results compare: baseline: %w", err)
	}
	cand, err := compare.LoadResultSet(o.Args[1])
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "results compare: candidate: %w", err)
	}
	chart, err := comparePareto(o, base, cand)
	if err != nil {
		return err
	}
	if o.FailOn != nil {
		return compareGate(o, base, cand, chart)
	}
	if err := compareHTML(o, base, cand, ""); err != nil {
		return err
	}
	cmp := compare.Compare(base, cand)
	if o.JSON {
		return cmp.WriteJSON(o.Stdout)
	}
	var md bytes.Buffer
	if err := cmp.WriteMarkdown(&md); err != nil {
		return err
	}
	writeCompareSummary(o, md.String()+"\n"+chart)
	_, err = o.Stdout.Write(md.Bytes())
	return err
}

// comparePareto writes the SVG and CSV files and returns the Mermaid chart
// for a step summary.
func comparePareto(o CompareOptions, base, cand *compare.ResultSet) (string, error) {
	bc, _ := pareto.FromSet("baseline", base)
	cc, _ := pareto.FromSet("candidate", cand)
	curves := []pareto.Curve{bc, cc}
	title := "tput/GPU vs interactivity: baseline and candidate"
	if err := pareto.Save(o.SVG, o.CSV, title, curves); err != nil {
		return "", exitcode.With(exitcode.Collect, err)
	}
	var md bytes.Buffer
	_ = pareto.WriteMermaid(&md, "tput/GPU by concurrency: baseline (1), candidate (2)", curves)
	return md.String(), nil
}

// compareGate prints the gated comparison (one row per point) and returns
// exit 8 naming the failing rows when it fails.
func compareGate(o CompareOptions, base, cand *compare.ResultSet, chart string) error {
	rules, err := compare.ParseRules(*o.FailOn)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "--fail-on: %w", err)
	}
	g := compare.Gate(base, cand, compare.GateOptions{Rules: rules, AllowMissing: o.AllowMissing})
	verdict := "pass"
	if err := g.Err(); err != nil {
		verdict = err.Error()
	}
	if err := compareHTML(o, base, cand, verdict); err != nil {
		return err
	}
	var md bytes.Buffer
	if err := g.WriteMarkdown(&md); err != nil {
		return err
	}
	if o.JSON {
		err = g.WriteJSON(o.Stdout)
	} else {
		_, err = o.Stdout.Write(md.Bytes())
	}
	if err != nil {
		return err
	}
	writeCompareSummary(o, md.String()+"\n"+chart)
	return exitcode.With(exitcode.Benchmark, g.Err())
}

// writeCompareSummary appends the comparison to the GitHub step summary
// when running in GitHub Actions.
func writeCompareSummary(o CompareOptions, markdown string) {
	if report.Enabled(os.Getenv) {
		AppendStepSummary(o.Stderr, "## slurmbench results compare\n\n"+markdown)
	}
}

// compareHTML writes the comparison's page when --html names a file.
func compareHTML(o CompareOptions, base, cand *compare.ResultSet, verdict string) error {
	if o.HTML == "" {
		return nil
	}
	if err := webreport.WriteCompare(o.HTML, base, cand, verdict); err != nil {
		return exitcode.With(exitcode.Collect, err)
	}
	return nil
}
