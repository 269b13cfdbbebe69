package workflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/login/runner"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/slurm"
)

// RunOptions are `slurmbench run`'s in the workflow's mode: the
// environment carries the point; these say how to follow it.
type RunOptions struct {
	launch.IO
	// Env is the workflow's environment (the whole of it: what the job is
	// passed is picked from it by name).
	Env Env
	// Resolver finds the runner's cluster and binds the row's recipe.
	Resolver    Resolver
	Follow      launch.FollowOptions
	BinaryDir   string
	NoPreflight bool
	Drive       func(a runner.Allocation) runner.Drive
	// Launch runs the point (nil: launch.Run).
	Launch func(ctx context.Context, o launch.RunOptions) error
	// Now is the clock of job_event.json (nil: time.Now).
	Now func() time.Time
	// RunID names the run directory ("" : a fresh unique one); a re-run
	// with the same one adopts the job the first submitted.
	RunID string
}

// SrtSlurmStamp is the file InferenceX's launcher leaves naming the
// orchestrator's commit (srt-slurm's, drivers/srt/checkout.py); here it
// names the slurmbench build that ran the job.
const SrtSlurmStamp = "srt-slurm-sha.txt"

// PowerProducerStamp names the producer of LOGS/power (the workflow's
// "Process result" step reads it when POWER_PRODUCER_SHA is unset).
const PowerProducerStamp = runner.PowerProducerFile

// Run is `slurmbench run` driven by the workflow's environment: parse and
// check the environment (exit 2 naming every bad variable), resolve the
// runner's cluster and the row's recipe, run the point as `run` does
// (job named inferencex-<runner>, results staged into GITHUB_WORKSPACE
// under RESULT_FILENAME, InferenceX's srt_eval.sh as the eval), and leave
// job_event.json in the workspace whatever happened.
func Run(ctx context.Context, o RunOptions) (err error) {
	rec := BeginEvent(o.Env, o.Now)
	gha := report.Enabled(func(k string) string { return o.Env[k] })
	defer func() {
		if p := recover(); p != nil {
			rec.Fail("", "Panic", fmt.Sprint(p), false, "")
			writeEvent(o, rec, int(exitcode.Internal))
			panic(p)
		}
		rc := 0
		if err != nil {
			rc = int(exitcode.Of(err))
			if rc == 0 {
				rc = int(exitcode.Internal)
			}
		}
		writeEvent(o, rec, rc)
	}()
	rec.Stage("prepare")
	req, err := ParseRequest(o.Env)
	if err != nil {
		rec.Fail("", "RequestError", err.Error(), false, "")
		annotate(o, gha, "prepare", "RequestError", err)
		return err
	}
	path := "srt-multi"
	if !req.Multinode {
		path = "srt-single"
	}
	rec.Set(func(e *JobEvent) { e.LaunchPath = &path })
	if o.Resolver == nil {
		return exitcode.Errorf(exitcode.Internal, "workflow run: no resolver")
	}
	res, err := o.Resolver.Resolve(ctx, req)
	if res.LaunchPath != "" && res.LaunchPath != path {
		lp := res.LaunchPath
		rec.Set(func(e *JobEvent) { e.LaunchPath = &lp })
	}
	if err != nil {
		err = exitcode.With(exitcode.Config, err)
		rec.Fail("", "ClusterError", err.Error(), false, "")
		annotate(o, gha, "prepare", "ClusterError", err)
		return err
	}
	if res.Cluster != "" {
		id := res.Cluster
		rec.Set(func(e *JobEvent) { e.Cluster = &id })
	}
	lo, err := launchOptions(o, req, res)
	if err != nil {
		rec.Fail("", "RequestError", err.Error(), false, "")
		return err
	}
	if res.NoPreflight != "" && !o.NoPreflight {
		fmt.Fprintf(o.Stderr, "slurmbench: preflight skipped: %s\n", res.NoPreflight)
	}
	if err := removeStale(req.Workspace, submissionFile(req.Multinode)); err != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
	}
	setup := &setupLog{}
	if lo.Stderr != nil {
		lo.Stderr = io.MultiWriter(lo.Stderr, setup)
	} else {
		lo.Stderr = setup
	}
	defer func() {
		// A launch that never submitted (an import that failed) leaves its
		// setup log all the same: that is when a person needs it.
		if err := setup.Seal(req.Workspace); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
		}
	}()
	var pl *plan.Plan
	var result *runner.Result
	lo.Hooks = launch.RunHooks{
		Planned: func(p *plan.Plan, prof *profile.Profile) {
			pl = p
			res = fromRecord(res, prof)
			planned(o, rec, req, res, p)
			if prof != nil && prof.Record != nil && prof.Record.Cluster != nil {
				if err := createMountHosts(prof.Record.Cluster, LaneRequest(req)); err != nil {
					fmt.Fprintf(o.Stderr, "slurmbench: warning: %v\n", err)
				}
			}
		},
		Submitted: func(id slurm.JobID) {
			s := id.String()
			rec.Set(func(e *JobEvent) { e.SlurmJobID = &s })
			rec.Stage("queue_wait")
			submitted(o, req, res, pl, setup, id)
		},
		Phase: func(phase rundir.Phase) {
			switch phase {
			case rundir.PhaseDone, rundir.PhaseFailed:
				rec.Stage("collect")
			default:
				rec.Stage(string(phase))
			}
		},
		Done: func(_ *plan.Plan, r *runner.Result, runErr error) {
			result = r
			rec.Stage("collect")
			done(rec, r, runErr)
		},
	}
	run := o.Launch
	if run == nil {
		run = launch.Run
	}
	err = run(ctx, lo)
	if err2 := finishStaging(req, pl, result); err2 != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: staging for the workflow: %v\n", err2)
		if err == nil {
			err = exitcode.With(exitcode.Collect, err2)
		}
	}
	if pl != nil && res.WriteEvalMeta && (req.RunEval || req.EvalOnly) {
		if err2 := refreshEvalMeta(o, req); err2 != nil && err == nil {
			err = exitcode.With(exitcode.Collect, err2)
		}
	}
	if err != nil {
		kind, msg := failureOf(exitcode.Of(err), "", err.Error())
		rec.Fail("", kind, msg, retriable(exitcode.Of(err)), "")
	}
	return err
}

// failureOf is a failure's type and message in job_event.json: a launch a
// signal ended is recorded as event.py records one
// (inferencex-e2e/infx/launch/event.py@4f0503f2, interrupted: type
// "Interrupted", message "received SIGINT|SIGTERM", retriable), whatever
// the layer was doing; any other keeps kind (or its layer's name) and
// message. 143 stands for SIGTERM and SIGHUP alike (docs/exit-codes.md):
// it is recorded as SIGTERM.
func failureOf(c exitcode.Code, kind, message string) (string, string) {
	switch c {
	case exitcode.Interrupted:
		return "Interrupted", "received SIGINT"
	case exitcode.Terminated:
		return "Interrupted", "received SIGTERM"
	}
	return firstNonEmpty(kind, kindOf(c)), message
}

// refreshEvalMeta rebuilds the staged meta_env.json from the workflow's
// variables, as a write_eval_meta lane does after collecting the eval's
// files: none staged is a warning, a file it cannot rebuild fails the run.
func refreshEvalMeta(o RunOptions, req *Request) error {
	path := filepath.Join(req.Workspace, EvalMetaFile)
	ok, err := RefreshEvalMeta(path, req.Env)
	switch {
	case err != nil:
		fmt.Fprintf(o.Stderr, "slurmbench: failed to refresh %s: %v\n", path, err)
		return fmt.Errorf("refreshing %s: %w", path, err)
	case !ok:
		fmt.Fprintf(o.Stderr, "slurmbench: warning: no staged eval metadata to refresh at %s\n", path)
	default:
		fmt.Fprintf(o.Stderr, "slurmbench: refreshed %s (prefix=%s)\n", path, req.ModelPrefix)
	}
	return nil
}

// launchOptions are the login node's run options for req: the
// environment's values as the flags would give them, the eval InferenceX
// runs, staging into the workspace as the launcher stages (replacing what
// an earlier run left there).
func launchOptions(o RunOptions, req *Request, res Resolution) (launch.RunOptions, error) {
	// InferenceX sets the eval on every submission; srtctl runs it only
	// when RUN_EVAL or EVAL_ONLY asks, so it is set here only then.
	var overrides []recipe.Override
	if req.RunEval || req.EvalOnly {
		command := MultinodeEvalCommand
		if !req.Multinode {
			command = SingleNodeEvalCommand
		}
		var err error
		if overrides, err = EvalOverrides(req.Env, command); err != nil {
			return launch.RunOptions{}, exitcode.With(exitcode.Config, err)
		}
	}
	if req.Multinode {
		dp, err := AttentionDPOverrides(req.Env)
		if err != nil {
			return launch.RunOptions{}, exitcode.With(exitcode.Config, err)
		}
		overrides = append(overrides, dp...)
	}
	po := launch.PlanOptions{
		Conc: joinInts(req.ConcList), EnvConc: req.Env.get("CONC"), Image: req.Image, Workspace: req.Workspace,
		RunEval: strconv.FormatBool(req.RunEval), EvalOnly: strconv.FormatBool(req.EvalOnly), EvalConc: req.EvalConcurrency(),
		EvalClient: "native", JobName: req.JobName(), RunID: launch.AutoRunID, Overrides: overrides, Warn: o.Stderr,
		// A TileRT point's prefill image, the record's tilert-prefill alias.
		PrefillImage: req.Env.get("PREFILL_IMAGE"),
	}
	if !req.Multinode {
		po.Conc = strconv.Itoa(req.Conc) // a single-node point is one concurrency, CONC
	}
	if o.RunID != "" {
		po.RunID = o.RunID
	}
	if !req.Agentic && req.ISL > 0 && req.OSL > 0 {
		isl, osl := req.ISL, req.OSL
		po.ISL, po.OSL = &isl, &osl
	}
	if res.Plan != nil {
		res.Plan(&po)
	}
	return launch.RunOptions{
		IO: o.IO, Plan: po,
		Stage:  launch.StageOptions{StageDir: req.Workspace, ResultFilename: req.ResultFilename, Overwrite: true},
		Follow: o.Follow, BinaryDir: o.BinaryDir, NoPreflight: o.NoPreflight || res.NoPreflight != "", Drive: o.Drive,
	}, nil
}

// fromRecord completes res with the cluster of the runners.yaml record
// the profile was made from (or extends): its id, and the CPU power source
// of its srt-slurm power telemetry.
func fromRecord(res Resolution, prof *profile.Profile) Resolution {
	if prof == nil || prof.Record == nil || prof.Record.Cluster == nil {
		return res
	}
	c := prof.Record.Cluster
	if res.Cluster == "" {
		res.Cluster = c.ID
	}
	if res.CPUSource == "" && c.Slurm.SrtSlurm != nil && c.Slurm.SrtSlurm.PowerTelemetry != nil {
		res.CPUSource = c.Slurm.SrtSlurm.PowerTelemetry.CPUSource
	}
	return res
}

// planned records what the plan says and leaves the stamps and
// $GITHUB_ENV lines the workflow's later steps read before the job runs,
// as InferenceX's launcher leaves them before submitting.
func planned(o RunOptions, rec *EventRecorder, req *Request, res Resolution, pl *plan.Plan) {
	power := pl.Telemetry != nil
	rec.Set(func(e *JobEvent) { e.Power = &EventPower{DCGM: power} })
	if res.Cluster != "" {
		id := res.Cluster
		rec.Set(func(e *JobEvent) { e.Cluster = &id })
	}
	stamp := o.Commit
	if stamp == "" {
		stamp = o.Version
	}
	if err := writeStamp(req.Workspace, SrtSlurmStamp, stamp); err != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
	}
	if power {
		// The job's power package names this build as its producer; the
		// stamp is there before the job, so a failed run still has it.
		if err := writeStamp(req.Workspace, PowerProducerStamp, stamp); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
		}
		if pl.Telemetry.ExporterImage == "" {
			// Nothing to name (a plan that records no exporter image).
		} else if prov, err := ExporterProvenance(pl.Telemetry.ExporterImage); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: warning: no %s: %v\n", ExporterProvenanceFile, err)
		} else if err := writeStamp(req.Workspace, ExporterProvenanceFile, prov); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
		}
	}
	if err := AppendGitHubEnv(req.Env.get("GITHUB_ENV"), GitHubEnvLines(req, power, res.CPUSource, stamp)); err != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
	}
}

// submitted leaves what a later step or a person needs the moment the
// job is known: srt-submission.json (job id, run directory, submit time)
// and srt-setup.log (everything the launch printed until then).
func submitted(o RunOptions, req *Request, res Resolution, pl *plan.Plan, setup *setupLog, id slurm.JobID) {
	if pl != nil {
		now := time.Now
		if o.Now != nil {
			now = o.Now
		}
		sub := NewSubmission(pl, id, res.Cluster, "slurmbench "+firstNonEmpty(o.Commit, o.Version), now())
		sub.Tags = res.Tags
		if err := writeSubmission(req.Workspace, submissionFile(req.Multinode), sub); err != nil {
			fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
		}
	}
	if err := setup.Seal(req.Workspace); err != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
	}
}

// GitHubEnvLines are what a launch appends to $GITHUB_ENV
// (drivers/srt/__init__.py, stored id 71132183874): a multi-node launch
// always POWER_EXPECTED_CPU_SOURCE (the cluster's CPU power source when
// the run measures power, else empty); a single-node power point the
// power package's places and producer too.
func GitHubEnvLines(req *Request, power bool, cpuSource, producer string) []string {
	cpu := ""
	if power {
		cpu = cpuSource
	}
	if req.Multinode {
		return []string{"POWER_EXPECTED_CPU_SOURCE=" + cpu}
	}
	if !power {
		return nil
	}
	return []string{"POWER_ARTIFACT_DIR=LOGS/power", "POWER_RESULT_ROOT=LOGS",
		"POWER_EXPECTED_CPU_SOURCE=" + cpu, "POWER_PRODUCER_SHA=" + producer}
}

// AppendGitHubEnv appends NAME=value lines to the file $GITHUB_ENV names
// ("" : not under GitHub Actions, nothing to do). A value holding a line
// break is refused: it would set another variable.
func AppendGitHubEnv(path string, lines []string) error {
	if path == "" || len(lines) == 0 {
		return nil
	}
	var b strings.Builder
	for _, l := range lines {
		if strings.ContainsAny(l, "\r\n") {
			return fmt.Errorf("$GITHUB_ENV: %q holds a line break", l)
		}
		b.WriteString(l + "\n")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("$GITHUB_ENV: %w", err)
	}
	_, err = f.WriteString(b.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("$GITHUB_ENV %s: %w", path, err)
	}
	return nil
}

// done records the job's facts and why it failed, when it did.
func done(rec *EventRecorder, r *runner.Result, runErr error) {
	if r == nil {
		return
	}
	if r.JobID != 0 {
		s := r.JobID.String()
		rec.Set(func(e *JobEvent) { e.SlurmJobID = &s })
	}
	if r.Job.Nodes != "" {
		n := r.Job.Nodes
		rec.Set(func(e *JobEvent) { e.Nodes = &n })
	}
	if runErr == nil {
		return
	}
	out := r.Outcome
	kind, msg := failureOf(exitcode.Of(runErr), string(out.Class), firstNonEmpty(out.Message, out.FirstError, runErr.Error()))
	stage := ""
	if out.Phase != "" {
		stage = string(out.Phase)
	}
	rec.Fail(stage, kind, msg, retriable(exitcode.Of(runErr)), out.Log)
}

// kindOf is a failure's type in job_event.json: the layer its exit code
// names (docs/exit-codes.md), as a class name like event.py's.
func kindOf(c exitcode.Code) string {
	switch c {
	case exitcode.Config:
		return "ConfigError"
	case exitcode.Image:
		return "ImageError"
	case exitcode.Submit:
		return "SubmitError"
	case exitcode.Queue:
		return "AllocationError"
	case exitcode.Health:
		return "HealthError"
	case exitcode.Engine:
		return "EngineError"
	case exitcode.Benchmark:
		return "BenchmarkError"
	case exitcode.Eval:
		return "EvalError"
	case exitcode.Collect:
		return "CollectError"
	case exitcode.Slurm:
		return "SlurmError"
	case exitcode.Interrupted, exitcode.Terminated:
		return "Interrupted"
	}
	return "InternalError"
}

// retriable says whether a failure of this layer may pass on a re-run:
// the allocation (Slurm ended the job: node failure, preemption,
// cancellation), slurmrestd, or an interrupt (InferenceX records
// BOOT_FAIL, CANCELLED, NODE_FAIL, PREEMPTED and signals as retriable).
func retriable(c exitcode.Code) bool {
	switch c {
	case exitcode.Queue, exitcode.Slurm, exitcode.Interrupted, exitcode.Terminated:
		return true
	}
	return false
}

// finishStaging completes what the workflow's later steps read once the
// run has staged: a single-node point's result under <RESULT_FILENAME>.json
// (the single-node launcher's name), and the producer stamp inside
// LOGS/power beside the package (drivers/srt/collect.py@4847f2da,
// _stage_logs).
func finishStaging(req *Request, pl *plan.Plan, r *runner.Result) error {
	if pl == nil {
		return nil
	}
	var errs []error
	if pl.Telemetry != nil {
		dir := filepath.Join(req.Workspace, "LOGS", "power")
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			for _, name := range []string{ExporterProvenanceFile, PowerProducerStamp} {
				if data, err := os.ReadFile(filepath.Join(req.Workspace, name)); err == nil {
					errs = append(errs, writeStamp(dir, name, strings.TrimSpace(string(data))))
				}
			}
		}
	}
	if !req.Multinode && !req.EvalOnly {
		errs = append(errs, singleNodeResult(req))
	}
	if !req.Multinode {
		errs = append(errs, singleNodeLogs(req, pl))
	}
	if !req.Multinode && !req.EvalOnly && pl.Telemetry != nil && r != nil && r.JobID != 0 {
		dir := filepath.Join(req.Workspace, "LOGS", "power")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			errs = append(errs, err)
		} else {
			errs = append(errs, writeStamp(dir, NativeJobStatusFile, NativeJobStatus(r.JobID, r.Job)))
		}
	}
	return errors.Join(errs...)
}

// NativeJobStatusFile is a single-node power point's record of how its
// job ended, which InferenceX's launcher writes into the job's
// logs/power before staging it to LOGS/power for the power audit
// (drivers/srt/__init__.py stored id 71132183874, run_single_node).
const NativeJobStatusFile = "native-job-status.txt"

// NativeJobStatus is the file's line: the job id, then the job's final
// state and exit code as sacct's State|ExitCode gives them ("42|COMPLETED|0:0";
// JobStatus.raw, as artifacts.py@2f19012d's tests show it).
func NativeJobStatus(id slurm.JobID, job slurm.Job) string {
	return fmt.Sprintf("%s|%s|%s", id, job.State.Base, job.Exit)
}

// singleNodeLogs leaves a single-node point's logs as InferenceX's
// single-node launcher does (collect.py@4847f2da finish_single_node):
// srt-single-node-logs.tar.gz, the job's logs under logs/, and no
// multinode_server_logs.tar.gz, which the run's staging wrote and a
// single-node launch never leaves. A run with no logs leaves neither.
func singleNodeLogs(req *Request, pl *plan.Plan) error {
	if req.Workspace == "" {
		return nil
	}
	multi := filepath.Join(req.Workspace, results.ServerLogsBundleName)
	if err := os.Remove(multi); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("removing %s: %w", multi, err)
	}
	if st, err := os.Stat(pl.Layout.Logs); err != nil || !st.IsDir() {
		return nil
	}
	dst := filepath.Join(req.Workspace, SingleNodeLogsBundle)
	return results.BundleDir(pl.Layout.Logs, dst, results.BundleOptions{Prefix: "logs", Overwrite: true})
}

// singleNodeResult copies the one staged point of a single-node run to
// <RESULT_FILENAME>.json, the name the single-node workflow looks for.
func singleNodeResult(req *Request) error {
	matches, err := filepath.Glob(filepath.Join(req.Workspace, globEscape(req.ResultFilename)+"_*_conc*_gpus_*.json"))
	if err != nil {
		return err
	}
	if len(matches) == 0 {
		return nil // nothing staged: the run's own error says why
	}
	if len(matches) > 1 {
		return fmt.Errorf("single-node point %s: %d results staged, want one", req.ResultFilename, len(matches))
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(req.Workspace, req.ResultFilename+".json"), data)
}

func globEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

// annotate reports a failure before the run started under GitHub
// Actions as InferenceX's launcher annotates a failed launch
// (event.py@4f0503f2, annotation): the stage as the title, "<type>:
// <message>" as the text. The run reports its own failures.
func annotate(o RunOptions, gha bool, stage, kind string, err error) {
	if gha {
		report.Error(o.Stderr, stage, kind+": "+err.Error())
	}
}

func writeEvent(o RunOptions, rec *EventRecorder, rc int) {
	if _, err := rec.Write(rc); err != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: warning: no %s: %v\n", EventFile, err)
	}
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " ")
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
