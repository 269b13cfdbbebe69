package main

import (
	"bytes"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/launch"
	"github.com/slurmbench/slurmbench/login/report"
	"github.com/slurmbench/slurmbench/results/compare"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// The gate and picture parts of `results compare`.

func compareGateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "fail-on", Usage: "gate: comma-separated `RULES` METRIC<PCT% or METRIC>PCT%, e.g. 'tput_per_gpu<-2%,median_ttft>+10%,median_tpot>+5%'; a point breaking one exits 8"},
		&cli.BoolFlag{Name: "allow-missing", Usage: "gate: a point missing or invalid on either side does not fail it"},
		&cli.StringFlag{Name: "svg", Usage: "write the Pareto picture (tput/GPU against tok/s per user, one curve per side) to `FILE`"},
		&cli.StringFlag{Name: "csv", Usage: "write the Pareto picture's data to `FILE`"},
	}
}

// comparePareto writes --svg and --csv and returns the Mermaid chart for a
// step summary.
func comparePareto(c *cli.Context, base, cand *compare.ResultSet) (string, error) {
	bc, _ := pareto.FromSet("baseline", base)
	cc, _ := pareto.FromSet("candidate", cand)
	curves := []pareto.Curve{bc, cc}
	title := "tput/GPU vs interactivity: baseline and candidate"
	if err := pareto.Save(c.String("svg"), c.String("csv"), title, curves); err != nil {
		return "", exitcode.With(exitcode.Collect, err)
	}
	var md bytes.Buffer
	_ = pareto.WriteMermaid(&md, "tput/GPU by concurrency: baseline (1), candidate (2)", curves)
	return md.String(), nil
}

// compareGate prints the gated comparison (one row per point) and returns
// exit 8 naming the failing rows when it fails.
func compareGate(c *cli.Context, base, cand *compare.ResultSet, chart string) error {
	rules, err := compare.ParseRules(c.String("fail-on"))
	if err != nil {
		return configErrorf("--fail-on: %w", err)
	}
	g := compare.Gate(base, cand, compare.GateOptions{Rules: rules, AllowMissing: c.Bool("allow-missing")})
	var md bytes.Buffer
	if err := g.WriteMarkdown(&md); err != nil {
		return err
	}
	if c.Bool("json") {
		err = g.WriteJSON(c.App.Writer)
	} else {
		_, err = c.App.Writer.Write(md.Bytes())
	}
	if err != nil {
		return err
	}
	writeCompareSummary(c, md.String()+"\n"+chart)
	return exitcode.With(exitcode.Benchmark, g.Err())
}

// writeCompareSummary appends the comparison to the GitHub step summary
// when running in GitHub Actions.
func writeCompareSummary(c *cli.Context, markdown string) {
	if report.Enabled(os.Getenv) {
		launch.AppendStepSummary(c.App.ErrWriter, "## slurmbench results compare\n\n"+markdown)
	}
}
