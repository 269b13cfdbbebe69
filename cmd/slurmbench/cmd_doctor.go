package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/launch"
	"github.com/slurmbench/slurmbench/login/preflight"
	"github.com/slurmbench/slurmbench/plan"
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
	po := planOptions(c, "")
	var pl *plan.Plan
	var prof *profile.Profile
	var err error
	if po.HasRecipe() {
		pl, prof, err = launch.Plan(c.Context, po)
	} else {
		prof, err = launch.LoadProfile(c.Context, po.Profile)
	}
	if err != nil {
		return err
	}
	start := time.Now()
	rep := preflight.Run(c.Context, preflight.Options{
		Profile: prof, Plan: pl, Probe: c.Bool("probe"), ProbeTimeout: durationOf(c, "probe-timeout"), Progress: c.App.ErrWriter,
	})
	elapsed := time.Since(start)
	if c.Bool("json") {
		if err := launch.WriteJSON(c.App.Writer, rep); err != nil {
			return err
		}
	} else {
		if err := rep.WriteText(c.App.Writer); err != nil {
			return err
		}
		fmt.Fprintf(c.App.Writer, "%d checks, %d failed, in %s\n", len(rep.Checks), len(rep.Failed()), elapsed.Round(time.Millisecond))
	}
	if rep.OK() {
		return nil
	}
	// The failed lines above say it all; only the exit code is left.
	return exitcode.With(rep.ExitCode(), errors.New(""))
}
