package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
)

func attachCommand() *cli.Command {
	return &cli.Command{
		Name:      "attach",
		Usage:     "follow a job submitted earlier (the runner restarted or was killed) to its end, collect and stage",
		UsageText: "slurmbench attach --profile FILE (JOBID | --run-id ID) [--stage-dir DIR]",
		Description: `Finds the run directory — the job's working directory through slurmrestd, or
<runs_dir>/<ID> with --run-id, whose submit journal names the job (found by
its submit key if the runner died before the answer) — and continues exactly
as run does after submitting: phases, health wait, benchmark progress, the
driver's log; an interrupt cancels the job; at the end it judges the job,
collects and stages the results. Exits with run's codes. Only one run or
attach follows a run directory at a time.

slurmbench run --run-id ID does the same for a run directory whose job was
submitted (a GitHub re-run): it adopts the job instead of submitting again.

` + exitCodesHelp + `

Examples:
  slurmbench attach -p profiles/b200-dgxc.toml 4242 --stage-dir out/
  slurmbench attach -p profiles/b200-dgxc.toml --run-id 20260102-030405-ab12`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.StringFlag{Name: "run-id", Usage: "the run to attach to, instead of a JOBID"},
			&cli.StringFlag{Name: "stage-dir", Usage: "stage results, LOGS/ and the logs bundle here", EnvVars: []string{"GITHUB_WORKSPACE"}},
			&cli.StringFlag{Name: "result-filename", Usage: "InferenceX RESULT_FILENAME for staged names (default: the recipe name)", EnvVars: []string{"RESULT_FILENAME"}},
			&cli.BoolFlag{Name: "overwrite", Usage: "replace different files already in the stage dir"},
			&cli.GenericFlag{Name: "cancel-wait", Usage: "how long to wait for a cancelled job to stop", Value: duration.New(30*time.Second, duration.Wait)},
			&cli.BoolFlag{Name: "no-driver-log", Usage: "do not stream the driver's log"},
			jsonFlag(),
		},
		Action: attachAction,
	}
}

func attachAction(c *cli.Context) error {
	return launch.Attach(c.Context, launch.AttachOptions{IO: ioOf(c), Profile: c.String("profile"), Args: c.Args().Slice(),
		RunID: c.String("run-id"), Stage: stageFlags(c), Follow: followFlags(c)})
}

func logsCommand() *cli.Command {
	return &cli.Command{
		Name:      "logs",
		Usage:     "show the driver's log of a job, or one process's",
		UsageText: "slurmbench logs --profile FILE JOBID [-f] [--process NAME]",
		Description: `Examples:
  slurmbench logs -p profiles/b200-dgxc.toml 4242
  slurmbench logs -p profiles/b200-dgxc.toml 4242 --process decode_w0 -f`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "profile", Aliases: []string{"p"}, EnvVars: []string{"SLURMBENCH_PROFILE"}, Usage: "cluster profile"},
			&cli.StringFlag{Name: "process", Usage: "a process name from the plan (prefill_w0, frontend_0, benchmark, ...)"},
			&cli.BoolFlag{Name: "follow", Aliases: []string{"f"}, Usage: "keep printing until the job ends"},
		},
		Action: func(c *cli.Context) error {
			return launch.Logs(c.Context, launch.LogsOptions{Stdout: c.App.Writer, Profile: c.String("profile"), Args: c.Args().Slice(),
				Process: c.String("process"), Follow: c.Bool("follow")})
		},
	}
}
