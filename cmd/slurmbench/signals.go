package main

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

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// main owns the signals: every command runs under one context that the
// first SIGINT, SIGTERM or SIGHUP cancels, with the signal as its cause, and
// the command's exit code becomes 130 (SIGINT) or 143 (SIGTERM, SIGHUP: a
// closed terminal ends a run like a kill does). A second SIGINT closes the
// hard-stop channel: "stop waiting for cleanup".

// signalCause is the cancel cause of the command's context.
type signalCause struct{ sig os.Signal }

// Error keeps the runtime's wording ("interrupt signal received"), which the
// in-job steps' logs already use.
func (s *signalCause) Error() string { return s.sig.String() + " signal received" }

// ExitCode is the shell's 128+N for the signals main handles.
func (s *signalCause) ExitCode() int { return int(signalExit(s.sig)) }

func signalExit(sig os.Signal) exitcode.Code {
	if sig == os.Interrupt {
		return exitcode.Interrupted
	}
	return exitcode.Terminated
}

type hardStopKey struct{}

// withSignals returns a context cancelled by the first signal and a stop
// function that restores the default handling. cleanup says the command
// cleans up after a signal (a second SIGINT cuts that short).
func withSignals(parent context.Context, stderr io.Writer, cleanup bool) (context.Context, func()) {
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
					cancel(&signalCause{sig: s})
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

// signalOf is the signal that cancelled ctx, or nil.
func signalOf(ctx context.Context) os.Signal {
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		return sc.sig
	}
	return nil
}

// hardStop is closed by a second SIGINT (never, outside main's context).
func hardStop(ctx context.Context) <-chan struct{} {
	if ch, ok := ctx.Value(hardStopKey{}).(<-chan struct{}); ok {
		return ch
	}
	return nil
}

// interruptedLayer tells the runner which signal stopped it.
func interruptedLayer(ctx context.Context) func() exitcode.Code {
	return func() exitcode.Code {
		if s := signalOf(ctx); s != nil && s != os.Interrupt {
			return exitcode.Terminated
		}
		return exitcode.Interrupted
	}
}

// abandonOnSignal lists the commands with nothing to undo: after a signal
// they get abandonGrace to return by themselves, and then the process exits
// anyway, since they may be blocked where no context reaches (opening a
// FIFO, a hung NFS read). Every other command is waited for: it cancels
// jobs, releases locks and records what happened.
var abandonOnSignal = map[string]bool{
	"render": true, "logs": true, "ping": true, "status": true, "cancel": true, "nodes": true,
	"mock-answer-key": true, "results": true, "help": true, "h": true,
}

const abandonGrace = time.Second

// runApp runs the command argv names under ctx.
func runApp(ctx context.Context, app *cli.App, argv []string, abandon bool) error {
	done := make(chan error, 1)
	go func() { done <- app.RunContext(ctx, argv) }()
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
	case <-time.After(abandonGrace):
		return context.Cause(ctx)
	}
}

// gracefulStop lists the commands a signal stops normally: a server's
// SIGTERM is its shutdown, and it exits 0 when it shut down cleanly.
var gracefulStop = map[string]bool{"mock-engine": true, "mock-dcgm-exporter": true}

// signalExitError gives a command that a signal stopped its signal's exit
// code, keeping its own message when it has one.
func signalExitError(ctx context.Context, command string, err error) error {
	sig := signalOf(ctx)
	if sig == nil || (err == nil && gracefulStop[command]) {
		return err
	}
	if err == nil {
		return context.Cause(ctx)
	}
	if exitcode.Of(err) == signalExit(sig) {
		return err
	}
	return exitcode.With(signalExit(sig), err)
}
