package sigctx

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/syncbuf"
)

// cancelled is a context a signal stopped (nil: none did).
func cancelled(t *testing.T, sig os.Signal) context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	if sig != nil {
		cancel(&cause{sig: sig})
	}
	t.Cleanup(func() { cancel(nil) })
	return ctx
}

func TestExitError(t *testing.T) {
	plain := errors.New("reading recipe: read /dev/fifo: interrupted")
	for _, tt := range []struct {
		name     string
		sig      os.Signal
		graceful bool
		err      error
		want     exitcode.Code
	}{
		{"no signal, no error", nil, false, nil, 0},
		{"no signal keeps the layer", nil, false, exitcode.With(exitcode.Slurm, plain), exitcode.Slurm},
		{"SIGINT on success", os.Interrupt, false, nil, exitcode.Interrupted},
		{"SIGTERM over an unclassified error", syscall.SIGTERM, false, plain, exitcode.Terminated},
		{"SIGTERM over a layer's code", syscall.SIGTERM, false, exitcode.With(exitcode.Slurm, plain), exitcode.Terminated},
		{"SIGHUP is SIGTERM", syscall.SIGHUP, false, plain, exitcode.Terminated},
		{"a server's SIGTERM is its shutdown", syscall.SIGTERM, true, nil, 0},
		{"a failed shutdown is still a signal", syscall.SIGTERM, true, plain, exitcode.Terminated},
		{"the command's own 130 stays", os.Interrupt, false, exitcode.With(exitcode.Interrupted, plain), exitcode.Interrupted},
	} {
		err := ExitError(cancelled(t, tt.sig), tt.err, tt.graceful)
		got := exitcode.Of(err)
		if got != tt.want {
			t.Errorf("%s: exit %d, want %d (%v)", tt.name, got, tt.want, err)
		}
		if tt.err != nil && err != nil && !strings.Contains(err.Error(), tt.err.Error()) {
			t.Errorf("%s: the command's message is lost: %v", tt.name, err)
		}
	}
}

// The runner (run and attach) is told which signal stopped it: SIGTERM
// and SIGHUP are 143, SIGINT 130, and no signal (a plain cancel) 130.
func TestInterrupted(t *testing.T) {
	for _, tt := range []struct {
		sig  os.Signal
		want exitcode.Code
	}{{os.Interrupt, exitcode.Interrupted}, {syscall.SIGTERM, exitcode.Terminated}, {syscall.SIGHUP, exitcode.Terminated}, {nil, exitcode.Interrupted}} {
		if got := Interrupted(cancelled(t, tt.sig))(); got != tt.want {
			t.Errorf("%v: %d, want %d", tt.sig, got, tt.want)
		}
	}
}

func TestCauseText(t *testing.T) {
	for _, tt := range []struct {
		sig  os.Signal
		text string
		code int
	}{{os.Interrupt, "interrupt signal received", 130}, {syscall.SIGTERM, "terminated signal received", 143}, {syscall.SIGHUP, "hangup signal received", 143}} {
		ctx := cancelled(t, tt.sig)
		err := context.Cause(ctx)
		if err.Error() != tt.text || exitcode.Of(err) != exitcode.Code(tt.code) {
			t.Errorf("%v: %q exit %d, want %q exit %d", tt.sig, err, exitcode.Of(err), tt.text, tt.code)
		}
		if Signal(ctx) != tt.sig {
			t.Errorf("Signal = %v, want %v", Signal(ctx), tt.sig)
		}
	}
	if Signal(context.Background()) != nil || HardStop(context.Background()) != nil {
		t.Error("a context With did not make has a signal or a hard stop")
	}
}

// waitClosed fails the test if ch is not closed in a generous time (it is
// a hang guard, not a measurement).
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30 s", what)
	}
}

// TestWith sends the test process real signals: the first cancels the
// context with its cause (a cleaning command says so on stderr), a
// second SIGTERM changes nothing, a second SIGINT closes the hard stop.
func TestWith(t *testing.T) {
	for _, tt := range []struct {
		first   syscall.Signal
		cleanup bool
	}{{syscall.SIGTERM, true}, {syscall.SIGHUP, false}, {syscall.SIGINT, true}} {
		t.Run(tt.first.String(), func(t *testing.T) {
			var stderr syncbuf.Buffer
			ctx, stop := With(context.Background(), &stderr, tt.cleanup)
			defer stop()
			if err := syscall.Kill(os.Getpid(), tt.first); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, ctx.Done(), "cancel after "+tt.first.String())
			if got := Signal(ctx); got != tt.first {
				t.Errorf("Signal = %v, want %v", got, tt.first)
			}
			said := strings.Contains(stderr.String(), "stopping (a second SIGINT stops waiting for cleanup)")
			if said != tt.cleanup {
				t.Errorf("cleanup %v, stderr %q", tt.cleanup, stderr.String())
			}
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			waitClosed(t, HardStop(ctx), "hard stop after a second SIGINT")
			if got := Signal(ctx); got != tt.first {
				t.Errorf("after more signals Signal = %v, want the first, %v", got, tt.first)
			}
		})
	}
}

// TestRun: a command that returns is waited for; after a signal an
// abandonable command blocked where no context reaches ends after its
// grace with the signal's cause, and any other is waited for.
func TestRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		want := errors.New("done")
		if err := Run(ctx, func(context.Context) error { return want }, true, time.Second); !errors.Is(err, want) {
			t.Errorf("a returning command: %v", err)
		}
		cancel(&cause{sig: syscall.SIGTERM})
		blocked := make(chan struct{})
		start := time.Now()
		err := Run(ctx, func(context.Context) error { <-blocked; return nil }, true, time.Second)
		if exitcode.Of(err) != exitcode.Terminated || time.Since(start) != time.Second {
			t.Errorf("abandoned: %v (exit %d) after %s, want SIGTERM's cause after 1s", err, exitcode.Of(err), time.Since(start))
		}
		go func() { time.Sleep(time.Minute); close(blocked) }()
		start = time.Now()
		err = Run(ctx, func(context.Context) error { <-blocked; return want }, false, time.Second)
		if !errors.Is(err, want) || time.Since(start) != time.Minute {
			t.Errorf("waited for: %v after %s, want %v after 1m", err, time.Since(start), want)
		}
	})
}
