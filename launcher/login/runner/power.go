package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
	"github.com/slurmbench/slurmbench/results/power"
)

// PowerProducerFile is the stamp beside the staged results naming the
// commit that produced LOGS/power; the workflow hands it to InferenceX's
// aggregator as POWER_PRODUCER_SHA.
const PowerProducerFile = "power-producer-sha.txt"

// powerResultsCopy is what stagePower copies beside LOGS/power: the
// benchmark's raw results dir, to LOGS/rel. ok is false when there is
// nothing to copy (no telemetry, no results), or, with rel "", when dir is
// not under the results root.
func powerResultsCopy(pl *plan.Plan) (dir, rel string, ok bool) {
	t := pl.Telemetry
	if t == nil || t.PowerDir == "" {
		return "", "", false
	}
	dir = pl.Benchmark.ResultDir
	if _, err := os.Stat(dir); err != nil {
		return "", "", false
	}
	rel, err := filepath.Rel(t.ResultRoot, dir)
	if err != nil {
		return dir, "", false
	}
	return dir, rel, true
}

// stagePower completes LOGS/ for InferenceX's power aggregator when the run
// collected telemetry: the windows' result_path values are relative to the
// benchmark's results root, so the raw results go to LOGS/ beside power/
// (where srtctl's log directory has them); power/ itself is under the logs,
// which StageLogs copies whole, and the producer stamp goes to
// the stage directory.
func stagePower(pl *plan.Plan, stageDir string, replace bool) error {
	t := pl.Telemetry
	if t == nil || t.PowerDir == "" || stageDir == "" {
		return nil
	}
	logs := filepath.Join(stageDir, LogsDirName)
	var errs []error
	if dir, rel, ok := powerResultsCopy(pl); ok {
		// The links it leaves out are in the manifest (stagedLinkRefusals).
		if _, err := results.CopyTree(dir, filepath.Join(logs, rel), replace); err != nil {
			errs = append(errs, fmt.Errorf("copying the raw results beside LOGS/power: %w", err))
		}
	} else if rel == "" && dir != "" {
		errs = append(errs, fmt.Errorf("copying the raw results beside LOGS/power: %s is not under %s", dir, t.ResultRoot))
	}
	m, err := power.ReadManifest(filepath.Join(t.PowerDir, power.ManifestFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return errors.Join(errs...) // nothing was collected (the job ended first)
	case err != nil:
		return errors.Join(append(errs, err)...)
	}
	commit := ""
	if m.ProducerGitCommit != nil {
		commit = *m.ProducerGitCommit
	}
	if err := atomicfile.WriteFile(filepath.Join(stageDir, PowerProducerFile), []byte(commit+"\n"), atomicfile.Options{Overwrite: true}); err != nil {
		errs = append(errs, fmt.Errorf("writing %s: %w", PowerProducerFile, err))
	}
	return errors.Join(errs...)
}
