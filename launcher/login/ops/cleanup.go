package ops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/runs"
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
	// RunsDir, when set, adds the jobs of runs there that may still run
	// and whose plan gave the job one of the names, whoever's they are in
	// Slurm (a root runner's jobs run as paths.owner).
	RunsDir string
}

// CleanupResult is what cleanup found and did.
type CleanupResult struct {
	Names     []string    `json:"names"`
	User      string      `json:"user,omitempty"`
	Jobs      []slurm.Job `json:"jobs"`
	Cancelled bool        `json:"cancelled"` // a cancel was sent (not a dry run, something to cancel)
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
	// slurmbench's run in the workflow's mode names its job
	// inferencex-<runner>, made valid as a job name when it is not.
	if s := recipe.SanitizeName("inferencex-" + runner); s != "" && s != "inferencex-"+runner {
		names = append(names, s)
	}
	return names
}

// Cleanup cancels (or with DryRun lists) the runner's jobs that may still
// run, then waits until none is left. Exit codes: 2 for a missing runner
// name, 11 when slurmrestd fails or jobs outlive the timeout, 130 when ctx
// ends the wait.
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
	if res.User == "" {
		// A name alone is not the runner's: other users' jobs may carry it.
		return res, exitcode.Errorf(exitcode.Config, "cleanup: no user to clean up for (profile slurm.user, --user or $USER): cancelling by name alone could cancel other users' jobs")
	}
	live, err := cleanupJobs(ctx, client, res, true)
	if err != nil {
		return res, err
	}
	if o.RunsDir != "" {
		more, err := runsDirJobs(ctx, client, o.RunsDir, res.Names, live)
		if err != nil {
			return res, err
		}
		live = append(live, more...)
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
		switch {
		case j.State.Terminal():
			verb = "waiting for" // ended, its nodes not yet released
		case o.DryRun:
			verb = "would cancel"
		}
		fmt.Fprintf(w, "%s job %d %s (%s)\n", verb, j.ID, j.Name, j.State)
	}
	if o.DryRun {
		return res, nil
	}
	var errs []error
	for _, j := range live {
		if j.State.Terminal() {
			continue
		}
		if err := client.CancelJob(ctx, j.ID); err != nil {
			errs = append(errs, err)
		}
		res.Cancelled = true
	}
	if err := errors.Join(errs...); err != nil {
		return res, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("cleanup: %w", err))
	}
	return res, waitGone(ctx, client, w, res, o)
}

// cleanupJobs are the jobs with one of the names that have not ended: the
// user's (found by slurm.Client.FindJobs, which never reads the whole
// listing into memory: accounting filters them on its side), and those of
// res.Jobs found through the runs directory, asked by id. With completing,
// an ended job still COMPLETING counts too: squeue, which infx waits on,
// lists it until its nodes are released.
func cleanupJobs(ctx context.Context, client *slurm.Client, res CleanupResult, completing bool) ([]slurm.Job, error) {
	jobs, err := client.FindJobs(ctx, slurm.JobQuery{Names: res.Names, User: res.User})
	if err != nil {
		return nil, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("cleanup: %w", err))
	}
	for _, k := range res.Jobs {
		if k.User == res.User || slices.ContainsFunc(jobs, func(j slurm.Job) bool { return j.ID == k.ID }) {
			continue // the user's own: FindJobs answered for it
		}
		j, err := client.GetJob(ctx, k.ID)
		if slurm.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("cleanup: %w", err))
		}
		if j.Name == k.Name {
			jobs = append(jobs, j)
		}
	}
	var out []slurm.Job
	for _, j := range jobs {
		there := !j.State.Terminal() || completing && j.State.Has(slurm.FlagCompleting)
		if slices.Contains(res.Names, j.Name) && there {
			out = append(out, j)
		}
	}
	return out, nil
}

// runsDirJobs are the jobs of runs under dir that may still run, whose
// plan named the job one of names, and that Slurm still lists under that
// name (a job id alone could be another job's by now), minus have.
func runsDirJobs(ctx context.Context, client *slurm.Client, dir string, names []string, have []slurm.Job) ([]slurm.Job, error) {
	list, err := runs.ListContext(ctx, dir)
	if err != nil {
		return nil, exitcode.With(exitcode.Config, fmt.Errorf("cleanup: runs directory: %w", err))
	}
	var out []slurm.Job
	for _, r := range list {
		if !r.Active || r.InJob || r.JobID == "" || !slices.Contains(names, r.JobName) {
			continue
		}
		id, err := slurm.ParseJobID(r.JobID)
		if err != nil || slices.ContainsFunc(append(have, out...), func(j slurm.Job) bool { return j.ID == id }) {
			continue
		}
		j, err := client.GetJob(ctx, id)
		if slurm.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, exitcode.With(slurm.ExitCode(err, exitcode.Slurm), fmt.Errorf("cleanup: run %s: %w", r.ID, err))
		}
		if j.Name == r.JobName && !j.State.Terminal() {
			out = append(out, j)
		}
	}
	return out, nil
}

// waitGone polls until none of the names has a job that may run or is
// still completing, as infx's cancel_named waits on squeue, bounded by ctx
// and o.Timeout.
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
		left, err := cleanupJobs(ctx, client, res, true)
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

// CleanupCommandOptions are "slurmbench cleanup"'s: how to reach
// slurmrestd (and, through the profile, the runs directory) and what to
// clean; Poll defaults to infx's 5 s.
type CleanupCommandOptions struct {
	launch.IO
	Slurm   SlurmOptions
	Cleanup CleanupOptions
}

// CleanupCommand is "slurmbench cleanup": the client and the runs
// directory from the profile (or the SLURM_* environment without one),
// then Cleanup, progress on Stderr and, with JSON, what it found on Stdout
// (also when it failed after finding it).
func CleanupCommand(ctx context.Context, o CleanupCommandOptions) error {
	res, err := cleanupCommand(ctx, o)
	if o.JSON && res.Names != nil {
		if jerr := launch.WriteJSON(o.Stdout, res); jerr != nil && err == nil {
			err = jerr
		}
	}
	return err
}

func cleanupCommand(ctx context.Context, o CleanupCommandOptions) (CleanupResult, error) {
	so, co := o.Slurm, o.Cleanup
	if co.Poll == 0 {
		co.Poll = 5 * time.Second
	}
	client, err := SlurmClient(ctx, so)
	if err != nil {
		return CleanupResult{}, err
	}
	if so.Profile != "" && co.RunsDir == "" {
		p, err := profile.LoadContext(ctx, so.Profile)
		if err != nil {
			return CleanupResult{}, exitcode.With(exitcode.Config, err)
		}
		co.RunsDir = p.Paths.RunsDir
		if _, err := os.Stat(co.RunsDir); errors.Is(err, fs.ErrNotExist) {
			co.RunsDir = "" // nothing ran here yet
		}
	}
	return Cleanup(ctx, client, o.Stderr, co)
}
