package main

import (
	"context"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/job/driver"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

const exitCodesHelp = `Exit codes: 0 success; 2 config (nothing submitted); 3 image; 4 submit;
5 allocation/queue; 6 health; 7 engine crash; 8 benchmark validity (a point
missing or invalid); 9 eval threshold; 10 collection/staging; 11 slurmrestd
unreachable or erroring; 130 SIGINT; 143 SIGTERM or SIGHUP.`

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one benchmark point: plan, import, submit, follow, collect",
		UsageText: "slurmbench run --profile FILE --recipe FILE [--conc LIST] [--stage-dir DIR]",
		Description: `Plans the point (as render shows it), checks it against the cluster as
'slurmbench doctor' does (a failed check exits 2, or 11 when slurmrestd cannot
be reached, before anything is imported; --no-preflight skips the checks),
imports the image, copies itself and the plan into a fresh run directory on
the shared filesystem, submits the job through slurmrestd, and follows it:
job state, the driver's phases, health wait and benchmark progress, and the
driver's log. At the end it requires COMPLETED 0:0 and the driver's
"succeeded", checks every requested point,
writes a manifest and stages results under InferenceX's names.

On SIGINT, SIGTERM or SIGHUP, and on any error after submitting, it cancels
the job, waits (bounded) until it has stopped, and bundles the logs. A second
SIGINT stops waiting once the cancel request is sent.

The run directory's submit journal names the job the moment it is known.
Run again with the same --run-id (a GitHub re-run, after the runner was
killed) and the same inputs, and run adopts that job instead of submitting
another: it follows, collects and stages it. Results and LOGS/ are staged
only where nothing of another run would be overwritten (--overwrite
replaces), and every destination is checked before anything is written.

With --in JOBID it submits nothing: the run is queued on the held
deployment of that job (slurmbench up), which runs it on its servers when
the recipe starts the same ones, or stops them and starts the recipe's own
inside the allocation, refusing (exit 2, naming the numbers) a recipe that
needs more nodes or GPUs than the allocation has. Runs queued on one
deployment run one after another, each with its own run directory, names
and staging; an interrupt stops the run, not the deployment. Run inside an
allocation of your own (salloc's shell or a batch script, where
SLURM_JOB_ID is JOBID), --in starts the recipe's topology in it through
srun, driven from this process, with no slurmrestd needed (the image must
then be in the squash cache when it is imported for another architecture).

In InferenceX's workflow (RUNNER_NAME set, no flag naming a recipe, or
--from-env) the environment is the point, as for "python -m infx.launch
run": SRT_RECIPE, IMAGE, CONC_LIST, RESULT_FILENAME, ... (a missing or
bad one exits 2 naming it); the job is named inferencex-<runner>, results
are staged into GITHUB_WORKSPACE under InferenceX's names, the eval is
InferenceX's srt_eval.sh, and job_event.json is written whatever happens
(docs/inferencex.md).

Under GitHub Actions (GITHUB_ACTIONS=true) it reads the workflow's variables
as flag fallbacks, stages into $GITHUB_WORKSPACE, groups its output, writes a
step summary and the outputs job_id, run_dir and outcome (job_id and
run_dir as soon as the job is known).

` + exitCodesHelp + `

Examples:
  slurmbench run -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --stage-dir out/
  slurmbench run -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --run-eval true --conc 8
  CONFIG_FILE=recipes/mock-2p1d.yaml slurmbench run -p profiles/testcluster.toml --recipes-root examples
  slurmbench run --in 4242 -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --conc 64 --stage-dir out/
  slurmbench run --in "$SLURM_JOB_ID" -p profiles/testcluster.toml -r examples/mock-2p1d.yaml --stage-dir out/`,
		Flags: append(planFlags(),
			&cli.StringFlag{Name: "stage-dir", Usage: "stage results, LOGS/ and the logs bundle here", EnvVars: []string{"GITHUB_WORKSPACE"}},
			&cli.StringFlag{Name: "result-filename", Usage: "InferenceX RESULT_FILENAME for staged names (default: the recipe name)", EnvVars: []string{"RESULT_FILENAME"}},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace different files already in the stage dir"},
			&cli.GenericFlag{Name: "cancel-wait", Usage: "how long to wait for a cancelled job to stop", Value: duration.New(30*time.Second, duration.Wait)},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
			&cli.BoolFlag{Name: "no-preflight", Usage: "skip the checks slurmbench doctor runs (slurmrestd, token, partition, nodes, paths, model, image)"},
			&cli.StringFlag{Name: "in", Usage: "JOBID of a held deployment (slurmbench up), or of the allocation this runs inside, to run in instead of submitting a job"},
			binaryDirFlag(), jsonFlag(), fromEnvFlag(),
		),
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("run takes no arguments, got %q (did you mean --recipe?)", c.Args().First())
	}
	if ok, err := workflowRun(c); ok {
		return err
	}
	o := launch.RunOptions{
		IO: ioOf(c), Plan: planOptions(c, launch.AutoRunID), Stage: stageFlags(c), Follow: followFlags(c),
		BinaryDir: c.String("binary-dir"), NoPreflight: c.Bool("no-preflight"), Drive: driveHere, In: stringIfSet(c, "in"),
	}
	return launch.Run(c.Context, o)
}

func stageFlags(c *cli.Context) launch.StageOptions {
	return launch.StageOptions{StageDir: c.String("stage-dir"), ResultFilename: c.String("result-filename"), Overwrite: c.Bool("overwrite")}
}

func followFlags(c *cli.Context) launch.FollowOptions {
	return launch.FollowOptions{CancelWait: durationOf(c, "cancel-wait"), NoDriverLog: c.Bool("no-driver-log")}
}

// driveHere runs a plan's driver in this process, inside allocation a: the
// in-job side, which the login-node package launch does not import.
func driveHere(a runner.Allocation) runner.Drive {
	return func(ctx context.Context, pl *plan.Plan, log io.Writer) error {
		_, err := driver.Run(ctx, driver.Options{PlanFile: pl.PlanFile, JobID: a.JobID.String(), NodeList: a.NodeList, Log: log,
			ProducerVersion: version, ProducerCommit: commit})
		return err
	}
}

// binaryDirFlag names where run finds the slurmbench binary for compute
// nodes of another architecture than this machine's.
func binaryDirFlag() cli.Flag {
	return &cli.StringFlag{Name: "binary-dir", EnvVars: []string{"SLURMBENCH_BINARY_DIR"},
		Usage: "directory holding linux-amd64/slurmbench and linux-arm64/slurmbench (default: next to this binary, as make build lays them out)"}
}
