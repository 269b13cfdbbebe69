package enroot

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Command is one program run to completion, as argv (never a shell string).
type Command struct {
	Path string   // program name (looked up in PATH) or path
	Args []string // arguments after the program name
	// Env holds KEY=VALUE entries added to the inherited environment; they
	// win over inherited entries with the same key.
	Env []string
	// Writes are directories the command writes into besides those its
	// flags name (-o FILE, ENROOT_*_PATH): a runner that runs it as another
	// user (submit.SlurmRunner with an owner) hands them over first.
	Writes []string
	Stdout io.Writer
	Stderr io.Writer
}

// Runner decides where a Command runs. LocalRunner runs it on this host; a
// runner that wraps it in a one-node Slurm job (for clusters whose login
// nodes have another architecture than the compute nodes, e.g. GB300) can
// be plugged into Options.Runner. Paths in Args and Env are on the squash
// directory's filesystem unless Options.ScratchDir says otherwise, so a
// remote runner needs them to be shared.
type Runner interface {
	Run(ctx context.Context, cmd Command) error
}

// LocalRunner runs commands as child processes of this one.
type LocalRunner struct {
	// KillGrace is how long a cancelled command gets between SIGTERM and
	// SIGKILL (default 10s).
	KillGrace time.Duration
}

// Run starts cmd in its own process group, so that cancelling ctx stops the
// whole tree (enroot runs curl, parallel, tar and mksquashfs under it).
func (r LocalRunner) Run(ctx context.Context, cmd Command) error {
	grace := r.KillGrace
	if grace <= 0 {
		grace = 10 * time.Second
	}
	c := exec.CommandContext(ctx, cmd.Path, cmd.Args...)
	c.Env = append(os.Environ(), cmd.Env...) // exec keeps the last of duplicate keys
	c.Stdout, c.Stderr = cmd.Stdout, cmd.Stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGTERM) }
	c.WaitDelay = grace
	err := c.Run()
	if c.Process != nil && ctx.Err() != nil {
		// Whatever of the group outlived SIGTERM and the grace period.
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return errors.Join(ctx.Err(), err)
	}
	return err
}
