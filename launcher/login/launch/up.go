package launch

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/slurm"
)

// UpOptions are `slurmbench up`'s.
type UpOptions struct {
	IO
	Plan        PlanOptions
	Follow      FollowOptions
	BinaryDir   string
	NoPreflight bool
	// Nodes to hold (nil: what the recipe needs).
	Nodes *int
	// TimeLimit replaces the profile's (0: not given).
	TimeLimit time.Duration
}

// UpInfo is what up prints of a serving deployment.
type UpInfo struct {
	JobID    string `json:"job_id"`
	RunID    string `json:"run_id"`
	RunDir   string `json:"run_dir"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Nodes    int    `json:"nodes"`
	Profile  string `json:"profile"`
}

// upPlan is the plan up submits: the recipe's, held, on o.Nodes nodes.
func upPlan(ctx context.Context, o *UpOptions) (*plan.Plan, *profile.Profile, error) {
	if o.Plan.RunID == "" {
		o.Plan.RunID = AutoRunID
	}
	o.Plan.Warn = o.Stderr
	pl, prof, err := Plan(ctx, o.Plan)
	if err != nil {
		return nil, nil, err
	}
	pl.Serve = true
	if o.Nodes != nil {
		n := *o.Nodes
		if err := pl.Fits(n, pl.Slurm.GPUsPerNode); err != nil {
			return nil, nil, exitcode.Errorf(exitcode.Config, "--nodes %d: %v", n, err)
		}
		pl.Slurm.Nodes = n
	}
	if o.TimeLimit != 0 {
		m, err := profile.TimeLimitMinutes(o.TimeLimit)
		if err != nil {
			return nil, nil, exitcode.Errorf(exitcode.Config, "--time-limit %w", err)
		}
		pl.Slurm.TimeLimitMinutes = m
	}
	if err := checkRunInputs(pl, StageOptions{}); err != nil {
		return nil, nil, err
	}
	return pl, prof, nil
}

// Up starts a recipe's topology held, and returns once it serves, printing
// the endpoint and job id (UpInfo as JSON with o.JSON).
func Up(ctx context.Context, o UpOptions) error {
	stderr := o.Stderr
	pl, prof, err := upPlan(ctx, &o)
	if err != nil {
		return err
	}
	bin, err := JobBinary(stderr, prof, o.BinaryDir)
	if err != nil {
		return err
	}
	if !o.NoPreflight {
		if err := Preflight(ctx, stderr, prof, pl); err != nil {
			return err
		}
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	fmt.Fprintf(stderr, "slurmbench up %s: %d nodes held (%s uses %d), %d GPUs\n",
		pl.RunID, pl.Slurm.Nodes, pl.Name, pl.Nodes, pl.GPUs.Total)
	res, err := runner.Run(ctx, runner.Options{
		Plan: pl, Binary: bin, Client: client, Hold: true,
		Import: func(ctx context.Context, p *plan.Plan) error {
			return ImportImage(ctx, prof, client, p, stderr, o.Version)
		},
		JobEnv:   JobEnv(pl),
		Progress: stderr, DriverLog: driverLog(stderr, o.Follow),
		CancelWait: o.Follow.CancelWait, Interrupted: o.Interrupted, Hard: o.Hard,
		OnSubmitted: func(id slurm.JobID) { EarlyOutputs(stderr, pl, id) },
	})
	if err != nil {
		if res != nil && res.Outcome.Message != "" {
			fmt.Fprintf(stderr, "slurmbench up: %s\n", res.Outcome.Message)
			for _, l := range res.Outcome.LastLines {
				fmt.Fprintf(stderr, "  %s\n", l)
			}
		}
		return err
	}
	info := UpInfo{JobID: res.JobID.String(), RunID: pl.RunID, RunDir: pl.RunDir, Endpoint: res.Serving.Endpoint,
		Model: pl.Model.ServedName, Nodes: pl.Slurm.Nodes, Profile: pl.Profile.Path}
	if p := os.Getenv("GITHUB_OUTPUT"); p != "" && report.Enabled(os.Getenv) {
		if err := report.AppendOutputs(p, map[string]string{"job_id": info.JobID, "endpoint": info.Endpoint, "run_dir": info.RunDir}); err != nil {
			fmt.Fprintf(stderr, "slurmbench: writing GitHub outputs: %v\n", err)
		}
	}
	if o.JSON {
		return WriteJSON(o.Stdout, info)
	}
	w := o.Stdout
	fmt.Fprintf(w, "held deployment: job %s serves %s\n", info.JobID, pl.Name)
	fmt.Fprintf(w, "  endpoint  %s  (model %s)\n", info.Endpoint, info.Model)
	fmt.Fprintf(w, "  run dir   %s\n", info.RunDir)
	fmt.Fprintf(w, "  held      until slurmbench down or the job's time limit (%d min)\n", pl.Slurm.TimeLimitMinutes)
	fmt.Fprintf(w, "\n  slurmbench bench --url %s --model %s --isl %d --osl %d --conc 8x32\n", info.Endpoint, info.Model, pl.Benchmark.ISL, pl.Benchmark.OSL)
	fmt.Fprintf(w, "  %s\n", runInHint(info, pl))
	fmt.Fprintf(w, "  slurmbench down -p %s %s\n", info.Profile, info.JobID)
	return nil
}

// runInHint is the run --in command for a held deployment, with the
// recipe's --set/--unset edits: without them run --in plans another recipe.
func runInHint(info UpInfo, pl *plan.Plan) string {
	argv := []string{"slurmbench", "run", "--in", info.JobID, "-p", info.Profile, "-r", pl.Recipe.Path}
	for _, o := range pl.Recipe.Overrides {
		flag, arg, _ := strings.Cut(o, " ")
		argv = append(argv, flag, arg)
	}
	return plan.QuoteArgv(argv)
}

// DownOptions are `down`'s: the held deployment's job (one JOBID in Args)
// and how long it gets to stop.
type DownOptions struct {
	IO
	Profile          string
	Args             []string
	Wait, CancelWait time.Duration
}

// Down is `down`: it ends a held deployment (slurmbench up) and says how
// its job ended.
func Down(ctx context.Context, o DownOptions) error {
	if len(o.Args) != 1 {
		return exitcode.Errorf(exitcode.Config, "give one JOBID")
	}
	prof, err := LoadProfile(ctx, o.Profile)
	if err != nil {
		return err
	}
	client, err := prof.SlurmClient()
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	id, err := slurm.ParseJobID(o.Args[0])
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "JOBID %q: %v", o.Args[0], err)
	}
	h, err := runner.FindHeld(ctx, client, id)
	if err != nil {
		return err
	}
	job, err := runner.Down(ctx, h, runner.DownOptions{Client: client, Wait: o.Wait, CancelWait: o.CancelWait, Progress: o.Stderr})
	if err != nil {
		return err
	}
	if o.JSON {
		return WriteJSON(o.Stdout, map[string]any{"job_id": job.ID, "state": job.Outcome(), "run_dir": h.Plan.RunDir})
	}
	fmt.Fprintf(o.Stdout, "held deployment job %d is down: %s (run dir %s)\n", job.ID, job.Outcome(), h.Plan.RunDir)
	return nil
}
