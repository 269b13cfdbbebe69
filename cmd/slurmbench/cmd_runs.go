package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/inputs/profile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/login/runs"
	"github.com/slurmbench/slurmbench/slurm"
)

const runsWhereHelp = `

The runs are the directories under the profile's paths.runs_dir (--profile,
or SLURMBENCH_PROFILE), or under --runs-dir. With a profile, slurmrestd is
asked about jobs whose run directory has no outcome yet; --runs-dir alone
reads only the run directories.`

func runsFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, Usage: "cluster profile: its paths.runs_dir, and its slurmrestd for job states", EnvVars: []string{"SLURMBENCH_PROFILE"}},
		&cli.StringFlag{Name: "runs-dir", Usage: "the runs directory (default: the profile's paths.runs_dir)"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON"},
	}
}

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "find past and running runs again: list, show, remove old ones",
		Description: `Every run leaves a directory under the profile's paths.runs_dir with its plan,
its job id, the driver's status and outcome, the logs and the results. These
commands read those directories.` + runsWhereHelp,
		Subcommands: []*cli.Command{
			{
				Name:      "ls",
				Usage:     "list runs, newest first: run id, recipe, job id, state, outcome, where results were staged",
				UsageText: "slurmbench runs ls [--profile FILE | --runs-dir DIR] [--json]",
				Description: `One line per run. STATE is "prepared" (never submitted), "submitted", the
driver's phase while the job runs, or "ended"; for a run without an outcome,
Slurm's state of its job follows when a profile is given.` + runsWhereHelp + `

Examples:
  slurmbench runs ls --profile profiles/testcluster.toml
  slurmbench runs ls --runs-dir /srv/slurmbench/shared/demo/runs --json | jq -r '.[].run_id'`,
				Flags:  runsFlags(),
				Action: runsLsAction,
			},
			{
				Name:      "show",
				Usage:     "show one run: its recipe, job, state, outcome, first error, files and staged results",
				UsageText: "slurmbench runs show [--profile FILE | --runs-dir DIR] [--json] RUN_ID|JOB_ID",
				Description: `Shows one run, named by its run id (its directory's name) or its job id.` + runsWhereHelp + `

Examples:
  slurmbench runs show --profile profiles/testcluster.toml mock-2p1d-20261202T201500Z-a1b2c3
  slurmbench runs show --runs-dir /srv/slurmbench/shared/demo/runs --json 4242`,
				Flags:  runsFlags(),
				Action: runsShowAction,
			},
			{
				Name:      "gc",
				Usage:     "remove run directories older than an age whose jobs have ended (dry run unless --delete)",
				UsageText: "slurmbench runs gc --older-than AGE [--delete] [--profile FILE | --runs-dir DIR] [--json]",
				Description: `Lists the runs whose last activity is older than --older-than (7d, 36h,
90m) and that are certainly not running: they have an outcome, Slurm says
their job ended (needs --profile), or they were never submitted. A run whose
job may still run is always kept, as is one a slurmbench process holds the
lock of. Nothing is removed without --delete: the default is a dry run that
says what would go and why the rest stays.` + runsWhereHelp + `

Examples:
  slurmbench runs gc --profile profiles/testcluster.toml --older-than 7d
  slurmbench runs gc --profile profiles/testcluster.toml --older-than 7d --delete`,
				Flags: append(runsFlags(),
					&cli.StringFlag{Name: "older-than", Usage: "minimum age since the run's last activity: 7d, 36h, 90m", Required: true},
					&cli.BoolFlag{Name: "delete", Usage: "remove the directories (default: only say what would be removed)"},
				),
				Action: runsGCAction,
			},
		},
	}
}

// runsSource is where the runs are and, with a profile, how to ask Slurm.
func runsSource(c *cli.Context) (string, runs.JobState, error) {
	dir := c.String("runs-dir")
	var ask runs.JobState
	if path := c.String("profile"); path != "" {
		p, err := profile.Load(path)
		if err != nil {
			return "", nil, exitcode.With(exitcode.Config, err)
		}
		if dir == "" {
			dir = p.Paths.RunsDir
		}
		if cfg, err := p.SlurmConfig(); err == nil {
			// Listing must not wait out retries: one try per job.
			cfg.Retry.Max, cfg.RequestTimeout = -1, 10*time.Second
			if client, err := slurm.New(cfg); err == nil {
				ask = runs.SlurmJobState(client)
			}
		}
	}
	if dir == "" {
		return "", nil, configErrorf("%s: give --profile FILE (or SLURMBENCH_PROFILE) or --runs-dir DIR", c.Command.Name)
	}
	return dir, ask, nil
}

func runsLsAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("runs ls takes no arguments, got %q", c.Args().First())
	}
	dir, ask, err := runsSource(c)
	if err != nil {
		return err
	}
	all, err := runs.ListContext(c.Context, dir)
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	for i := range all {
		if err := all[i].Refresh(c.Context, ask); err != nil {
			// Once slurmrestd fails, the rest is listed from the files.
			fmt.Fprintf(c.App.ErrWriter, "slurmbench: %v (job states below come from the run directories only)\n", err)
			ask = nil
		}
	}
	if c.Bool("json") {
		if all == nil {
			all = []runs.Run{}
		}
		return writeJSON(c.App.Writer, all)
	}
	if len(all) == 0 {
		fmt.Fprintf(c.App.Writer, "no runs in %s\n", dir)
		return nil
	}
	tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
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

func runsShowAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return configErrorf("runs show: expected one RUN_ID or JOB_ID, got %d arguments", c.NArg())
	}
	dir, ask, err := runsSource(c)
	if err != nil {
		return err
	}
	r, err := runs.Find(dir, c.Args().First())
	if err != nil {
		return exitcode.With(exitcode.Config, err)
	}
	if err := r.Refresh(c.Context, ask); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "slurmbench: %v\n", err)
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, r)
	}
	return writeRun(c.App.Writer, r)
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

func runsGCAction(c *cli.Context) error {
	if c.NArg() > 0 {
		return configErrorf("runs gc takes no arguments, got %q", c.Args().First())
	}
	age, err := runs.ParseAge(c.String("older-than"))
	if err != nil {
		return configErrorf("--older-than: %w", err)
	}
	dir, ask, err := runsSource(c)
	if err != nil {
		return err
	}
	ds, gcErr := runs.GC(c.Context, runs.GCOptions{RunsDir: dir, OlderThan: age, Ask: ask, Delete: c.Bool("delete")})
	if c.Bool("json") {
		if ds == nil {
			ds = []runs.Decision{}
		}
		if err := writeJSON(c.App.Writer, ds); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
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
		case c.Bool("delete"):
			fmt.Fprintf(c.App.Writer, "%d of %d runs removed from %s\n", n, len(ds), dir)
		default:
			fmt.Fprintf(c.App.Writer, "%d of %d runs would be removed from %s (dry run: add --delete to remove them)\n", n, len(ds), dir)
		}
	}
	if gcErr != nil {
		return exitcode.With(exitcode.Config, gcErr)
	}
	return nil
}
