package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

func TestSignalExitError(t *testing.T) {
	cancelled := func(sig os.Signal) context.Context {
		ctx, cancel := context.WithCancelCause(context.Background())
		if sig != nil {
			cancel(&signalCause{sig: sig})
		}
		t.Cleanup(func() { cancel(nil) })
		return ctx
	}
	plain := errors.New("reading recipe: read /dev/fifo: interrupted")
	for _, tt := range []struct {
		name    string
		sig     os.Signal
		command string
		err     error
		want    exitcode.Code
	}{
		{"no signal, no error", nil, "render", nil, 0},
		{"no signal keeps the layer", nil, "status", exitcode.With(exitcode.Slurm, plain), exitcode.Slurm},
		{"SIGINT on success", os.Interrupt, "logs", nil, exitcode.Interrupted},
		{"SIGTERM over an unclassified error", syscall.SIGTERM, "render", plain, exitcode.Terminated},
		{"SIGTERM over a layer's code", syscall.SIGTERM, "status", exitcode.With(exitcode.Slurm, plain), exitcode.Terminated},
		{"SIGHUP is SIGTERM", syscall.SIGHUP, "results", plain, exitcode.Terminated},
		{"a server's SIGTERM is its shutdown", syscall.SIGTERM, "mock-engine", nil, 0},
		{"a failed shutdown is still a signal", syscall.SIGTERM, "mock-engine", plain, exitcode.Terminated},
		{"the command's own 130 stays", os.Interrupt, "run", exitcode.With(exitcode.Interrupted, plain), exitcode.Interrupted},
	} {
		err := signalExitError(cancelled(tt.sig), tt.command, tt.err)
		got := exitcode.Of(err)
		if got != tt.want {
			t.Errorf("%s: exit %d, want %d (%v)", tt.name, got, tt.want, err)
		}
		if tt.err != nil && err != nil && !strings.Contains(err.Error(), tt.err.Error()) {
			t.Errorf("%s: the command's message is lost: %v", tt.name, err)
		}
	}
}

// TestSignalsStopBlockedCommands: a command blocked where no context
// reaches (render opening a FIFO nobody writes) still ends on SIGINT,
// SIGTERM and SIGHUP, with 130/143, within its grace.
func TestSignalsStopBlockedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := buildRenderBinary(t, dir)
	fifo := filepath.Join(dir, "recipe.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	profile := filepath.Join(repoRoot(t), "profiles", "testcluster.toml")
	for _, tt := range []struct {
		sig  syscall.Signal
		want int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}, {syscall.SIGHUP, 143}} {
		t.Run(tt.sig.String(), func(t *testing.T) {
			cmd := exec.Command(bin, "render", "-p", profile, "-r", fifo)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			time.Sleep(300 * time.Millisecond) // blocked in open(2) by now
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("render still running 10 s after %v\n%s", tt.sig, stderr.String())
			}
			if got := cmd.ProcessState.ExitCode(); got != tt.want {
				t.Errorf("exit %d after %v, want %d\n%s", got, tt.sig, tt.want, stderr.String())
			}
			t.Logf("%v: exit %d after %s: %s", tt.sig, cmd.ProcessState.ExitCode(), time.Since(sent).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
		})
	}
}

// The runner (run and attach) is told which signal stopped it: SIGTERM
// and SIGHUP are 143, SIGINT 130.
func TestInterruptedLayer(t *testing.T) {
	for _, tt := range []struct {
		sig  os.Signal
		want exitcode.Code
	}{{os.Interrupt, exitcode.Interrupted}, {syscall.SIGTERM, exitcode.Terminated}, {syscall.SIGHUP, exitcode.Terminated}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(&signalCause{sig: tt.sig})
		if got := interruptedLayer(ctx)(); got != tt.want {
			t.Errorf("%v: %d, want %d", tt.sig, got, tt.want)
		}
	}
}
