package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:      "doctor",
		Usage:     "check that a profile (and a recipe) can run on its cluster, before anything is imported or submitted",
		UsageText: "slurmbench doctor --profile FILE [--recipe FILE] [--probe] [--json]",
		Description: `Checks, one line each with ✓ or ✗ and the fix: slurmrestd answers, the API
version, the token is accepted (token_command runs in the profile's
directory), the partition exists and is UP, it has enough usable nodes with
slurm.gpus_per_node GPUs (for the recipe's node count, or one), the account
may use it, paths.runs_dir and paths.squash_dir are writable, the model
directories exist and the image is a squash file or a reference that can be
imported. With a recipe it checks what that run uses, including the job
description (sbatch directives). 'slurmbench run' runs the same checks
before it imports anything (--no-preflight skips them).

--probe also submits a one-node job (a few seconds once it starts) that
reports the node's architecture, GPU count, enroot and pyxis, and checks
them against slurm.compute_arch, slurm.gpus_per_node and container.runtime.

Exit status: 0 when every check passes; 2 when the first failure is in the
profile, recipe or environment; 11 when slurmrestd or the cluster is
unreachable or unhealthy.

Examples:
  slurmbench doctor --profile profiles/testcluster.toml
  slurmbench doctor -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --probe
  slurmbench doctor -p profiles/gb300-nv.toml --json | jq '.checks[] | select(.state != "passed")'`,
		Flags: append(planFlags(),
			&cli.BoolFlag{Name: "probe", Usage: "also run a one-node probe job on the partition"},
			&cli.GenericFlag{Name: "probe-timeout", Usage: "how long the probe job may take, queue wait included", Value: duration.New(3*time.Minute, duration.Wait)},
			&cli.BoolFlag{Name: "json", Usage: "print the checks as JSON"},
		),
		Action: doctorAction,
	}
}

func doctorAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("doctor takes no arguments, got %q (did you mean --profile or --recipe?)", c.Args().First())
	}
	return launch.Doctor(c.Context, launch.DoctorOptions{IO: ioOf(c), Plan: planOptions(c, ""), Probe: c.Bool("probe"), ProbeTimeout: durationOf(c, "probe-timeout")})
}
