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

Examples:
  slurmbench render -p profiles/b200.toml -r recipes/8k1k_mtp_4p1d_c2048.yaml
  slurmbench render -p profiles/b200.toml -r r.yaml --conc 1024x2048 --json | jq .gpus
  CONFIG_FILE=recipes/sglang/dsr1/b200-fp4/8k1k/disagg/mtp/8k1k_mtp_4p1d_c2048.yaml \
    slurmbench render -p profiles/b200.toml --recipes-root ~/InferenceX/benchmarks/multi_node/srt-slurm-recipes
  slurmbench render -p profiles/b200.toml --master configs/nvidia-master.yaml \
    --key dsr1-fp4-b200-dynamo-sglang-mtp --point 3`,
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
