package launch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/runs"
	"github.com/slurmbench/slurmbench/slurm"
)

// RunsOptions say where the runs are: --runs-dir, else the profile's
// paths.runs_dir (with the profile, slurmrestd is asked about jobs).
type RunsOptions struct {
	IO
	Profile, RunsDir string
	Command          string // for messages: "runs ls"
}

// runsSource is where the runs are and, with a profile, how to ask Slurm.
func runsSource(ctx context.Context, o RunsOptions) (string, runs.JobState, error) {
	dir := o.RunsDir
	var ask runs.JobState
	if path := o.Profile; path != "" {
		p, err := LoadProfile(ctx, path)
		if err != nil {
			return "", nil, err
		}
		if dir == "" {
			dir = p.Paths.RunsDir
		}
		// Listing must not wait out retries: one try per job.
		client, err := p.SlurmClient(func(cfg *slurm.Config) { cfg.Retry.Max, cfg.RequestTimeout = -1, 10*time.Second })
		if err == nil {
			ask = runs.SlurmJobState(client)
		}
	}
	if dir == "" {
		return "", nil, exitcode.Errorf(exitcode.Config, "%s: give --profile FILE (or SLURMBENCH_PROFILE) or --runs-dir DIR", o.Command)
	}
	return dir, ask, nil
}

// RunsList is `runs ls`.
func RunsList(ctx context.Context, o RunsOptions) error {
	dir, ask, err := runsSource(ctx, o)
	if err != nil {
		return err
	}
	all, err := runs.ListContext(ctx, dir)
	// Before the first run there is no runs directory: an empty list.
	missing := errors.Is(err, fs.ErrNotExist)
	if missing {
		err = nil
	}
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	for i := range all {
		if err := all[i].Refresh(ctx, ask); err != nil {
			// Once slurmrestd fails, the rest is listed from the files.
			fmt.Fprintf(o.Stderr, "slurmbench: %v (job states below come from the run directories only)\n", err)
			ask = nil
		}
	}
	if o.JSON {
		if all == nil {
			all = []runs.Run{}
		}
		return WriteJSON(o.Stdout, all)
	}
	if len(all) == 0 && missing {
		fmt.Fprintf(o.Stdout, "no runs yet: %s does not exist (the first run creates it)\n", dir)
		return nil
	}
	if len(all) == 0 {
		fmt.Fprintf(o.Stdout, "no runs in %s (slurmbench run creates one)\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tRECIPE\tJOB\tSTATE\tOUTCOME\tSTARTED\tSTAGED")
	for _, r := range all {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, orDash(r.Recipe), orDash(r.JobID), runState(r),
			orDash(string(r.Outcome)), fmtStarted(r.Started), orDash(r.StagedDir))
	}
	return tw.Flush()
}

func runState(r runs.Run) string {
	if r.JobState != "" {
		return r.State + " (job " + r.JobState + ")"
	}
	return r.State
}

func fmtStarted(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RunsShow is `runs show RUN_ID|JOB_ID`.
func RunsShow(ctx context.Context, o RunsOptions, id string) error {
	dir, ask, err := runsSource(ctx, o)
	if err != nil {
		return err
	}
	r, err := runs.Find(ctx, dir, id)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if err := r.Refresh(ctx, ask); err != nil {
		fmt.Fprintf(o.Stderr, "slurmbench: %v\n", err)
	}
	if r.Provenance, err = runs.ReadProvenance(r.Dir); err != nil {
		r.Problems = append(r.Problems, err.Error())
	}
	if o.JSON {
		return WriteJSON(o.Stdout, r)
	}
	return writeRun(o.Stdout, r)
}

func writeRun(w io.Writer, r runs.Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	row("run", r.ID)
	row("dir", r.Dir)
	row("recipe", strings.TrimSpace(r.Recipe+" "+parens(r.RecipePath)))
	if r.Nodes > 0 {
		row("nodes", fmt.Sprint(r.Nodes))
	}
	job := r.JobID
	if r.InJob {
		job += " (queued in that held deployment: run --in)"
	}
	row("job", job)
	row("state", runState(r))
	if h := r.Held; h != nil {
		row("endpoint", h.Endpoint)
		row("serving", h.RunID)
		row("running", h.Running)
		row("queued", strings.Join(h.Queue, " "))
		row("runs taken", fmt.Sprint(h.Runs))
		row("last error", h.LastError)
	}
	row("outcome", string(r.Outcome))
	row("first error", r.FirstError)
	row("started", fmtStarted(r.Started))
	row("last activity", fmtStarted(r.LastActivity))
	row("staged to", r.StagedDir)
	for _, f := range r.StagedFiles {
		row("  file", f)
	}
	row("logs", r.Dir+"/logs (slurmbench logs "+orDash(r.JobID)+")")
	writeProvenance(row, r.Provenance)
	for _, p := range r.Problems {
		row("problem", p)
	}
	return tw.Flush()
}

func parens(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}

// RunsGC is `runs gc`: runs older than olderThan whose jobs ended are
// listed, and removed with del.
func RunsGC(ctx context.Context, o RunsOptions, olderThan string, del bool) error {
	age, err := runs.ParseAge(olderThan)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "--older-than: %w", err)
	}
	dir, ask, err := runsSource(ctx, o)
	if err != nil {
		return err
	}
	ds, gcErr := runs.GC(ctx, runs.GCOptions{RunsDir: dir, OlderThan: age, Ask: ask, Delete: del})
	if o.JSON {
		if ds == nil {
			ds = []runs.Decision{}
		}
		if err := WriteJSON(o.Stdout, ds); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(o.Stdout, 0, 0, 2, ' ', 0)
		n := 0
		for _, d := range ds {
			verb := "keep"
			switch {
			case d.Removed:
				verb, n = "removed", n+1
			case d.Remove:
				verb, n = "would remove", n+1
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", verb, d.Run.ID, d.Why)
		}
		tw.Flush()
		switch {
		case del:
			fmt.Fprintf(o.Stdout, "%d of %d runs removed from %s\n", n, len(ds), dir)
		default:
			fmt.Fprintf(o.Stdout, "%d of %d runs would be removed from %s (dry run: add --delete to remove them)\n", n, len(ds), dir)
		}
	}
	if gcErr != nil {
		return exitcode.With(exitcode.Config, gcErr)
	}
	return nil
}
