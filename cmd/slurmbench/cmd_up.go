package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
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
			&cli.GenericFlag{Name: "time-limit", Usage: "the job's time limit, replacing the profile's (e.g. 4h)", Value: duration.New(0, duration.JobTimeLimit)},
			&cli.BoolFlag{Name: "json", Usage: "print the deployment (job_id, endpoint, run_dir, ...) as JSON on stdout"},
			&cli.GenericFlag{Name: "cancel-wait", Usage: "how long to wait for a cancelled job to stop", Value: duration.New(30*time.Second, duration.Wait)},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
			&cli.BoolFlag{Name: "no-preflight", Usage: "skip the checks slurmbench doctor runs"},
			binaryDirFlag(),
		),
		Action: upAction,
	}
}

func upAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("up takes no arguments, got %q (did you mean --recipe?)", c.Args().First())
	}
	o := launch.UpOptions{IO: ioOf(c), Plan: planOptions(c, launch.AutoRunID), Follow: followFlags(c),
		BinaryDir: c.String("binary-dir"), NoPreflight: c.Bool("no-preflight"), TimeLimit: durationOf(c, "time-limit"), Nodes: intIfSet(c, "nodes")}
	return launch.Up(c.Context, o)
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
			&cli.GenericFlag{Name: "wait", Usage: "how long the deployment gets to stop before its job is cancelled", Value: duration.New(time.Minute, duration.Wait)},
			&cli.GenericFlag{Name: "cancel-wait", Usage: "how long to wait for a cancelled job to end", Value: duration.New(30*time.Second, duration.Wait)},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error {
			return launch.Down(c.Context, launch.DownOptions{IO: ioOf(c), Profile: c.String("profile"), Args: c.Args().Slice(),
				Wait: durationOf(c, "wait"), CancelWait: durationOf(c, "cancel-wait")})
		},
	}
}
