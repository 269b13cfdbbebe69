package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/inputs/recipe"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/slurm"
)

// CleanupOptions are "slurmbench cleanup"'s inputs: the drop-in for
// InferenceX's `python -m infx.launch cleanup` (SlurmBackend.cleanup),
// which cancels the user's jobs named after the runner, srtctl's
// "inferencex-<runner>" ones included, and waits until the queue no longer
// lists them. It acts by default, as infx does; DryRun only lists.
type CleanupOptions struct {
	// Runner is the workflow's RUNNER_NAME.
	Runner string
	// User whose jobs are cancelled: "" is the client's user, else $USER
	// (infx's scancel --user=$USER).
	User   string
	DryRun bool
	// Poll is how often the queue is asked while waiting (infx: 5 s).
	Poll time.Duration
	// Timeout bounds the wait (0: until ctx ends, as infx waits forever).
	Timeout time.Duration
}

// CleanupResult is what cleanup found and did.
type CleanupResult struct {
	Names     []string    `json:"names"`
	User      string      `json:"user,omitempty"`
	Jobs      []slurm.Job `json:"jobs"`
	Cancelled bool        `json:"cancelled"`
}

// CleanupNames are the job names a runner's previous attempts leave:
// the runner's name (what slurmbench and the workflow's own steps name
// their jobs), the form slurmbench gives a name with characters a job
// name cannot hold, and srtctl's "inferencex-<runner>" (infx's
// srtctl_job_name).
func CleanupNames(runner string) []string {
	names := []string{runner}
	if s := recipe.SanitizeName(runner); s != "" && s != runner {
		names = append(names, s)
	}
	names = append(names, "inferencex-"+runner)
	return names
}

// Cleanup cancels (or with DryRun lists) the runner's jobs that may still
// run, then waits until none is left. Exit codes: 2 for a missing runner
// name, 11 when slurmrestd fails or jobs outlive the timeout.
func Cleanup(ctx context.Context, client *slurm.Client, w io.Writer, o CleanupOptions) (CleanupResult, error) {
	if strings.TrimSpace(o.Runner) == "" {
		return CleanupResult{}, exitcode.Errorf(exitcode.Config, "cleanup: --runner (RUNNER_NAME) is empty: no runner to clean up after")
	}
	res := CleanupResult{Names: CleanupNames(o.Runner), User: o.User, Jobs: []slurm.Job{}}
	if res.User == "" {
		res.User = client.User()
	}
	if res.User == "" {
		res.User = os.Getenv("USER")
	}
	live, err := cleanupJobs(ctx, client, res)
	if err != nil {
		return res, err
	}
	res.Jobs = live
	who := ""
	if res.User != "" {
		who = " of " + res.User
	}
	if len(live) == 0 {
		fmt.Fprintf(w, "no jobs%s named %s to clean up\n", who, strings.Join(res.Names, " or "))
		return res, nil
	}
	for _, j := range live {
		verb := "cancelling"
		if o.DryRun {
			verb = "would cancel"
		}
		fmt.Fprintf(w, "%s job %d %s (%s)\n", verb, j.ID, j.Name, j.State)
	}
	if o.DryRun {
		return res, nil
	}
	var errs []error
	for _, j := range live {
		if err := client.CancelJob(ctx, j.ID); err != nil {
			errs = append(errs, err)
		}
	}
	res.Cancelled = true
	if err := errors.Join(errs...); err != nil {
		return res, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("cleanup: %w", err))
	}
	return res, waitGone(ctx, client, w, res, o)
}

// cleanupJobs are the user's jobs with one of the names that have not ended.
func cleanupJobs(ctx context.Context, client *slurm.Client, res CleanupResult) ([]slurm.Job, error) {
	jobs, err := client.ListJobs(ctx, slurm.JobFilter{User: res.User})
	if err != nil {
		return nil, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("cleanup: %w", err))
	}
	var out []slurm.Job
	for _, j := range jobs {
		if slices.Contains(res.Names, j.Name) && !j.State.Terminal() {
			out = append(out, j)
		}
	}
	return out, nil
}

// waitGone polls until none of the names has a job that may run, as
// infx's cancel_named does, bounded by ctx and o.Timeout.
func waitGone(ctx context.Context, client *slurm.Client, w io.Writer, res CleanupResult, o CleanupOptions) error {
	poll := o.Poll
	if poll <= 0 {
		poll = 5 * time.Second
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	ids := []string{}
	for _, j := range res.Jobs {
		ids = append(ids, j.ID.String())
	}
	for {
		left, err := cleanupJobs(ctx, client, res)
		if err != nil && ctx.Err() != nil {
			return waitEnded(ctx, ids, o)
		}
		if err != nil {
			return err
		}
		if len(left) == 0 {
			return nil
		}
		ids = ids[:0]
		for _, j := range left {
			ids = append(ids, j.ID.String())
		}
		fmt.Fprintf(w, "waiting for jobs %s to leave the queue\n", strings.Join(ids, " "))
		t := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return waitEnded(ctx, ids, o)
		case <-t.C:
		}
	}
}

// waitEnded is the error of a wait the timeout or the caller ended.
func waitEnded(ctx context.Context, ids []string, o CleanupOptions) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && o.Timeout > 0 {
		return exitcode.Errorf(exitcode.Slurm, "cleanup: jobs %s still in the queue after %s", strings.Join(ids, " "), o.Timeout)
	}
	return exitcode.With(exitcode.Interrupted, fmt.Errorf("cleanup: waiting for jobs %s to leave the queue: %w", strings.Join(ids, " "), ctx.Err()))
}
