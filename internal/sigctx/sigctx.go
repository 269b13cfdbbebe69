// Package sigctx owns a command's signals: one context that the first
// SIGINT, SIGTERM or SIGHUP cancels, with the signal as its cause, and
// the exit code that signal gives the command: 130 (SIGINT) or 143
// (SIGTERM, SIGHUP: a closed terminal ends a run like a kill does). A
// second SIGINT closes the hard-stop channel: "stop waiting for cleanup".
//
// cmd/slurmbench's main is its one user; the runner and the in-job steps
// only see the context, HardStop's channel and Interrupted's layer.
package sigctx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// cause is the cancel cause of the command's context.
type cause struct{ sig os.Signal }

// Error keeps the runtime's wording ("interrupt signal received"), which the
// in-job steps' logs already use.
func (s *cause) Error() string { return s.sig.String() + " signal received" }

// ExitCode is the shell's 128+N for the signals main handles.
func (s *cause) ExitCode() int { return int(ExitCode(s.sig)) }

// ExitCode is the exit code of a command that sig stopped.
func ExitCode(sig os.Signal) exitcode.Code {
	if sig == os.Interrupt {
		return exitcode.Interrupted
	}
	return exitcode.Terminated
}

type hardStopKey struct{}

// With returns a context cancelled by the first signal and a stop
// function that restores the default handling. cleanup says the command
// cleans up after a signal (a second SIGINT cuts that short), which is
// said on stderr when the first arrives.
func With(parent context.Context, stderr io.Writer, cleanup bool) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	hard := make(chan struct{})
	ctx = context.WithValue(ctx, hardStopKey{}, (<-chan struct{})(hard))
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	var once sync.Once
	go func() {
		first := true
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				if first {
					first = false
					if cleanup {
						fmt.Fprintf(stderr, "slurmbench: %v: stopping (a second SIGINT stops waiting for cleanup)\n", s)
					}
					cancel(&cause{sig: s})
				} else if s == os.Interrupt {
					once.Do(func() { close(hard) })
				}
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// Signal is the signal that cancelled ctx, or nil.
func Signal(ctx context.Context) os.Signal {
	var sc *cause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig
	}
	return nil
}

// HardStop is closed by a second SIGINT (never, outside With's context).
func HardStop(ctx context.Context) <-chan struct{} {
	if ch, ok := ctx.Value(hardStopKey{}).(<-chan struct{}); ok {
		return ch
	}
	return nil
}

// Interrupted tells the runner which signal stopped it: 143 for SIGTERM
// and SIGHUP, else 130.
func Interrupted(ctx context.Context) func() exitcode.Code {
	return func() exitcode.Code {
		if s := Signal(ctx); s != nil && s != os.Interrupt {
			return exitcode.Terminated
		}
		return exitcode.Interrupted
	}
}

// Run runs fn under ctx. A command with nothing to undo (abandon) gets
// grace after a signal to return by itself, and then Run returns anyway,
// since it may be blocked where no context reaches (opening a FIFO, a hung
// NFS read). Any other command is waited for: it cancels jobs, releases
// locks and records what happened.
func Run(ctx context.Context, fn func(context.Context) error, abandon bool, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- fn(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	if !abandon {
		return <-done
	}
	select {
	case err := <-done:
		return err
	case <-time.After(grace):
		return context.Cause(ctx)
	}
}

// ExitError gives a command that a signal stopped its signal's exit code,
// keeping its own message when it has one. A graceful command (a server,
// whose SIGTERM is its shutdown) that returned no error exits 0.
func ExitError(ctx context.Context, err error, graceful bool) error {
	sig := Signal(ctx)
	if sig == nil || (err == nil && graceful) {
		return err
	}
	if err == nil {
		return context.Cause(ctx)
	}
	if exitcode.Of(err) == ExitCode(sig) {
		return err
	}
	return exitcode.With(ExitCode(sig), err)
}
