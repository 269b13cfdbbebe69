package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher"
	"github.com/slurmbench/slurmbench/results"
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
}

// Collect checks every requested point, writes the manifest and stages.
// A missing or invalid point is a benchmark failure (named); staging and
// manifest problems are collection failures.
func Collect(plan *launcher.Plan, o CollectOptions) (*Collected, error) {
	c := &Collected{}
	if len(plan.Points) > 0 {
		concs := make([]int, len(plan.Points))
		for i, p := range plan.Points {
			concs[i] = p.Concurrency
		}
		col, err := results.Collect(results.CollectOptions{
			ResultsDir: plan.Benchmark.ResultDir, Concurrencies: concs, Topology: plan.ResultPoint(0),
			Config: filepath.Base(plan.Benchmark.ResultDir),
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
		name = plan.Name
	}
	if plan.Benchmark.Custom != nil {
		out, err := collectCustom(plan, name, o.Overwrite)
		c.Custom = out
		if err != nil {
			c.Missing = err
		}
	}
	benchmarkProvenance(plan, &o.Provenance)
	m, err := results.BuildManifest(plan.Layout.Results, o.Provenance)
	if err != nil {
		return c, exitcode.Errorf(exitcode.Collect, "building the manifest: %w", err)
	}
	if c.Manifest, err = results.WriteManifest(plan.Layout.Results, m, atomicfile.Options{Overwrite: true}); err != nil {
		return c, exitcode.Errorf(exitcode.Collect, "writing the manifest: %w", err)
	}
	if o.StageDir != "" {
		extra := append(evalArtifacts(plan), c.Manifest)
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

// CheckStaging checks, before anything is submitted, what Collect will
// need at the end: every point's staged name can be formed from the result
// filename, and the stage directory exists (or can be made) and takes files.
func CheckStaging(plan *launcher.Plan, o CollectOptions) error {
	name := o.ResultFilename
	if name == "" {
		name = plan.Name
	}
	for _, p := range plan.Points {
		pt := plan.ResultPoint(0)
		pt.Concurrency = p.Concurrency
		if _, err := results.StagedName(name, filepath.Base(plan.Benchmark.ResultDir), pt); err != nil {
			return fmt.Errorf("--result-filename (RESULT_FILENAME) %q: %w", name, err)
		}
	}
	if o.StageDir == "" {
		return nil
	}
	if err := os.MkdirAll(o.StageDir, 0o755); err != nil {
		return fmt.Errorf("--stage-dir (GITHUB_WORKSPACE): %w", err)
	}
	f, err := os.CreateTemp(o.StageDir, ".slurmbench-check-*")
	if err != nil {
		return fmt.Errorf("--stage-dir (GITHUB_WORKSPACE): %w", err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// evalArtifacts are the eval's files, staged flat as InferenceX expects.
func evalArtifacts(plan *launcher.Plan) []string {
	if !plan.Eval.Enabled || plan.Eval.ResultDir == "" {
		return nil
	}
	ents, err := os.ReadDir(plan.Eval.ResultDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if !e.IsDir() {
			out = append(out, filepath.Join(plan.Eval.ResultDir, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// StageLogs copies the run's logs to StageDir/LOGS and bundles them as
// multinode_server_logs.tar.gz there. It runs on every exit path.
func StageLogs(plan *launcher.Plan, stageDir string) error {
	if stageDir == "" {
		return nil
	}
	if _, err := os.Stat(plan.Layout.Logs); err != nil {
		return nil // nothing ran
	}
	var errs []error
	if err := results.CopyTree(plan.Layout.Logs, filepath.Join(stageDir, "LOGS"), true); err != nil {
		errs = append(errs, fmt.Errorf("copying logs: %w", err))
	}
	if err := stagePower(plan, stageDir); err != nil {
		errs = append(errs, fmt.Errorf("staging power telemetry: %w", err))
	}
	if err := results.BundleDir(plan.Layout.Logs, filepath.Join(stageDir, results.ServerLogsBundleName), results.BundleOptions{Overwrite: true}); err != nil {
		errs = append(errs, fmt.Errorf("bundling logs: %w", err))
	}
	return errors.Join(errs...)
}
