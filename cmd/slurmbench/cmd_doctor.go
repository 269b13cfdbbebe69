package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
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
  slurmbench doctor -p profiles/gb300-nv.toml --json | jq '.checks[] | select(.ok | not)'`,
		Flags: append(planFlags(),
			&cli.BoolFlag{Name: "probe", Usage: "also run a one-node probe job on the partition"},
			&cli.DurationFlag{Name: "probe-timeout", Value: 3 * time.Minute, Usage: "how long the probe job may take, queue wait included"},
			&cli.BoolFlag{Name: "json", Usage: "print the checks as JSON"},
		),
		Action: doctorAction,
	}
}

func doctorAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("doctor takes no arguments, got %q (did you mean --profile or --recipe?)", c.Args().First())
	}
	if c.String("profile") == "" {
		return configErrorf("--profile: required (or SLURMBENCH_PROFILE)")
	}
	prof, err := profile.Load(c.String("profile"))
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	var pl *plan.Plan
	if c.String("recipe") != "" || c.String("config-file") != "" || c.String("master") != "" || c.String("key") != "" {
		if pl, err = planFromFlags(c, ""); err != nil {
			return err
		}
	}
	start := time.Now()
	rep := preflight.Run(c.Context, preflight.Options{
		Profile: prof, Plan: pl, Probe: c.Bool("probe"), ProbeTimeout: c.Duration("probe-timeout"), Progress: c.App.ErrWriter,
	})
	elapsed := time.Since(start)
	if c.Bool("json") {
		if err := writeJSON(c.App.Writer, rep); err != nil {
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

// runPreflight is run's preflight: doctor's checks for this plan (no
// probe), before anything is imported or created. A failure exits 2, or 4
// (submit) when slurmrestd or the cluster is the problem: run's exit codes
// are the layers of a run, and 11 is the operator commands'.
func runPreflight(ctx context.Context, w io.Writer, prof *profile.Profile, pl *plan.Plan) error {
	start := time.Now()
	rep := preflight.Run(ctx, preflight.Options{Profile: prof, Plan: pl})
	if err := rep.Err(); err != nil {
		code := rep.ExitCode()
		if code == exitcode.Slurm {
			code = exitcode.Submit
		}
		return exitcode.With(code, err)
	}
	fmt.Fprintf(w, "preflight: %d checks passed in %s (slurmbench doctor shows them)\n", len(rep.Checks), time.Since(start).Round(time.Millisecond))
	return nil
}
