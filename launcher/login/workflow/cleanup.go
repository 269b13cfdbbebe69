package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/launch"
	"github.com/slurmbench/slurmbench/launcher/login/ops"
	"github.com/slurmbench/slurmbench/slurm"
)

// CleanupOptions are `slurmbench cleanup`'s in the workflow's mode.
type CleanupOptions struct {
	launch.IO
	// Runner is RUNNER_NAME (or --runner).
	Runner string
	// Client reaches Slurm (nil, or an error: there is no Slurm here to
	// clean, which is not the step's failure).
	Client func(ctx context.Context) (*slurm.Client, error)
	// Timeout bounds the wait for the cancelled jobs (0: until they are
	// gone or the step is interrupted, as infx waits).
	Timeout time.Duration
	// Poll is how often the queue is asked (0: 5 s, as infx).
	Poll   time.Duration
	DryRun bool
}

// Cleanup cancels the runner's jobs (its bare name, which other
// repositories use, and inferencex-<runner>, this launcher's) and waits
// for them to leave the queue, as `python -m infx.launch cleanup` does
// (infx.launch.__main__._cleanup, backends/slurm cancel_named). The step
// runs under always(), so once RUNNER_NAME is set nothing fails it: no
// Slurm reachable, a failed cancel or a wait cut short is a warning and
// exit 0. Only a missing RUNNER_NAME (exit 2) and an interrupt (130/143)
// end otherwise.
func Cleanup(ctx context.Context, o CleanupOptions) error {
	runner := strings.TrimSpace(o.Runner)
	if runner == "" {
		return exitcode.Errorf(exitcode.Config, "cleanup: RUNNER_NAME is not set: no runner to clean up after")
	}
	warn := func(format string, args ...any) error {
		fmt.Fprintf(o.Stderr, "slurmbench: warning: "+format+"\n", args...)
		return nil
	}
	if o.Client == nil {
		return warn("cleanup: no Slurm to reach here; nothing to clean up for %s", runner)
	}
	client, err := o.Client(ctx)
	if err != nil {
		return warn("cleanup: no Slurm here (%v); nothing to clean up for %s", err, runner)
	}
	poll := o.Poll
	if poll <= 0 {
		poll = 5 * time.Second
	}
	_, err = ops.Cleanup(ctx, client, o.Stderr, ops.CleanupOptions{Runner: runner, DryRun: o.DryRun, Poll: poll, Timeout: o.Timeout})
	if err == nil {
		return nil
	}
	if c := exitcode.Of(err); (c == exitcode.Interrupted || c == exitcode.Terminated) && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return warn("%v (the step goes on)", err)
}
