// Package steps runs the in-allocation benchmark and eval steps of a plan:
// the commands `slurmbench bench` and `slurmbench eval` that the driver
// starts as srun steps on the head node once the health gate has passed.
//
// Bench runs every SA-Bench point of the plan (native client, or
// benchmark_serving.py when the step already runs in the engine container),
// keeps each result file marked valid or invalid, and reports progress to a
// small JSON file the launcher reads. Eval runs gsm8k (native, or lm-eval in
// the container), writes lm-eval's files and meta_env.json, and gates the
// scores with InferenceX's thresholds.
package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// FrontendError says the frontend did not accept a connection: after the
// health gate that means it died, which is the engine layer's failure, not
// the benchmark's.
type FrontendError struct {
	URL string
	Err error
}

func (e *FrontendError) Error() string {
	return fmt.Sprintf("frontend %s is not reachable: %v", e.URL, e.Err)
}

func (e *FrontendError) Unwrap() error { return e.Err }

// frontendDialTimeout bounds the one connectivity check; the driver has
// already waited for health, so this only turns "dead" into a clear message.
const frontendDialTimeout = 10 * time.Second

// checkFrontend parses base (http://host:port) and opens one TCP connection.
func checkFrontend(ctx context.Context, base string) error {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("frontend URL %q: want http://host:port", base)
	}
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, frontendDialTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err != nil {
		return &FrontendError{URL: base, Err: err}
	}
	return conn.Close()
}

// Command is one child process of a step: the container clients
// (benchmark_serving.py, lm-eval, pip).
type Command struct {
	Argv   []string
	Dir    string   // working directory; "" = the step's
	Env    []string // KEY=VALUE added to the step's environment
	Stdout io.Writer
	Stderr io.Writer
}

// ExecFunc runs a command to completion. ExecOS is the real one; tests pass
// a fake that writes what the container tool would.
type ExecFunc func(ctx context.Context, cmd Command) error

// execGrace is how long a child gets between SIGTERM and SIGKILL when the
// step is cancelled, so benchmark_serving.py can still exit cleanly.
const execGrace = 10 * time.Second

// ExecOS runs cmd with os/exec. Cancelling ctx sends SIGTERM, then SIGKILL
// after a grace period.
func ExecOS(ctx context.Context, cmd Command) error {
	if len(cmd.Argv) == 0 {
		return errors.New("running a step command: empty argv")
	}
	c := exec.CommandContext(ctx, cmd.Argv[0], cmd.Argv[1:]...)
	c.Dir = cmd.Dir
	if len(cmd.Env) > 0 {
		c.Env = append(os.Environ(), cmd.Env...)
	}
	c.Stdout, c.Stderr = cmd.Stdout, cmd.Stderr
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = execGrace
	if err := c.Run(); err != nil {
		return fmt.Errorf("running %s: %w", cmd.Argv[0], err)
	}
	return nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
