package mockengine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// CommandOptions are `mock-engine`'s flags: Options plus what the command
// reads from text (the mode, the fault's delay, the log file, the answer
// key) before the server starts.
type CommandOptions struct {
	Options
	Listen string
	Mode   string
	// FailBeforeHealthyAfter is a duration: print the fault's log lines and
	// exit this long after start, before healthy ("": no such fault).
	FailBeforeHealthyAfter string
	FailLogLines           []string
	FailLogFile            string // its lines follow FailLogLines
	FailExitCode           int
	AnswerKeyFile          string
}

// RunCommand is `mock-engine`: it builds the server from o and serves on
// o.Listen until ctx ends (exit 0) or an injected fault exits with its
// code. A bad option exits 2 naming its flag.
func RunCommand(ctx context.Context, o CommandOptions) error {
	opts := o.Options
	m, err := ParseMode(o.Mode)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "--mode: %v", err)
	}
	opts.Mode = m
	if o.FailBeforeHealthyAfter != "" {
		d, err := time.ParseDuration(o.FailBeforeHealthyAfter)
		if err != nil {
			return exitcode.Errorf(exitcode.Config, "--fail-before-healthy-after: %v", err)
		}
		opts.Faults.FailBeforeHealthy, opts.Faults.FailAfter = true, d
	}
	opts.Faults.LogLines = o.FailLogLines
	if o.FailLogFile != "" {
		data, err := os.ReadFile(o.FailLogFile)
		if err != nil {
			return exitcode.Errorf(exitcode.Config, "--fail-log-file: %v", err)
		}
		opts.Faults.LogLines = append(opts.Faults.LogLines, strings.Split(strings.TrimRight(string(data), "\n"), "\n")...)
	}
	opts.Faults.ExitCode = o.FailExitCode
	if o.AnswerKeyFile != "" {
		key, err := LoadAnswerKey(o.AnswerKeyFile)
		if err != nil {
			return exitcode.Errorf(exitcode.Config, "--answer-key: %v", err)
		}
		opts.AnswerKey = key
	}
	s, err := New(opts)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "%v", err)
	}
	err = s.ListenAndServe(ctx, o.Listen)
	var exit *ExitError
	if errors.As(err, &exit) {
		// The fault lines are already printed; a message after them
		// would only push them up the log tail.
		if exit.Code == 0 {
			return nil
		}
		return exitcode.With(exitcode.Code(exit.Code), errors.New(""))
	}
	if err != nil {
		return exitcode.With(exitcode.Internal, fmt.Errorf("mock-engine: %w", err))
	}
	return nil
}

// DCGMCommandOptions are `mock-dcgm-exporter`'s flags: DCGMOptions with
// the GPUs as the flag's comma-separated text and the address to serve on.
type DCGMCommandOptions struct {
	DCGMOptions
	Listen  string
	GPUList string // comma-separated indices
	Args    []string
	Stdout  io.Writer
}

// ServeDCGM is `mock-dcgm-exporter`: it serves the exporter's metrics on
// o.Listen until ctx ends.
func ServeDCGM(ctx context.Context, o DCGMCommandOptions) error {
	if len(o.Args) > 0 {
		return exitcode.Errorf(exitcode.Config, "mock-dcgm-exporter takes no arguments, got %q", o.Args)
	}
	opt := o.DCGMOptions
	for _, f := range strings.Split(o.GPUList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return exitcode.Errorf(exitcode.Config, "--gpus: %q is not a GPU index", f)
		}
		opt.GPUs = append(opt.GPUs, n)
	}
	if opt.Watts < 0 {
		return exitcode.Errorf(exitcode.Config, "--watts must not be negative, got %v", opt.Watts)
	}
	if opt.Hostname == "" {
		opt.Hostname, _ = os.Hostname()
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.Listen, err)
	}
	srv := &http.Server{Handler: NewDCGMExporter(opt), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(o.Stdout, "mock-dcgm-exporter: %d GPUs at %.1f W on http://%s/metrics\n", len(opt.GPUs), opt.Watts, ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving: %w", err)
	}
	return nil
}
