package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/login/webreport"
)

// reportCommand rebuilds a run's page from what its stage directory holds.
func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "(re)build a run's self-contained report.html from its stage directory",
		UsageText: "slurmbench report [--out FILE] DIR",
		Description: `Reads what a run staged into DIR — summary.json, manifest.json, the result
files and their per-request records (*.requests.jsonl.gz), LOGS/power — and
writes DIR/report.html (or --out FILE): what ran, each point's figures and
goodput, the Pareto chart, per-point TTFT and ITL distributions, the power
trace with each point's window, the eval score, and why a failed run failed.
The page needs no network and no JavaScript; open it in any browser, or print it.

  slurmbench report demo-out
  slurmbench report --out /tmp/run.html ./artifacts/results`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "write the page to `FILE` instead of DIR/report.html"},
			&cli.BoolFlag{Name: "json", Usage: `print {"report": PATH} instead of a line`},
		},
		Action: func(c *cli.Context) error {
			return webreport.Command(webreport.CommandOptions{Args: c.Args().Slice(), Out: c.String("out"), JSON: c.Bool("json"), Stdout: c.App.Writer})
		},
	}
}
