package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:      "render",
		Usage:     "show what a benchmark point would run, without submitting anything",
		UsageText: "slurmbench render --profile FILE --recipe FILE [--conc LIST] [--brief | --json]",
		Description: `Computes the plan of one benchmark point from a cluster profile and a recipe:
the allocation size, which node does what, every process's argv, environment,
mounts and log, the ports, the health gate and the benchmark points with their
result file names. Paths are resolved to absolute ones first, so the output is
the same from any directory.

It ends with the Slurm job run would submit: nodes, GRES, partition, account,
time limit, exclusive, the sbatch directives and the job-description fields
they become, and the batch script. The job description is built as run builds
it, so a directive slurmbench cannot send fails here (exit 2). Environment that
every worker shares is shown once; {host:N}, {ip:N} and {job_id} are explained
in a legend. --brief keeps only the node map, the ports and the job.

Examples (from the repository's root; with InferenceX, --recipes-root is its
benchmarks/multi_node/srt-slurm-recipes and --master its configs/nvidia-master.yaml):
  slurmbench render -p profiles/testcluster.toml -r examples/mock-2p1d.yaml
  slurmbench render -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --conc 16x64 --json | jq .gpus
  CONFIG_FILE=recipes/mock-2p1d.yaml \
    slurmbench render -p profiles/testcluster.toml --recipes-root examples
  slurmbench render -p profiles/testcluster.toml --recipes-root examples \
    --master examples/mock-master.yaml --key mock-2p1d --point 0
  slurmbench render -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --brief

--composed shows an InferenceX recipe fragment (RECIPES.md § Recipe fragments)
over its lane's shared block from configs/srt-recipes/ (and, with --power-port,
the DCGM telemetry block), the variant selected when --variant or
FILE:SELECTOR names one; no profile is read and no point is bound:
  slurmbench render --composed \
    -r inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/dsr1/sglang/b200-fp8/8k1k/disagg-mtp-variants.yaml`,
		Flags: append(planFlags(), &cli.BoolFlag{Name: "json", Usage: "print the plan as JSON"},
			&cli.BoolFlag{Name: "brief", Usage: "only the node map, the ports and the Slurm job (for big plans)"},
			&cli.BoolFlag{Name: "composed", Usage: "show the InferenceX fragment --recipe names composed over its lane's shared block (no profile needed)"},
			&cli.StringFlag{Name: "lane", Usage: "with --composed: fixed-sequence-single, fixed-sequence-multi, agentic-single or agentic-multi (default: from the fragment's place in InferenceX's tree)"},
			&cli.StringFlag{Name: "infx-root", Usage: "with --composed: InferenceX's inferencex-e2e/ (default: the directory above the fragment holding configs/srt-recipes/)"},
			&cli.IntFlag{Name: "power-port", Usage: "with --composed: also compose the DCGM telemetry block (a power: true row), its exporter on this port"}),
		OnUsageError: cliargs.UsageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return configErrorf("render takes no arguments, got %q (did you mean --recipe?)", c.Args().First())
			}
			if c.Bool("composed") {
				return launch.RenderComposed(c.Context, launch.ComposedOptions{IO: ioOf(c), Recipe: c.String("recipe"), Variant: c.String("variant"),
					Overrides: overridesOf(c), Lane: c.String("lane"), Root: c.String("infx-root"), PowerPort: c.Int("power-port"),
					AllowDuplicateKeys: c.Bool("allow-duplicate-keys")})
			}
			return launch.Render(c.Context, launch.RenderOptions{IO: ioOf(c), Plan: planOptions(c, ""), Brief: c.Bool("brief")})
		},
	}
}
