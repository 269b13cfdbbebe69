package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/pareto"
)

// CollectOptions say where results go.
type CollectOptions struct {
	// StageDir receives the InferenceX-named results, LOGS/ and the logs
	// bundle ("" = leave them in the run directory only).
	StageDir string
	// ResultFilename is the workflow's RESULT_FILENAME (default: the plan's name).
	ResultFilename string
	Overwrite      bool
	Provenance     results.Provenance
}

// Collected is what collection found and wrote.
type Collected struct {
	Points   []results.CollectedPoint
	Staged   []results.StagedFile
	Manifest string
	// Missing is the error naming missing or invalid points, if any.
	Missing error
	// Custom is what a custom benchmark (benchmark.type custom) left.
	Custom *results.CustomOutput
	// Artifacts are what one of srtctl's other benchmark types wrote and
	// the profiles of a profiled run (artifacts.go).
	Artifacts []report.ArtifactRow
	// ParetoChart is the points' Pareto picture as a Mermaid chart for the
	// step summary ("" without points); its SVG and CSV are in Pareto.
	ParetoChart string
	Pareto      []string
	// RefusedLinks are the symbolic links copying the results and the
	// logs leaves out (their targets leave the tree); the manifest lists
	// them.
	RefusedLinks []results.RefusedLink
}

// Collect checks every requested point, writes the manifest and stages.
// A missing or invalid point is a benchmark failure (named); staging and
// manifest problems are collection failures.
func Collect(pl *plan.Plan, o CollectOptions) (*Collected, error) {
	c := &Collected{}
	if len(pl.Points) > 0 {
		concs := make([]int, len(pl.Points))
		for i, p := range pl.Points {
			concs[i] = p.Concurrency
		}
		col, err := results.Collect(results.CollectOptions{
			ResultsDir: pl.Benchmark.ResultDir, Concurrencies: concs, Topology: pl.ResultPoint(0),
			Config: filepath.Base(pl.Benchmark.ResultDir),
		})
		if col != nil {
			c.Points = col.Points
		}
		if err != nil {
			c.Missing = err
		}
	}
	name := o.ResultFilename
	if name == "" {
		name = pl.Name
	}
	if pl.Benchmark.Custom != nil {
		// A fixed-sequence workload leaves SA-Bench points, staged as
		// SA-Bench's; any other its aggregated <RESULT_FILENAME>_conc<C>.json.
		if pts, found, err := collectFixedSequence(pl); found {
			c.Points = pts
			if err != nil {
				c.Missing = err
			}
		} else {
			out, err := collectCustom(pl, name, o.Overwrite)
			c.Custom = out
			if err != nil {
				c.Missing = err
			}
		}
	}
	if pl.Benchmark.Srtctl != nil {
		row, err := collectSrtctlBenchmark(pl, o.Overwrite)
		if row != nil && row.CopiedTo != "" {
			// The links the copy left out, named as the manifest names the copy.
			refused, rerr := results.EscapingLinks(row.Dir, pl.Benchmark.Type+"/")
			c.RefusedLinks = append(c.RefusedLinks, refused...)
			err = cmp.Or(err, rerr)
		}
		if row != nil {
			c.Artifacts = append(c.Artifacts, *row)
		}
		if err != nil {
			c.Missing = err
		}
	}
	if pl.Profiling != nil {
		row, err := listProfiles(pl)
		if row != nil {
			c.Artifacts = append(c.Artifacts, *row)
		}
		if err != nil {
			return c, exitcode.With(exitcode.Collect, err)
		}
	}
	if err := savePareto(pl, c); err != nil {
		return c, err
	}
	benchmarkProvenance(pl, &o.Provenance)
	runtimeProvenance(pl, &o.Provenance)
	if o.StageDir != "" {
		refused, err := stagedLinkRefusals(pl)
		if err != nil {
			return c, exitcode.Errorf(exitcode.Collect, "checking the logs' links: %w", err)
		}
		c.RefusedLinks = append(c.RefusedLinks, refused...)
	}
	m, err := results.BuildManifest(pl.Layout.Results, o.Provenance)
	if err != nil {
		return c, exitcode.Errorf(exitcode.Collect, "building the manifest: %w", err)
	}
	m.RefusedLinks = c.RefusedLinks
	if c.Manifest, err = results.WriteManifest(pl.Layout.Results, m, atomicfile.Options{Overwrite: true}); err != nil {
		return c, exitcode.Errorf(exitcode.Collect, "writing the manifest: %w", err)
	}
	if o.StageDir != "" {
		defer recordStaged(pl, o.StageDir, c)
		extra := append(append(evalArtifacts(pl), c.Pareto...), c.Manifest)
		staged, err := results.Stage(c.Points, results.StageOptions{ResultFilename: name, Dest: o.StageDir, Extra: extra, Overwrite: o.Overwrite})
		c.Staged = staged
		if err != nil {
			return c, exitcode.With(exitcode.Collect, err)
		}
		if c.Custom != nil {
			staged, err := results.StageCustom(c.Custom, o.Overwrite, o.StageDir)
			c.Staged = append(c.Staged, staged...)
			if err != nil {
				return c, exitcode.With(exitcode.Collect, err)
			}
		}
	}
	if c.Missing != nil {
		return c, exitcode.With(exitcode.Benchmark, c.Missing)
	}
	return c, nil
}

// savePareto writes the Pareto picture of the collected points (tput/GPU
// against tok/s per user) beside the results, before the manifest lists
// them; staging copies them flat with the eval files.
func savePareto(pl *plan.Plan, c *Collected) error {
	if len(c.Points) == 0 {
		return nil
	}
	svg, csv, chart, err := pareto.SaveRun(pl.Layout.Results, pl.Name, c.Points)
	if err != nil {
		return exitcode.With(exitcode.Collect, err)
	}
	c.Pareto, c.ParetoChart = []string{svg, csv}, chart
	return nil
}

// recordStaged notes in the run directory where its results were staged,
// for runs ls and runs show. It is a note: failing to write it does not
// fail a run whose results are staged.
func recordStaged(pl *plan.Plan, dir string, c *Collected) {
	rec := rundir.Staged{Dir: dir, Files: []string{}, Time: time.Now().UTC()}
	for _, f := range c.Staged {
		rec.Files = append(rec.Files, f.Dest)
	}
	_ = rundir.WriteStaged(rundir.StagedPath(pl.RunDir), rec)
}

// CheckStaging checks, before anything is submitted, what Collect will
// need at the end: every point's staged name can be formed from the result
// filename, and the stage directory exists (or can be made) and takes files.
func CheckStaging(pl *plan.Plan, o CollectOptions) error {
	name := o.ResultFilename
	if name == "" {
		name = pl.Name
	}
	for _, p := range pl.Points {
		pt := pl.ResultPoint(0)
		pt.Concurrency = p.Concurrency
		if _, err := results.StagedName(name, filepath.Base(pl.Benchmark.ResultDir), pt); err != nil {
			return fmt.Errorf("--result-filename (RESULT_FILENAME) %q: %w", name, err)
		}
	}
	if o.StageDir == "" {
		return nil
	}
	// The stage directory itself may be made (by staging, at the end), but
	// not its parents: a missing parent is more likely a typo than a wish
	// for a new tree. Nothing is created here: a run refused later (its
	// preflight) leaves no empty stage directory behind.
	dir := o.StageDir
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("--stage-dir (GITHUB_WORKSPACE) %s is a file, not a directory", dir)
	case errors.Is(err, fs.ErrNotExist):
		parent := filepath.Dir(filepath.Clean(dir))
		if st, err := os.Stat(parent); err != nil || !st.IsDir() {
			return fmt.Errorf("--stage-dir (GITHUB_WORKSPACE) %s: its parent %s does not exist (or is not a directory); create it first", dir, parent)
		}
		dir = parent // staging will create the directory here
	case err != nil:
		return fmt.Errorf("--stage-dir (GITHUB_WORKSPACE): %w", err)
	}
	f, err := os.CreateTemp(dir, ".slurmbench-check-*")
	if err != nil {
		return fmt.Errorf("--stage-dir (GITHUB_WORKSPACE) %s: cannot write there: %w", o.StageDir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// evalArtifacts are the eval's files, staged flat as InferenceX expects.
func evalArtifacts(pl *plan.Plan) []string {
	if !pl.Eval.Enabled || pl.Eval.ResultDir == "" {
		return nil
	}
	ents, err := os.ReadDir(pl.Eval.ResultDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, filepath.Join(pl.Eval.ResultDir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// LogsDirName is the staged copy of the run's logs; logsOwner, inside it,
// names the run they are from.
const (
	LogsDirName = "LOGS"
	logsOwner   = ".slurmbench-run"
)

// logsStaging is how StageLogs may write: into this run's own LOGS/ (an
// earlier attempt's, the logs grew since), after removing another run's
// (overwrite), or into a new one.
type logsStaging struct {
	dst             string
	sameRun, remove bool
}

// checkStageLogs decides where the run's logs go without writing: LOGS/
// must be new, empty or this run's, so two runs' logs never mix; another
// run's LOGS/ and bundle are refused like a result file (replaced with
// overwrite); a symbolic link there is refused always.
func checkStageLogs(pl *plan.Plan, stageDir string, overwrite bool) (logsStaging, error) {
	ls := logsStaging{dst: filepath.Join(stageDir, LogsDirName)}
	bundle := filepath.Join(stageDir, results.ServerLogsBundleName)
	st, err := os.Lstat(ls.dst)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return ls, err
	case !st.IsDir():
		return ls, fmt.Errorf("refusing to stage logs into %s: not a directory (a symbolic link or a file)", ls.dst)
	default:
		owner, _ := os.ReadFile(filepath.Join(ls.dst, logsOwner))
		ents, err := os.ReadDir(ls.dst)
		if err != nil {
			return ls, err
		}
		switch {
		case strings.TrimSpace(string(owner)) == pl.RunID:
			ls.sameRun = true
		case len(ents) == 0:
		case !overwrite:
			return ls, fmt.Errorf("refusing to stage logs into %s: it holds another run's logs (stage into a clean directory, or pass --overwrite to replace them)", ls.dst)
		default:
			ls.remove = true
		}
	}
	if bst, err := os.Lstat(bundle); err == nil {
		switch {
		case !bst.Mode().IsRegular():
			return ls, fmt.Errorf("refusing to write %s: not a regular file", bundle)
		case !ls.sameRun && !overwrite:
			return ls, fmt.Errorf("refusing to overwrite %s: another run's logs bundle (stage into a clean directory, or pass --overwrite)", bundle)
		}
	}
	return ls, nil
}

// stagedLinkRefusals are the links StageLogs (and stagePower) will leave
// out of the stage directory, named as they would be staged (LOGS/...),
// found before the copy so that the manifest, written first, lists them.
func stagedLinkRefusals(pl *plan.Plan) ([]results.RefusedLink, error) {
	if _, err := os.Stat(pl.Layout.Logs); err != nil {
		return nil, nil // nothing ran: nothing is staged
	}
	out, err := results.EscapingLinks(pl.Layout.Logs, LogsDirName+"/")
	if err != nil {
		return out, err
	}
	if dir, rel, ok := powerResultsCopy(pl); ok {
		more, err := results.EscapingLinks(dir, path.Join(LogsDirName, filepath.ToSlash(rel))+"/")
		out = append(out, more...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// StageLogs copies the run's logs to stageDir/LOGS and bundles them as
// multinode_server_logs.tar.gz there, after checkStageLogs.
func StageLogs(pl *plan.Plan, stageDir string, overwrite bool) error {
	if stageDir == "" {
		return nil
	}
	if _, err := os.Stat(pl.Layout.Logs); err != nil {
		return nil // nothing ran
	}
	ls, err := checkStageLogs(pl, stageDir, overwrite)
	if err != nil {
		return err
	}
	if ls.remove {
		if err := os.RemoveAll(ls.dst); err != nil {
			return fmt.Errorf("replacing %s: %w", ls.dst, err)
		}
	}
	if err := os.MkdirAll(ls.dst, 0o755); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(ls.dst, logsOwner), []byte(pl.RunID+"\n"), atomicfile.Options{Overwrite: true}); err != nil {
		return err
	}
	replace := ls.sameRun || overwrite
	var errs []error
	if _, err := results.CopyTree(pl.Layout.Logs, ls.dst, replace); err != nil { // the links it leaves out are in the manifest (stagedLinkRefusals)
		errs = append(errs, fmt.Errorf("copying logs: %w", err))
	}
	if err := stagePower(pl, stageDir, replace); err != nil {
		errs = append(errs, fmt.Errorf("staging power telemetry: %w", err))
	}
	// Rooted at the logs directory, as InferenceX tars it
	// (inferencex-e2e/infx/launch/artifacts.py@2f19012d bundle_server_logs:
	// arcname "."): its site reads a multi-node archive's entries from its
	// root (server-log-artifacts tests, stored id 71556928812).
	if err := results.BundleDir(pl.Layout.Logs, filepath.Join(stageDir, results.ServerLogsBundleName), results.BundleOptions{Prefix: ".", Overwrite: replace}); err != nil {
		errs = append(errs, fmt.Errorf("bundling logs: %w", err))
	}
	return errors.Join(errs...)
}

// finish ends a run whose job ran, on every path: a duplicate an
// ambiguous submit may have left is cancelled, the results collected
// (partial ones kept and marked) and, with the logs, staged. Everything
// that would be refused is checked before anything is staged. The first
// failure decides the error; a signal that arrives while collecting still
// stages what finished but fails the run.
func (r *runState) finish(ctx context.Context, runErr error) error {
	o, pl := r.o, r.plan
	if r.key != "" && (r.ambiguous || r.res.Adopted) {
		o.Client.DropDuplicates(context.WithoutCancel(ctx), pl.Slurm.JobName, r.key, r.res.JobID, r.swept)
	}
	co := o.Stage
	if o.Client != nil { // a run inside an allocation may have none
		srv := o.Client.Server()
		co.Provenance.SlurmVersion, co.Provenance.SlurmAPIVersion = srv.SlurmRelease, srv.APIVersion
	}
	co.Provenance.JobID, co.Provenance.Nodes = r.res.JobID.String(), hostsOf(pl)
	heldProvenance(r.res.Outcome.Held, &co.Provenance)
	col, logsErr, err := collectAndStage(ctx, pl, co, o.Progress)
	r.res.Collected = col
	for _, e := range []error{logsErr, err} {
		if runErr == nil {
			runErr = e
		}
	}
	if runErr == nil && ctx.Err() != nil {
		runErr = exitcode.With(o.Interrupted(), errors.New("interrupted while collecting results (the job had ended)"))
	}
	return runErr
}

// StageLockName is the lock file in a stage directory: a run holds it from
// checking the directory to its last staged file, so one run stages into
// a directory at a time (two runs staging at once mixed their logs).
const StageLockName = ".slurmbench-stage.lock"

// stageLockWait bounds how long a run waits for another run's staging
// into the same directory (a few seconds to minutes: copying logs).
const stageLockWait = 30 * time.Minute

// lockStage takes dir's stage lock, making dir (not its parents, as
// CheckStaging promised). progress, when set, hears that it waits.
func lockStage(ctx context.Context, dir string, progress io.Writer) (*flock.Lock, error) {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("creating the stage directory: %w", err)
	}
	said := false
	l, err := flock.Acquire(context.WithoutCancel(ctx), filepath.Join(dir, StageLockName), flock.Options{Timeout: stageLockWait, Every: 5 * time.Second,
		Waiting: func(time.Duration) {
			if progress != nil && !said {
				fmt.Fprintf(progress, "waiting for another run staging into %s\n", dir)
				said = true
			}
		}})
	if err != nil {
		return nil, fmt.Errorf("taking the stage directory %s: %w", dir, err)
	}
	return l, nil
}

// collectAndStage collects pl's results and, with co.StageDir, stages
// them and the logs while holding the stage directory's lock: the checks
// that refuse another run's files and the copies happen with no other
// run staging there. logsErr is the logs' failure, err collection's.
func collectAndStage(ctx context.Context, pl *plan.Plan, co CollectOptions, progress io.Writer) (col *Collected, logsErr, err error) {
	if co.StageDir != "" {
		lock, lerr := lockStage(ctx, co.StageDir, progress)
		if lerr != nil {
			logsErr = exitcode.With(exitcode.Collect, lerr)
			co.StageDir = ""
		} else {
			defer func() { _ = lock.Release() }()
		}
	}
	if co.StageDir != "" {
		if _, logsErr = checkStageLogs(pl, co.StageDir, co.Overwrite); logsErr != nil {
			logsErr = exitcode.Errorf(exitcode.Collect, "staging logs: %w", logsErr)
			co.StageDir = "" // stage nothing: results would land next to another run's logs
		}
	}
	col, err = Collect(pl, co)
	if co.StageDir != "" && exitcode.Of(err) != exitcode.Collect {
		if lerr := StageLogs(pl, co.StageDir, co.Overwrite); lerr != nil {
			logsErr = exitcode.Errorf(exitcode.Collect, "staging logs: %w", lerr)
		}
	}
	return col, logsErr, err
}

// hostsOf are the job's nodes as the driver recorded them.
func hostsOf(pl *plan.Plan) []string {
	st, err := rundir.ReadStatus(pl.Layout.Status)
	if err != nil {
		return nil
	}
	return st.Hosts
}
