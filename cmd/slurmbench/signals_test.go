package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalsStopBlockedCommands: a command blocked where no context
// reaches (render reading a FIFO whose writer never writes) still ends on
// SIGINT, SIGTERM and SIGHUP, with 130/143, within its grace.
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
			// A non-blocking open for writing succeeds only once render has
			// the FIFO open for reading; holding it, unwritten, keeps render
			// blocked in read(2). No sleep guesses when it got there.
			w := openWriterWhenRead(t, fifo, done)
			defer w.Close()
			sent := time.Now()
			if err := cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-done:
			case <-time.After(time.Minute): // a hang guard, not a speed bound
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("render still running a minute after %v\n%s", tt.sig, stderr.String())
			}
			if got := cmd.ProcessState.ExitCode(); got != tt.want {
				t.Errorf("exit %d after %v, want %d\n%s", got, tt.sig, tt.want, stderr.String())
			}
			t.Logf("%v: exit %d after %s: %s", tt.sig, cmd.ProcessState.ExitCode(), time.Since(sent).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
		})
	}
}

// openWriterWhenRead opens fifo for writing once a reader has it open,
// polling with O_NONBLOCK (ENXIO until then); done ends the wait if the
// reader's process exits first.
func openWriterWhenRead(t *testing.T, fifo string, done <-chan struct{}) *os.File {
	t.Helper()
	for {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f
		}
		if !errors.Is(err, syscall.ENXIO) {
			t.Fatalf("opening the FIFO for writing: %v", err)
		}
		select {
		case <-done:
			t.Fatal("render exited before it opened the recipe")
		case <-time.After(10 * time.Millisecond):
		}
	}
}
