package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/job/driver"
	"github.com/slurmbench/slurmbench/login/report"
	"github.com/slurmbench/slurmbench/login/runner"
	"github.com/slurmbench/slurmbench/login/submit"
	"github.com/slurmbench/slurmbench/plan"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/rundir"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/hostlist"
)

// workflowVars are the benchmark-multinode workflow's non-secret variables
// the in-job steps read (eval metadata, thresholds); passed to the job when set.
var workflowVars = []string{"MODEL", "MODEL_PREFIX", "FRAMEWORK", "PRECISION", "ISL", "OSL", "SPEC_DECODING", "DISAGG",
	"RUNNER_TYPE", "RUNNER_NAME", "RESULT_FILENAME", "EVAL_LIMIT", "EVAL_MAX_MODEL_LEN", "MAX_MODEL_LEN",
	"PREFILL_NUM_WORKERS", "PREFILL_TP", "PREFILL_EP", "PREFILL_DP_ATTN", "DECODE_NUM_WORKERS", "DECODE_TP", "DECODE_EP", "DECODE_DP_ATTN",
	// What a custom benchmark (InferenceX's agentic_srt.sh) reads from the
	// workflow, which srtctl's jobs inherit; the recipe's benchmark.env wins.
	"CONC_LIST", "CONC", "DURATION", "AIPERF_EXPERIMENTAL_FAST", "KV_OFFLOADING", "KV_OFFLOAD_BACKEND",
	"KV_OFFLOAD_BACKEND_METADATA", "IS_AGENTIC", "SCENARIO_TYPE", "REQUIRE_POWER"}

const exitCodesHelp = `Exit codes: 0 success; 2 config (nothing submitted); 3 image; 4 submit;
5 allocation/queue; 6 health; 7 engine crash; 8 benchmark validity (a point
missing or invalid); 9 eval threshold; 10 collection/staging; 130 SIGINT;
143 SIGTERM or SIGHUP.`

func runCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run one benchmark point: plan, import, submit, follow, collect",
		UsageText: "slurmbench run --profile FILE --recipe FILE [--conc LIST] [--stage-dir DIR]",
		Description: `Plans the point (as render shows it), checks it against the cluster as
'slurmbench doctor' does (a failed check exits 2, or 4 when slurmrestd cannot
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
			&cli.DurationFlag{Name: "cancel-wait", Value: 30 * time.Second, Usage: "how long to wait for a cancelled job to stop"},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
			&cli.BoolFlag{Name: "no-preflight", Usage: "skip the checks slurmbench doctor runs (slurmrestd, token, partition, nodes, paths, model, image)"},
			&cli.StringFlag{Name: "in", Usage: "JOBID of a held deployment (slurmbench up), or of the allocation this runs inside, to run in instead of submitting a job"},
			binaryDirFlag(),
		),
		Action: runAction,
	}
}

func runAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("run takes no arguments, got %q (did you mean --recipe?)", c.Args().First())
	}
	stderr := c.App.ErrWriter
	gha := report.Enabled(os.Getenv)

	// main owns the signals: its context is cancelled by the first one,
	// and a second SIGINT closes hardStop (stop waiting for the cancelled job).
	ctx := c.Context
	interrupted := interruptedLayer(ctx)

	if gha {
		report.Group(stderr, "slurmbench: plan")
	}
	// A fresh run id unless --run-id names one (it was silently ignored).
	runID := autoRunID
	if c.IsSet("run-id") {
		runID = c.String("run-id")
	}
	pl, err := planFromFlags(c, runID)
	if err == nil {
		err = checkRunInputs(c, pl)
	}
	if gha {
		report.EndGroup(stderr)
	}
	if err != nil {
		if gha {
			report.Error(stderr, "slurmbench: configuration", err.Error())
		}
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
	var inJob slurm.JobID
	if in := c.String("in"); in != "" {
		if inJob, err = slurm.ParseJobID(in); err != nil {
			return configErrorf("--in %q: %v", in, err)
		}
	}
	// Inside the allocation itself (salloc's shell, a batch script) the run
	// is driven from here through srun: slurmrestd need not be reachable.
	inside := inJob != 0 && os.Getenv("SLURM_JOB_ID") == inJob.String()
	if inside {
		fmt.Fprintf(stderr, "preflight: skipped inside allocation %d (srun starts the steps, slurmrestd is not asked)\n", inJob)
	} else if !c.Bool("no-preflight") {
		if err := runPreflight(ctx, stderr, prof, pl); err != nil {
			if gha {
				report.Error(stderr, "slurmbench: preflight", err.Error())
			}
			return err
		}
	}
	client, err := newSlurmClient(ctx, prof)
	switch {
	case err != nil && inside:
		// Inside the allocation slurmrestd is optional: without it the
		// image must already be imported and the manifest names no Slurm
		// version.
		client = nil
	case err != nil:
		return exitcode.With(exitcode.Config, err)
	}
	var held *runner.Held
	var alloc *runner.Allocation
	if inside {
		a, err := thisAllocation(inJob, pl)
		if err != nil {
			return err
		}
		if err := pl.Fits(a.Nodes, a.GPUsPerNode); err != nil {
			return configErrorf("--in %d: %v", inJob, err)
		}
		alloc = &a
	} else if inJob != 0 {
		h, err := runner.FindHeld(ctx, client, inJob)
		if err != nil {
			return err
		}
		if h.Job.Terminal() {
			return configErrorf("--in %d: the held deployment's job has ended (%s)", inJob, h.Job.Outcome())
		}
		if err := pl.Fits(h.Nodes(), h.GPUsPerNode()); err != nil {
			return configErrorf("--in %d: %v", inJob, err)
		}
		held = &h
	}
	where := ""
	switch {
	case held != nil:
		where = fmt.Sprintf(", in held job %d", held.Job.ID)
	case alloc != nil:
		where = fmt.Sprintf(", inside allocation %d", alloc.JobID)
	}
	fmt.Fprintf(stderr, "slurmbench run %s: %d nodes, %d GPUs (%d prefill + %d decode), %d points%s\n",
		pl.RunID, pl.Nodes, pl.GPUs.Total, pl.GPUs.Prefill, pl.GPUs.Decode, len(pl.Points), where)

	driverLog := io.Writer(&prefixWriter{w: stderr, prefix: "  | "})
	if c.Bool("no-driver-log") {
		driverLog = io.Discard
	}
	group := ""
	opts := runner.Options{
		Plan: pl, Binary: bin, Client: client,
		Import:   func(ctx context.Context, p *plan.Plan) error { return importImage(ctx, prof, client, p, stderr) },
		JobEnv:   jobEnv(pl),
		Progress: stderr, DriverLog: driverLog,
		CancelWait: c.Duration("cancel-wait"), Interrupted: interrupted, Hard: hardStop(ctx),
		OnPhase: func(phase rundir.Phase, _ rundir.Status) {
			if !gha {
				return
			}
			if group != "" {
				report.EndGroup(stderr)
			}
			group = string(phase)
			report.Group(stderr, "slurmbench: "+string(phase))
		},
		OnSubmitted: func(id slurm.JobID) { earlyOutputs(stderr, pl, id) },
		Stage:       stageOptions(c, pl),
	}
	var res *runner.Result
	var runErr error
	switch {
	case held != nil:
		res, runErr = runner.RunIn(ctx, opts, *held)
	case alloc != nil:
		res, runErr = runner.RunInAllocation(ctx, opts, *alloc, driveHere(*alloc))
	default:
		res, runErr = runner.Run(ctx, opts)
	}
	if gha && group != "" {
		report.EndGroup(stderr)
	}
	return reportRun(c, pl, res, runErr)
}

// stageOptions are where run and attach stage results, from their flags.
func stageOptions(c *cli.Context, pl *plan.Plan) runner.CollectOptions {
	return runner.CollectOptions{
		StageDir: c.String("stage-dir"), ResultFilename: c.String("result-filename"), Overwrite: c.Bool("overwrite"),
		Provenance: results.Provenance{
			ImageRef: pl.Image.Ref, RecipeSHA256: pl.Recipe.SHA256, ProfilePath: pl.Profile.Path,
			SlurmbenchVersion: version, Extra: pl.Recipe.ManifestExtra(),
		},
	}
}

// earlyOutputs gives the workflow the job id and run directory the moment
// the job is known, so a step cancelled hard afterwards still names them.
func earlyOutputs(stderr io.Writer, pl *plan.Plan, id slurm.JobID) {
	if p := os.Getenv("GITHUB_OUTPUT"); p != "" && report.Enabled(os.Getenv) {
		if err := report.AppendOutputs(p, map[string]string{"job_id": id.String(), "run_id": pl.RunID, "run_dir": pl.RunDir}); err != nil {
			fmt.Fprintf(stderr, "slurmbench: writing GitHub outputs: %v\n", err)
		}
	}
}

// reportRun prints a run's (or attach's) summary, and under GitHub Actions
// writes the step summary, outputs and annotations.
func reportRun(c *cli.Context, pl *plan.Plan, res *runner.Result, runErr error) error {
	stderr := c.App.ErrWriter
	sum := runner.Summary(pl, res, runErr)
	fmt.Fprint(c.App.Writer, sum.Text())
	if report.Enabled(os.Getenv) {
		if err := writeGitHub(sum); err != nil {
			fmt.Fprintf(stderr, "slurmbench: writing GitHub outputs: %v\n", err)
		}
		if res != nil && res.Collected != nil && res.Collected.ParetoChart != "" {
			appendStepSummary(c, "\n#### Throughput per GPU against interactivity (pareto.svg)\n\n"+res.Collected.ParetoChart)
		}
		sum.Annotate(stderr)
	}
	return runErr
}

// checkRunInputs checks what is only used after the job ran or while it is
// submitted — the job description's sbatch directives, the result filename,
// the stage directory — so a bad value costs no import and no allocation.
func checkRunInputs(c *cli.Context, pl *plan.Plan) error {
	if err := runner.CheckRunDir(pl); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if _, err := submit.JobSpec(pl, nil); err != nil {
		return exitcode.With(exitcode.Config, fmt.Errorf("profile %s: %w", pl.Profile.Path, err))
	}
	err := runner.CheckStaging(pl, runner.CollectOptions{StageDir: c.String("stage-dir"), ResultFilename: c.String("result-filename")})
	return exitcode.With(exitcode.Config, err)
}

func writeGitHub(sum report.Summary) error {
	var errs []error
	if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" {
		errs = append(errs, report.AppendSummary(p, sum.Markdown()))
	}
	if p := os.Getenv("GITHUB_OUTPUT"); p != "" {
		errs = append(errs, report.AppendOutputs(p, sum.Outputs()))
	}
	return errors.Join(errs...)
}

// importImage makes the plan's squash file exist, importing under a lock.
func importImage(ctx context.Context, prof *profile.Profile, client *slurm.Client, pl *plan.Plan, log io.Writer) error {
	if pl.Image.Ref == "" || pl.Runtime == profile.RuntimeNone {
		return nil
	}
	ref, err := enroot.ParseRef(pl.Image.Ref)
	if err != nil {
		return err
	}
	opts := enroot.Options{SquashDir: prof.Paths.SquashDir, Enroot: prof.Container.Enroot, Version: version, Output: log,
		Arch: prof.ImportArch(), Runner: importRunner(prof, client, jobEnv(pl)[:1], log), ResolveDigest: true}
	if prof.ImportOnCompute() && client == nil {
		opts.Runner = noImportJob{}
	}
	imp, err := enroot.NewImporter(opts)
	if err != nil {
		return err
	}
	r, err := imp.Import(ctx, ref)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "%s image %s: %s (%s)\n", time.Now().UTC().Format("15:04:05"), r.Action, r.Path, r.Elapsed.Round(time.Millisecond))
	return nil
}

// jobEnv is the job's environment: a PATH, the profile's passthrough
// variables (values travel here, never in argv), and the workflow's own.
func jobEnv(pl *plan.Plan) []string {
	env := []string{"PATH=" + firstNonEmptyEnv("SLURMBENCH_JOB_PATH", slurm.DefaultJobEnvironment[0][len("PATH="):])}
	seen := map[string]bool{"PATH": true}
	for _, n := range append(append([]string{}, pl.EnvPassthrough...), workflowVars...) {
		if v, ok := os.LookupEnv(n); ok && !seen[n] {
			env = append(env, n+"="+v)
			seen[n] = true
		}
	}
	return env
}

func firstNonEmptyEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// prefixWriter prefixes each line (the driver log, inside run's output).
type prefixWriter struct {
	w      io.Writer
	prefix string
	mid    bool
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	var sb strings.Builder
	for _, c := range string(b) {
		if !p.mid {
			sb.WriteString(p.prefix)
			p.mid = true
		}
		sb.WriteRune(c)
		if c == '\n' {
			p.mid = false
		}
	}
	_, err := io.WriteString(p.w, sb.String())
	return len(b), err
}

// thisAllocation is the allocation this process runs in, from the
// environment Slurm gives salloc's shell and a batch script. GPUs per node
// are SLURM_GPUS_ON_NODE's when Slurm set it, else the profile's (whole
// nodes).
func thisAllocation(id slurm.JobID, pl *plan.Plan) (runner.Allocation, error) {
	nodeList := os.Getenv("SLURM_JOB_NODELIST")
	hosts, err := hostlist.Expand(nodeList)
	if err != nil || len(hosts) == 0 {
		return runner.Allocation{}, configErrorf("--in %d: SLURM_JOB_NODELIST %q names no nodes", id, nodeList)
	}
	gpus := pl.Slurm.GPUsPerNode
	if v := os.Getenv("SLURM_GPUS_ON_NODE"); v != "" {
		if gpus, err = strconv.Atoi(v); err != nil {
			return runner.Allocation{}, configErrorf("--in %d: SLURM_GPUS_ON_NODE %q is not a number", id, v)
		}
	}
	if _, err := exec.LookPath("srun"); err != nil {
		return runner.Allocation{}, configErrorf("--in %d: srun is not on PATH: inside an allocation, the run's steps start with srun", id)
	}
	return runner.Allocation{JobID: id, NodeList: nodeList, Nodes: len(hosts), GPUsPerNode: gpus}, nil
}

// driveHere runs a plan's driver in this process, inside allocation a.
func driveHere(a runner.Allocation) runner.Drive {
	return func(ctx context.Context, pl *plan.Plan, log io.Writer) error {
		_, err := driver.Run(ctx, driver.Options{PlanFile: pl.PlanFile, JobID: a.JobID.String(), NodeList: a.NodeList, Log: log,
			ProducerVersion: version, ProducerCommit: commit})
		return err
	}
}

// noImportJob stands for the import job a run without slurmrestd (inside
// an allocation, no token) cannot submit: a squash already in the cache is
// used, anything else is an error saying what to do.
type noImportJob struct{}

func (noImportJob) Run(context.Context, enroot.Command) error {
	return errors.New("the image is not in the squash cache and importing it for the compute nodes' architecture needs a job, submitted through slurmrestd, which this run cannot reach: import it first (slurmbench images import)")
}
