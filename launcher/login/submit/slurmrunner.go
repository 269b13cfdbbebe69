package submit

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/slurm"
)

// SlurmRunner runs an enroot command as a one-node Slurm job, for clusters
// whose login node has another CPU architecture than the compute nodes
// (GB300: x86_64 login, aarch64 nodes): the import then runs where the
// image will run. It satisfies enroot.Runner.
type SlurmRunner struct {
	Client    *slurm.Client
	Partition string
	Account   string
	TimeLimit time.Duration // default 3 h
	// WorkDir is a shared directory for the job's output file.
	WorkDir string
	// Env is the job's base environment (PATH).
	Env []string
	// Progress, if set, is told the job id.
	Progress io.Writer
	// Owner ("UID:GID", profile paths.owner) receives the import's working
	// directories when slurmbench runs as root and jobs as another user.
	Owner string
}

var _ enroot.Runner = SlurmRunner{}

// Run submits cmd as a job, waits for it and copies its output to
// cmd.Stdout. A cancelled ctx cancels the job.
func (r SlurmRunner) Run(ctx context.Context, cmd enroot.Command) error {
	argv := append([]string{cmd.Path}, cmd.Args...)
	script := "#!/bin/sh\nexec"
	for _, a := range argv {
		if strings.ContainsAny(a, "'\n\r\x00") {
			return fmt.Errorf("import argument %q cannot go into a batch script", a)
		}
		script += " '" + a + "'"
	}
	script += "\n"
	if err := os.MkdirAll(r.WorkDir, 0o755); err != nil {
		return err
	}
	if r.Owner != "" {
		if err := r.giveAway(cmd); err != nil {
			return err
		}
	}
	out := filepath.Join(r.WorkDir, fmt.Sprintf("import-%d.out", time.Now().UnixNano()))
	tl := r.TimeLimit
	if tl == 0 {
		tl = 3 * time.Hour
	}
	env := append(append([]string{}, r.Env...), cmd.Env...)
	if len(r.Env) == 0 {
		env = append(append([]string{}, slurm.DefaultJobEnvironment...), cmd.Env...)
	}
	spec := slurm.JobSpec{
		Name: "slurmbench-import", Script: script, Nodes: "1", TasksPerNode: 1,
		Partition: r.Partition, Account: r.Account, TimeLimit: tl, Environment: env,
		WorkDir: r.WorkDir, StdOut: out, StdErr: out, Comment: "slurmbench image import",
	}
	// A signal stops the submit's resends; Submit itself looks for and
	// cancels a job an interrupted attempt may have made.
	sub, err := r.Client.Submit(ctx, spec)
	if err != nil {
		return fmt.Errorf("submitting the import job: %w", err)
	}
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, "importing on a compute node: job %d\n", sub.JobID)
	}
	job, err := r.Client.Wait(ctx, sub.JobID, slurm.WaitOptions{})
	if err != nil {
		// Cancel on an interrupt only: an unreadable state says nothing
		// about the job, which ends by its own time limit.
		if ctx.Err() != nil {
			_ = r.Client.CancelJob(context.WithoutCancel(ctx), sub.JobID)
		}
		return fmt.Errorf("import job %d: %w", sub.JobID, err)
	}
	if b, rerr := os.ReadFile(out); rerr == nil {
		if cmd.Stdout != nil {
			_, _ = cmd.Stdout.Write(b) // the import's output, best effort
		}
		_ = os.Remove(out)
	}
	if !job.Success() {
		return fmt.Errorf("import job %d ended %s", sub.JobID, job.Outcome())
	}
	return nil
}

// giveAway hands the directories the job writes (its output directory, the
// -o file's directory and the private ENROOT_* paths) to Owner.
func (r SlurmRunner) giveAway(cmd enroot.Command) error {
	uid, gid, err := profile.ParseOwner(r.Owner)
	if err != nil {
		return err
	}
	dirs := append([]string{r.WorkDir}, cmd.Writes...)
	for i, a := range cmd.Args {
		if (a == "-o" || a == "--output") && i+1 < len(cmd.Args) {
			dirs = append(dirs, filepath.Dir(cmd.Args[i+1]))
		}
	}
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "ENROOT_") && strings.HasSuffix(k, "_PATH") && filepath.IsAbs(v) {
			dirs = append(dirs, v)
		}
	}
	for _, d := range dirs {
		if err := chownTree(d, uid, gid); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("giving %s to %s: %w", d, r.Owner, err)
		}
	}
	return nil
}
