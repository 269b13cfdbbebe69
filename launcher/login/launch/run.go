package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/arch"
	"github.com/slurmbench/slurmbench/launcher/login/preflight"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/login/submit"
	"github.com/slurmbench/slurmbench/launcher/login/webreport"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/slurm"
	"github.com/slurmbench/slurmbench/slurm/hostlist"
)

// IO is what every command entry gets from main: where to print, how it
// was interrupted, and this binary's version.
type IO struct {
	Stdout, Stderr io.Writer
	// Interrupted says which signal stopped the command once its context
	// is done (nil: SIGINT); Hard is closed by a second SIGINT.
	Interrupted func() exitcode.Code
	Hard        <-chan struct{}
	Version     string
	Commit      string
	// JSON: the command's final result is one JSON object on Stdout.
	JSON bool
}

// StageOptions are where run and attach stage results.
type StageOptions struct {
	StageDir       string
	ResultFilename string
	Overwrite      bool
}

// FollowOptions are how run, up and attach follow a job.
type FollowOptions struct {
	CancelWait  time.Duration
	NoDriverLog bool
}

// RunOptions are `slurmbench run`'s.
type RunOptions struct {
	IO
	Plan   PlanOptions
	Stage  StageOptions
	Follow FollowOptions
	// BinaryDir holds the binaries for other architectures (--binary-dir).
	BinaryDir   string
	NoPreflight bool
	// In is --in JOBID (nil: not given; "" given empty is refused).
	In *string
	// Drive runs the plan's driver in this process, inside allocation a
	// (run --in from inside the allocation); the in-job side, given by main.
	Drive func(a runner.Allocation) runner.Drive
	// Hooks are told of the run as it goes (the workflow's job_event.json).
	Hooks RunHooks
}

// RunHooks observe a run; nil ones are skipped.
type RunHooks struct {
	// Planned: the plan and the profile it was made with, once both and
	// the run's inputs are checked.
	Planned func(pl *plan.Plan, prof *profile.Profile)
	// Submitted: the job's id, the moment it is known.
	Submitted func(id slurm.JobID)
	// Phase: the driver reached phase.
	Phase func(phase rundir.Phase)
	// Done: the run ended (res may be nil), before the summary.
	Done func(pl *plan.Plan, res *runner.Result, err error)
}

// Run runs one point: plan, check, then one of three ways: a new job
// (runner.Run), the queue of a held deployment (runner.RunIn), or the
// allocation this process runs inside (runner.RunInAllocation). It prints
// the summary (or, with JSON, the summary as JSON) and returns the run's
// error with its exit code.
func Run(ctx context.Context, o RunOptions) error {
	stderr := o.Stderr
	gha := report.Enabled(os.Getenv)
	// --in "$SLURM_JOB_ID" with the variable unset must not fall back to
	// submitting a new job.
	var inJob slurm.JobID
	if o.In != nil {
		in := strings.TrimSpace(*o.In)
		if in == "" {
			return exitcode.Errorf(exitcode.Config, "--in: empty JOBID (is $SLURM_JOB_ID set?); leave --in out to submit a new job")
		}
		var err error
		if inJob, err = slurm.ParseJobID(in); err != nil {
			return exitcode.Errorf(exitcode.Config, "--in %q: %v", in, err)
		}
	}
	if gha {
		report.Group(stderr, "slurmbench: plan")
	}
	if o.Plan.RunID == "" {
		o.Plan.RunID = AutoRunID
	}
	o.Plan.Warn = stderr
	pl, prof, err := Plan(ctx, o.Plan)
	if err == nil {
		err = checkRunInputs(pl, o.Stage)
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
	if err := WriteSources(stderr, prof); err != nil {
		return err
	}
	if o.Hooks.Planned != nil {
		o.Hooks.Planned(pl, prof)
	}
	bin, err := JobBinary(stderr, prof, o.BinaryDir)
	if err != nil {
		return err
	}
	// Inside the allocation itself (salloc's shell, a batch script) the run
	// is driven from here through srun: slurmrestd need not be reachable.
	inside := inJob != 0 && os.Getenv("SLURM_JOB_ID") == inJob.String()
	if inside {
		fmt.Fprintf(stderr, "preflight: skipped inside allocation %d (srun starts the steps, slurmrestd is not asked)\n", inJob)
	} else if !o.NoPreflight {
		if err := Preflight(ctx, stderr, prof, pl); err != nil {
			if gha {
				report.Error(stderr, "slurmbench: preflight", err.Error())
			}
			return err
		}
	}
	client, err := prof.SlurmClient()
	switch {
	case err != nil && inside:
		// Inside the allocation slurmrestd is optional: without it the
		// image must already be imported and the manifest names no Slurm
		// version.
		client = nil
	case err != nil:
		return exitcode.With(exitcode.Config, err)
	}
	mode, err := chooseMode(ctx, pl, client, inJob, inside)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "slurmbench run %s: %d nodes, %d GPUs (%d prefill + %d decode), %d points%s\n",
		pl.RunID, pl.Nodes, pl.GPUs.Total, pl.GPUs.Prefill, pl.GPUs.Decode, len(pl.Points), mode.where())

	group := ""
	opts := runner.Options{
		Plan: pl, Binary: bin, Client: client,
		Import: func(ctx context.Context, p *plan.Plan) error {
			return ImportImage(ctx, prof, client, p, stderr, o.Version)
		},
		JobEnv:   JobEnv(pl),
		Progress: stderr, DriverLog: driverLog(stderr, o.Follow),
		CancelWait: o.Follow.CancelWait, Interrupted: o.Interrupted, Hard: o.Hard,
		OnPhase: func(phase rundir.Phase, _ rundir.Status) {
			if o.Hooks.Phase != nil {
				o.Hooks.Phase(phase)
			}
			if !gha {
				return
			}
			if group != "" {
				report.EndGroup(stderr)
			}
			group = string(phase)
			report.Group(stderr, "slurmbench: "+string(phase))
		},
		OnSubmitted: func(id slurm.JobID) {
			if o.Hooks.Submitted != nil {
				o.Hooks.Submitted(id)
			}
			EarlyOutputs(stderr, pl, id)
		},
		Stage: Stage(pl, o.Stage, o.Version),
	}
	var res *runner.Result
	var runErr error
	switch {
	case mode.held != nil:
		res, runErr = runner.RunIn(ctx, opts, *mode.held)
	case mode.alloc != nil:
		res, runErr = runner.RunInAllocation(ctx, opts, *mode.alloc, o.Drive(*mode.alloc))
	default:
		res, runErr = runner.Run(ctx, opts)
	}
	if gha && group != "" {
		report.EndGroup(stderr)
	}
	if o.Hooks.Done != nil {
		o.Hooks.Done(pl, res, runErr)
	}
	return Report(o.IO, pl, res, runErr, o.Stage.StageDir)
}

// mode is how a run goes: a new job (both nil), the queue of a held
// deployment, or the allocation this process runs inside.
type mode struct {
	held  *runner.Held
	alloc *runner.Allocation
}

func (m mode) where() string {
	switch {
	case m.held != nil:
		return fmt.Sprintf(", in held job %d", m.held.Job.ID)
	case m.alloc != nil:
		return fmt.Sprintf(", inside allocation %d", m.alloc.JobID)
	}
	return ""
}

// chooseMode decides between run, held and in-allocation, checking that
// the plan fits what it runs in (exit 2 naming the numbers).
func chooseMode(ctx context.Context, pl *plan.Plan, client *slurm.Client, inJob slurm.JobID, inside bool) (mode, error) {
	switch {
	case inside:
		a, err := thisAllocation(inJob, pl)
		if err != nil {
			return mode{}, err
		}
		if err := pl.Fits(a.Nodes, a.GPUsPerNode); err != nil {
			return mode{}, exitcode.Errorf(exitcode.Config, "--in %d: %v", inJob, err)
		}
		return mode{alloc: &a}, nil
	case inJob != 0:
		h, err := runner.FindHeld(ctx, client, inJob)
		if err != nil {
			return mode{}, err
		}
		if h.Job.Terminal() {
			return mode{}, exitcode.Errorf(exitcode.Config, "--in %d: the held deployment's job has ended (%s)", inJob, h.Job.Outcome())
		}
		if err := pl.Fits(h.Nodes(), h.GPUsPerNode()); err != nil {
			return mode{}, exitcode.Errorf(exitcode.Config, "--in %d: %v", inJob, err)
		}
		return mode{held: &h}, nil
	}
	return mode{}, nil
}

func driverLog(stderr io.Writer, f FollowOptions) io.Writer {
	if f.NoDriverLog {
		return io.Discard
	}
	return &PrefixWriter{W: stderr, Prefix: "  | "}
}

// Stage is the runner's staging options for plan.
func Stage(pl *plan.Plan, s StageOptions, version string) runner.CollectOptions {
	return runner.CollectOptions{
		StageDir: s.StageDir, ResultFilename: s.ResultFilename, Overwrite: s.Overwrite,
		Provenance: results.Provenance{
			ImageRef: pl.Image.Ref, RecipeSHA256: pl.Recipe.SHA256, ProfilePath: pl.Profile.Path,
			SlurmbenchVersion: version, Extra: pl.Recipe.ManifestExtra(),
		},
	}
}

// EarlyOutputs gives the workflow the job id and run directory the moment
// the job is known, so a step cancelled hard afterwards still names them.
func EarlyOutputs(stderr io.Writer, pl *plan.Plan, id slurm.JobID) {
	if p := os.Getenv("GITHUB_OUTPUT"); p != "" && report.Enabled(os.Getenv) {
		if err := report.AppendOutputs(p, map[string]string{"job_id": id.String(), "run_id": pl.RunID, "run_dir": pl.RunDir}); err != nil {
			fmt.Fprintf(stderr, "slurmbench: writing GitHub outputs: %v\n", err)
		}
	}
}

// Report prints a run's (or attach's) summary — as JSON with o.JSON — and
// under GitHub Actions writes the step summary, outputs and annotations.
//
// With a stage directory the run's page goes there too: summary.json and
// report.html (webreport), rebuilt later by `slurmbench report DIR`; a page
// that cannot be written is said, and fails nothing.
func Report(o IO, pl *plan.Plan, res *runner.Result, runErr error, stageDir string) error {
	sum := runner.Summary(pl, res, runErr)
	page := ""
	if stageDir != "" {
		var err error
		if page, err = webreport.WriteRun(stageDir, sum); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
		}
	}
	if err := PrintSummary(o, sum); err != nil {
		return err
	}
	if page != "" && !o.JSON {
		fmt.Fprintf(o.Stdout, "report: %s\n", page)
	}
	if report.Enabled(os.Getenv) {
		if page != "" {
			AppendStepSummary(o.Stderr, fmt.Sprintf("\n**Report:** `%s` — one self-contained page; upload the stage directory (or this file) as an artifact and open it.\n", page))
		}
		if res != nil && res.Collected != nil && res.Collected.ParetoChart != "" {
			AppendStepSummary(o.Stderr, "\n#### Throughput per GPU against interactivity (pareto.svg)\n\n"+res.Collected.ParetoChart)
		}
		sum.Annotate(o.Stderr)
	}
	return runErr
}

// PrintSummary prints sum (text, or JSON with o.JSON) and, under GitHub
// Actions, writes the step summary and outputs.
func PrintSummary(o IO, sum report.Summary) error {
	if o.JSON {
		if err := WriteJSON(o.Stdout, sum); err != nil {
			return err
		}
	} else {
		fmt.Fprint(o.Stdout, sum.Text())
	}
	if report.Enabled(os.Getenv) {
		if err := writeGitHub(sum); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: writing GitHub outputs: %v\n", err)
		}
	}
	return nil
}

// WriteJSON writes v as indented JSON.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// AppendStepSummary appends markdown ("" adds nothing) to
// $GITHUB_STEP_SUMMARY; a failure is reported, not fatal.
func AppendStepSummary(stderr io.Writer, markdown string) {
	p := os.Getenv("GITHUB_STEP_SUMMARY")
	if p == "" || markdown == "" {
		return
	}
	if err := report.AppendSummary(p, markdown); err != nil {
		fmt.Fprintf(stderr, "slurmbench: writing the step summary: %v\n", err)
	}
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

// checkRunInputs checks what is only used after the job ran or while it is
// submitted — the job description's sbatch directives, the result filename,
// the stage directory — so a bad value costs no import and no allocation.
func checkRunInputs(pl *plan.Plan, s StageOptions) error {
	if err := runner.CheckRunDir(pl); err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if _, err := submit.JobSpec(pl, nil); err != nil {
		return exitcode.With(exitcode.Config, fmt.Errorf("profile %s: %w", pl.Profile.Path, err))
	}
	err := runner.CheckStaging(pl, runner.CollectOptions{StageDir: s.StageDir, ResultFilename: s.ResultFilename})
	return exitcode.With(exitcode.Config, err)
}

// Preflight is run's and up's preflight: doctor's checks for this plan (no
// probe), before anything is imported or created. A failure exits with
// the check's code, as doctor does: 2 for the profile, recipe or
// environment, 11 when slurmrestd or the cluster is the problem.
func Preflight(ctx context.Context, w io.Writer, prof *profile.Profile, pl *plan.Plan) error {
	start := time.Now()
	rep := preflight.Run(ctx, preflight.Options{Profile: prof, Plan: pl})
	if err := rep.Err(); err != nil {
		return exitcode.With(rep.ExitCode(), err)
	}
	fmt.Fprintf(w, "preflight: %d checks passed in %s (slurmbench doctor shows them)\n", len(rep.Checks), time.Since(start).Round(time.Millisecond))
	return nil
}

// JobBinary is the slurmbench binary the job runs: this one, or its sibling
// built for slurm.compute_arch. A missing one is a config error naming the
// files looked for, found before anything is imported or submitted.
func JobBinary(stderr io.Writer, prof *profile.Profile, binaryDir string) (string, error) {
	self, err := SelfPath()
	if err != nil {
		return "", exitcode.With(exitcode.Internal, err)
	}
	bin, err := arch.Binary(prof.ComputeArch(), self, binaryDir)
	if err != nil {
		return "", exitcode.Errorf(exitcode.Config, "profile %s: slurm.compute_arch %s: %v (make build writes bin/%s/slurmbench; copy it next to this binary or name its directory with --binary-dir)",
			prof.Path, prof.ComputeArch(), err, arch.Dir(prof.ComputeArch()))
	}
	if bin != self {
		fmt.Fprintf(stderr, "compute nodes are %s: the job runs %s\n", prof.ComputeArch(), bin)
	}
	return bin, nil
}

// PrefixWriter prefixes each line (the driver log, inside run's output).
type PrefixWriter struct {
	W      io.Writer
	Prefix string
	mid    bool
}

func (p *PrefixWriter) Write(b []byte) (int, error) {
	var sb strings.Builder
	for _, c := range string(b) {
		if !p.mid {
			sb.WriteString(p.Prefix)
			p.mid = true
		}
		sb.WriteRune(c)
		if c == '\n' {
			p.mid = false
		}
	}
	_, err := io.WriteString(p.W, sb.String())
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
		return runner.Allocation{}, exitcode.Errorf(exitcode.Config, "--in %d: SLURM_JOB_NODELIST %q names no nodes", id, nodeList)
	}
	gpus := pl.Slurm.GPUsPerNode
	if v := os.Getenv("SLURM_GPUS_ON_NODE"); v != "" {
		if gpus, err = strconv.Atoi(v); err != nil {
			return runner.Allocation{}, exitcode.Errorf(exitcode.Config, "--in %d: SLURM_GPUS_ON_NODE %q is not a number", id, v)
		}
	}
	if _, err := exec.LookPath("srun"); err != nil {
		return runner.Allocation{}, exitcode.Errorf(exitcode.Config, "--in %d: srun is not on PATH: inside an allocation, the run's steps start with srun", id)
	}
	return runner.Allocation{JobID: id, NodeList: nodeList, Nodes: len(hosts), GPUsPerNode: gpus}, nil
}

// BinaryNote says, for render, which slurmbench binary a run of this
// profile ships to the compute nodes and for which architecture, and
// whether it is there: "Job binary: linux-arm64/slurmbench (compute nodes
// aarch64, this machine x86_64) at PATH".
func BinaryNote(prof *profile.Profile, binaryDir string) string {
	compute, here := prof.ComputeArch(), profile.GoArch()
	where := "compute nodes " + compute
	if compute != here {
		where += ", this machine " + here
	}
	self, err := SelfPath()
	if err != nil {
		return fmt.Sprintf("\nJob binary: %s/slurmbench (%s): %v\n", arch.Dir(compute), where, err)
	}
	bin, err := arch.Binary(compute, self, binaryDir)
	if err != nil {
		return fmt.Sprintf("\nJob binary: %s/slurmbench (%s): not found, run would refuse (make build writes bin/%s/slurmbench; or --binary-dir)\n", arch.Dir(compute), where, arch.Dir(compute))
	}
	found := "this binary"
	if bin != self {
		found = bin
		if rel, err := filepath.Rel(filepath.Dir(self), bin); err == nil {
			found = rel + " next to this binary"
		}
	}
	return fmt.Sprintf("\nJob binary: %s/slurmbench (%s): %s, copied into the run directory\n", arch.Dir(compute), where, found)
}
