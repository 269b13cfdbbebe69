package runner

import (
	"errors"
	"path/filepath"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/report"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/results"
)

// Summary is what a run (or attach) reports: the terminal summary, the
// GitHub step summary and outputs. It fills what it can even when part of
// the run is unreadable.
func Summary(pl *plan.Plan, res *Result, runErr error) report.Summary {
	var col *Collected
	if res != nil {
		col = res.Collected
	}
	var points []results.CollectedPoint
	if col != nil {
		points = col.Points
	}
	sum, _ := report.FromRun(pl, points, pl.Eval.ResultDir)
	if res != nil {
		if res.JobID != 0 {
			sum.JobID = res.JobID.String()
		}
		if o := res.Outcome; o.Result != "" {
			sum.Outcome, sum.Class, sum.FirstError = string(o.Result), string(o.Class), o.FirstError
			sum.Phase, sum.Process = string(o.Phase), o.Process
			sum.RuntimeLog, sum.LastLines, sum.Host = o.RuntimeLog, o.LastLines, o.Host
		}
	}
	if col != nil {
		sum.StagedFiles = stagedList(col.Staged)
		sum.AddCustom(col.Custom)
		sum.Artifacts = col.Artifacts
		var ie *results.IncompleteError
		if errors.As(col.Missing, &ie) {
			sum.AddIncomplete(ie)
		}
	}
	sum.ExitCode = 0
	if runErr == nil {
		sum.Outcome = report.OutcomeSucceeded
		return sum
	}
	sum.Message = runErr.Error()
	code := exitcode.Of(runErr)
	sum.ExitCode = int(code)
	if sum.Outcome == "" || sum.Outcome == report.OutcomeSucceeded {
		sum.Outcome = report.OutcomeFailed
		if code == exitcode.Interrupted || code == exitcode.Terminated {
			sum.Outcome = report.OutcomeInterrupted
		}
	}
	return sum
}

// stagedList names the staged files relative to the stage directory,
// where the workflow's globs (${RESULT_FILENAME}_*.json) look.
func stagedList(staged []results.StagedFile) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range staged {
		if b := filepath.Base(f.Dest); !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	return out
}
