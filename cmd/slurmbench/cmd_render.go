package main

import (
	"github.com/urfave/cli/v2"
)

func renderCommand() *cli.Command {
	return &cli.Command{
		Name:      "render",
		Usage:     "show what a benchmark point would run, without submitting anything",
		UsageText: "slurmbench render --profile FILE --recipe FILE [--conc LIST] [--json]",
		Description: `Computes the plan of one benchmark point from a cluster profile and a recipe:
the allocation size, which node does what, every process's argv, environment,
mounts and log, the ports, the health gate and the benchmark points with their
result file names. Paths are resolved to absolute ones first, so the output is
the same from any directory.

Examples (from the repository's root; with InferenceX, --recipes-root is its
benchmarks/multi_node/srt-slurm-recipes and --master its configs/nvidia-master.yaml):
  slurmbench render -p profiles/testcluster.toml -r examples/mock-2p1d.yaml
  slurmbench render -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --conc 16x64 --json | jq .gpus
  CONFIG_FILE=recipes/mock-2p1d.yaml \
    slurmbench render -p profiles/testcluster.toml --recipes-root examples
  slurmbench render -p profiles/testcluster.toml --recipes-root examples \
    --master examples/mock-master.yaml --key mock-2p1d --point 0`,
		Flags:        append(planFlags(), &cli.BoolFlag{Name: "json", Usage: "print the plan as JSON"}),
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return configErrorf("render takes no arguments, got %q (did you mean --recipe?)", c.Args().First())
			}
			plan, err := planFromFlags(c, "")
			if err != nil {
				return err
			}
			if c.Bool("json") {
				b, err := plan.JSON()
				if err != nil {
					return err
				}
				_, err = c.App.Writer.Write(b)
				return err
			}
			return plan.WriteHuman(c.App.Writer)
		},
	}
}
