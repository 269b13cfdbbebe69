package mockengine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// TB is the part of testing.TB that StartTest uses; it keeps the testing
// package out of the slurmbench binary.
type TB interface {
	Helper()
	Cleanup(func())
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// StartTest runs a Server on 127.0.0.1:<free port> for the rest of the test
// and returns its base URL (http://127.0.0.1:PORT). Unless opts.Log is set,
// the server's log goes to t.Logf. It waits until the server has finished its
// simulated start-up (opts.StartupDelay), unless a fault keeps it from ever
// becoming ready. Cleanup stops it gracefully and fails the test if Serve
// returned an unexpected error; an injected fault's *ExitError is not one.
func StartTest(t TB, opts Options) string {
	t.Helper()
	var logDone atomic.Bool
	if opts.Log == nil {
		opts.Log = testLogWriter{t: t, done: &logDone}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatalf("mockengine.New: %v", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("mockengine: listening: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		defer logDone.Store(true) // a handler still finishing must not log into a finished test
		select {
		case err := <-done:
			var exit *ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("mockengine: Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("mockengine: Serve did not return within 10s of cancellation")
		}
	})
	f := opts.Faults
	if !f.FailBeforeHealthy && !f.Hang {
		deadline := time.Now().Add(opts.StartupDelay + 10*time.Second)
		for !s.Ready() {
			if time.Now().After(deadline) {
				t.Fatalf("mockengine: not ready within %s", opts.StartupDelay+10*time.Second)
			}
			time.Sleep(time.Millisecond)
		}
	}
	return fmt.Sprintf("http://%s", ln.Addr())
}

// testLogWriter sends each write (one log line) to t.Logf until done.
type testLogWriter struct {
	t    TB
	done *atomic.Bool
}

func (w testLogWriter) Write(p []byte) (int, error) {
	if w.done == nil || !w.done.Load() {
		w.t.Logf("%s", trimNewline(p))
	}
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	if n := len(p); n > 0 && p[n-1] == '\n' {
		return p[:n-1]
	}
	return p
}
