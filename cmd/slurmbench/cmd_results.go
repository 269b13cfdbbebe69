package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/results"
)

func resultsCommand() *cli.Command {
	return &cli.Command{
		Name:  "results",
		Usage: "name, parse and compare benchmark result files",
		Subcommands: []*cli.Command{
			resultsNameCommand(),
			resultsParseCommand(),
			resultsCompareCommand(),
		},
	}
}

// usageAsConfigError makes a bad flag value exit with exitcode.Config.
func usageAsConfigError(_ *cli.Context, err error, _ bool) error {
	return configErrorf("%v", err)
}

func resultsNameCommand() *cli.Command {
	return &cli.Command{
		Name:      "name",
		Usage:     "print the staged name of one point's result file",
		UsageText: "slurmbench results name --result-filename S --config sa-bench_isl_8192_osl_1024 --conc 2048 --gpus 24 [--ctx 16 --gen 8]",
		Description: `Prints <result-filename>_<config>_conc<C>_gpus_<T>[_ctx_<P>_gen_<D>].json, the name
InferenceX's launchers stage a point's SA-Bench result under. A name that would not leave
room for power_validation_<name>.tmp within 255 bytes keeps the whole result filename (the
workflow globs ${RESULT_FILENAME}_*.json) and the numeric tail; only the config is shortened
to a readable prefix and a hash of the full name (dropped when even that cannot fit). A result
filename too long for that is refused (exit 2) naming its length and the most it may have.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "result-filename", Usage: "the workflow's RESULT_FILENAME"},
			&cli.StringFlag{Name: "config", Usage: "the SA-Bench results directory name, e.g. sa-bench_isl_8192_osl_1024"},
			&cli.IntFlag{Name: "conc", Usage: "concurrency"},
			&cli.IntFlag{Name: "gpus", Usage: "total GPUs"},
			&cli.IntFlag{Name: "ctx", Usage: "prefill GPUs (disaggregated points; with --gen)"},
			&cli.IntFlag{Name: "gen", Usage: "decode GPUs (disaggregated points; with --ctx)"},
		},
		OnUsageError: usageAsConfigError,
		Action: func(c *cli.Context) error {
			return results.WriteName(c.App.Writer, results.NameOptions{Args: c.Args().Slice(),
				ResultFilename: stringIfSet(c, "result-filename"), Config: stringIfSet(c, "config"),
				Conc: intIfSet(c, "conc"), GPUs: intIfSet(c, "gpus"), Ctx: intIfSet(c, "ctx"), Gen: intIfSet(c, "gen")})
		},
	}
}

func resultsParseCommand() *cli.Command {
	return &cli.Command{
		Name:      "parse",
		Usage:     "print the point numbers of result file names",
		UsageText: "slurmbench results parse [--json] NAME...",
		Description: `For each raw (results_concurrency_...) or staged name, bounded or not, prints
CONC=<C> GPUS=<T> PREFILL_GPUS=<P> DECODE_GPUS=<D>; an aggregated point prints
PREFILL_GPUS=<T> DECODE_GPUS=0, as the workflow sets them for process_result.py.
A name that does not parse is an error, never an empty number.`,
		Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object per name"}},
		OnUsageError: usageAsConfigError,
		Action: func(c *cli.Context) error {
			return results.WriteParsed(c.App.Writer, c.Args().Slice(), c.Bool("json"))
		},
	}
}

func resultsCompareCommand() *cli.Command {
	return &cli.Command{
		Name:      "compare",
		Usage:     "compare two runs' results point by point",
		UsageText: "slurmbench results compare [--json] [--fail-on RULES [--allow-missing]] [--svg FILE] [--csv FILE] BASELINE CANDIDATE",
		Description: `BASELINE and CANDIDATE are run directories, or any directories holding SA-Bench
result files (raw or staged names, searched recursively) and lm-eval results*.json.
Points pair by topology and concurrency; a point on one side only shows N/A.
Prints a Markdown table (Point, Metric, Baseline, Candidate, Delta %) for tput/GPU,
out/GPU, median TTFT (ms), median TPOT (ms), median E2E (s) and gsm8k.

With --fail-on the comparison is a gate: one row per point, each metric
"baseline → candidate ▲/▼ change", and exit 8 naming every point that breaks
a rule, or that is missing or invalid on either side (unless --allow-missing):

  slurmbench results compare --fail-on 'tput_per_gpu<-2%,median_ttft>+10%,median_tpot>+5%' \
    results/compare/testdata/compare/baseline results/compare/testdata/compare/candidate

Metrics: tput_per_gpu, output_tput_per_gpu, median_ttft, median_tpot,
median_e2el, gsm8k_strict_match, gsm8k_flexible_extract. --json prints the
gate as JSON (numbers, ASCII minus). --svg and --csv write the Pareto
picture (tput/GPU against output tok/s per user, one curve per side) and its
data. In GitHub Actions the table and a Mermaid chart go to the step summary.`,
		Flags:        append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON instead of Markdown"}}, compareGateFlags()...),
		OnUsageError: usageAsConfigError,
		Action: func(c *cli.Context) error {
			return launch.Compare(launch.CompareOptions{IO: ioOf(c), Args: c.Args().Slice(), FailOn: stringIfSet(c, "fail-on"),
				AllowMissing: c.Bool("allow-missing"), SVG: c.String("svg"), CSV: c.String("csv"), HTML: c.String("html")})
		},
	}
}

// compareGateFlags are the gate and picture flags of `results compare`.
func compareGateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "fail-on", Usage: "gate: comma-separated `RULES` METRIC<PCT% or METRIC>PCT%, e.g. 'tput_per_gpu<-2%,median_ttft>+10%,median_tpot>+5%'; a point breaking one exits 8"},
		&cli.BoolFlag{Name: "allow-missing", Usage: "gate: a point missing or invalid on either side does not fail it"},
		&cli.StringFlag{Name: "svg", Usage: "write the Pareto picture (tput/GPU against tok/s per user, one curve per side) to `FILE`"},
		&cli.StringFlag{Name: "csv", Usage: "write the Pareto picture's data to `FILE`"},
		&cli.StringFlag{Name: "html", Usage: "write the comparison as one self-contained page to `FILE`: both curves overlaid, both sides' points, the gate's verdict"},
	}
}
