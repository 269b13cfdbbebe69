package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/report"
	"github.com/slurmbench/slurmbench/login/runner"
	"github.com/slurmbench/slurmbench/plan"
	"github.com/slurmbench/slurmbench/slurm"
)

func upCommand() *cli.Command {
	return &cli.Command{
		Name:      "up",
		Usage:     "start a recipe's topology and hold it: print the endpoint and job id, keep the job until slurmbench down",
		UsageText: "slurmbench up --profile FILE --recipe FILE [--nodes N] [--time-limit DURATION] [--json]",
		Description: `Plans the recipe as run does, imports the image and submits the job; the
driver starts infra, workers and frontend and waits for the health gate. Once
the deployment serves, up prints its endpoint and job id and returns: the job
stays, serving, until 'slurmbench down JOBID' or its time limit. Nothing of
the recipe's benchmark runs.

Use the endpoint with 'slurmbench bench --url' or 'eval --url' (from a host
that reaches the nodes), or queue runs on the deployment with
'slurmbench run --in JOBID': a recipe that starts the same servers runs on
them as they are; another recipe replaces them inside the allocation. --nodes
holds a larger allocation than the recipe needs, for a second recipe with
more workers; a recipe that needs more than the allocation is refused (exit 2,
naming the numbers).

If the job fails before it serves, up exits with run's code for the layer
that failed; an interrupt before then cancels the job.

` + exitCodesHelp + `

Examples:
  slurmbench up -p profiles/testcluster.toml -r examples/mock-2p1d.yaml
  slurmbench up -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --nodes 4 --time-limit 2h --json`,
		Flags: append(planFlags(),
			&cli.IntFlag{Name: "nodes", Usage: "nodes to hold (default: what the recipe needs)"},
			&cli.DurationFlag{Name: "time-limit", Usage: "the job's time limit, replacing the profile's (e.g. 4h)"},
			&cli.BoolFlag{Name: "json", Usage: "print the deployment (job_id, endpoint, run_dir, ...) as JSON on stdout"},
			&cli.DurationFlag{Name: "cancel-wait", Value: 30 * time.Second, Usage: "how long to wait for a cancelled job to stop"},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
			&cli.BoolFlag{Name: "no-preflight", Usage: "skip the checks slurmbench doctor runs"},
			binaryDirFlag(),
		),
		Action: upAction,
	}
}

// upPlan is the plan up submits: the recipe's, held, on nodes nodes.
func upPlan(c *cli.Context) (*plan.Plan, error) {
	if c.NArg() > 0 {
		return nil, configErrorf("up takes no arguments, got %q (did you mean --recipe?)", c.Args().First())
	}
	runID := autoRunID
	if c.IsSet("run-id") {
		runID = c.String("run-id")
	}
	pl, err := planFromFlags(c, runID)
	if err != nil {
		return nil, err
	}
	pl.Serve = true
	if c.IsSet("nodes") {
		n := c.Int("nodes")
		if err := pl.Fits(n, pl.Slurm.GPUsPerNode); err != nil {
			return nil, configErrorf("--nodes %d: %v", n, err)
		}
		pl.Slurm.Nodes = n
	}
	if c.IsSet("time-limit") {
		m, err := profile.TimeLimitMinutes(c.Duration("time-limit"))
		if err != nil {
			return nil, configErrorf("--time-limit %w", err)
		}
		pl.Slurm.TimeLimitMinutes = m
	}
	if err := checkRunInputs(c, pl); err != nil {
		return nil, err
	}
	return pl, nil
}

// upInfo is what up prints of a serving deployment.
type upInfo struct {
	JobID    string `json:"job_id"`
	RunID    string `json:"run_id"`
	RunDir   string `json:"run_dir"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Nodes    int    `json:"nodes"`
	Profile  string `json:"profile"`
}

func upAction(c *cli.Context) error {
	stderr := c.App.ErrWriter
	ctx := c.Context
	pl, err := upPlan(c)
	if err != nil {
		return err
	}
	prof, err := profile.Load(pl.Profile.Path)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	bin, err := jobBinary(c, prof)
	if err != nil {
		return err
	}
	if !c.Bool("no-preflight") {
		if err := runPreflight(ctx, stderr, prof, pl); err != nil {
			return err
		}
	}
	client, err := newSlurmClient(ctx, prof)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	fmt.Fprintf(stderr, "slurmbench up %s: %d nodes held (%s uses %d), %d GPUs\n",
		pl.RunID, pl.Slurm.Nodes, pl.Name, pl.Nodes, pl.GPUs.Total)
	driverLog := io.Writer(&prefixWriter{w: stderr, prefix: "  | "})
	if c.Bool("no-driver-log") {
		driverLog = io.Discard
	}
	res, err := runner.Run(ctx, runner.Options{
		Plan: pl, Binary: bin, Client: client, Hold: true,
		Import:   func(ctx context.Context, p *plan.Plan) error { return importImage(ctx, prof, client, p, stderr) },
		JobEnv:   jobEnv(pl),
		Progress: stderr, DriverLog: driverLog,
		CancelWait: c.Duration("cancel-wait"), Interrupted: interruptedLayer(ctx), Hard: hardStop(ctx),
		OnSubmitted: func(id slurm.JobID) { earlyOutputs(stderr, pl, id) },
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
	info := upInfo{JobID: res.JobID.String(), RunID: pl.RunID, RunDir: pl.RunDir, Endpoint: res.Serving.Endpoint,
		Model: pl.Model.ServedName, Nodes: pl.Slurm.Nodes, Profile: pl.Profile.Path}
	if p := os.Getenv("GITHUB_OUTPUT"); p != "" && report.Enabled(os.Getenv) {
		if err := report.AppendOutputs(p, map[string]string{"job_id": info.JobID, "endpoint": info.Endpoint, "run_dir": info.RunDir}); err != nil {
			fmt.Fprintf(stderr, "slurmbench: writing GitHub outputs: %v\n", err)
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(info)
	}
	w := c.App.Writer
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
func runInHint(info upInfo, pl *plan.Plan) string {
	argv := []string{"slurmbench", "run", "--in", info.JobID, "-p", info.Profile, "-r", pl.Recipe.Path}
	for _, o := range pl.Recipe.Overrides {
		flag, arg, _ := strings.Cut(o, " ")
		argv = append(argv, flag, arg)
	}
	return plan.QuoteArgv(argv)
}

func downCommand() *cli.Command {
	return &cli.Command{
		Name:      "down",
		Usage:     "end a held deployment (slurmbench up): stop its servers and its job",
		UsageText: "slurmbench down --profile FILE JOBID [--wait DURATION]",
		Description: `Asks the held deployment to stop: the run it is running stops, runs still
queued on it end as cancelled (their 'run --in' exits 5), every server
stops and the job ends COMPLETED. If the job has not ended within --wait (at
once while it is still pending) it is cancelled. down refuses a job that is
not a held deployment (slurmbench cancel ends any job); a job that has
already ended is not an error.

Examples:
  slurmbench down -p profiles/testcluster.toml 4242
  slurmbench down -p profiles/testcluster.toml 4242 --wait 2m`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.DurationFlag{Name: "wait", Value: time.Minute, Usage: "how long the deployment gets to stop before its job is cancelled"},
			&cli.DurationFlag{Name: "cancel-wait", Value: 30 * time.Second, Usage: "how long to wait for a cancelled job to end"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return configErrorf("give one JOBID")
			}
			if c.String("profile") == "" {
				return configErrorf("--profile: required (or SLURMBENCH_PROFILE)")
			}
			prof, err := profile.Load(c.String("profile"))
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			client, err := newSlurmClient(c.Context, prof)
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			h, err := heldOf(c, client, c.Args().First())
			if err != nil {
				return err
			}
			job, err := runner.Down(c.Context, h, runner.DownOptions{Client: client, Wait: c.Duration("wait"),
				CancelWait: c.Duration("cancel-wait"), Progress: c.App.ErrWriter})
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "held deployment job %d is down: %s (run dir %s)\n", job.ID, job.Outcome(), h.Plan.RunDir)
			return nil
		},
	}
}

// heldOf finds the held deployment of job id (a JOBID argument or --in).
func heldOf(c *cli.Context, client *slurm.Client, arg string) (runner.Held, error) {
	id, err := slurm.ParseJobID(arg)
	if err != nil {
		return runner.Held{}, configErrorf("JOBID %q: %v", arg, err)
	}
	return runner.FindHeld(c.Context, client, id)
}
