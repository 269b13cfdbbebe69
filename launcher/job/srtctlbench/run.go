// Package srtctlbench runs srtctl's other benchmark types in the engine
// container: `slurmbench srtctl-bench TYPE ARGS...`, one step of the plan.
//
// The contract is srtctl's (NVIDIA/srt-slurm@c88ef731: the runners
// src/srtctl/benchmarks/<type>.py and the scripts they run,
// src/srtctl/benchmarks/scripts/<type>/bench.sh, cited below as
// scripts/...; read as facts, none of their text is here): a type takes
// the positional arguments its runner's build_command hands bench.sh, runs
// the same tool in the container with the same arguments (sglang's
// run_eval and bench_serving, aiperf, Dynamo's prefix_ratio_benchmark.py,
// InferenceX's run_eval) and leaves its results where srtctl's does under
// /logs. Everything around the tool — defaults of absent arguments, the
// served model's name, copying results out of /tmp, the trace download, the
// profiling requests, the mooncake-router rollup, the vLLM GSM8K eval — is
// this package's Go, not srtctl's scripts.
package srtctlbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// Types are the benchmark types Run knows, each named as the script srtctl
// runs for it (gsm8k has one per engine).
var Types = []string{"mmlu", "gpqa", "longbenchv2", "gsm8k-sglang", "gsm8k-vllm", "lm-eval", "router",
	"sglang-bench", "trace-replay", "mooncake-router"}

// Cmd is one program the type runs.
type Cmd struct {
	Argv []string
	// Dir is the working directory; "" = the step's.
	Dir string
	// Env is the environment the program gets (the step's, with the
	// type's additions).
	Env []string
}

// Options is one benchmark run.
type Options struct {
	Type string
	Args []string
	// Environ is the step's environment; nil = os.Environ().
	Environ []string
	Stdout  io.Writer
	// Exec runs a program; nil = os/exec with Stdout for both streams.
	Exec func(context.Context, Cmd) error
	// HTTP is the client for the model listing, the trace download, the
	// profiling requests and the vLLM GSM8K eval; nil = a plain client
	// (each request carries its own bound).
	HTTP *http.Client
	// Logs and Tmp are the container's /logs and /tmp ("" = those).
	Logs, Tmp string
	// Now is the clock for timestamps in artifact names; nil = time.Now.
	Now func() time.Time
	// RaiseFileLimit raises the open-file limit (trace-replay); nil =
	// setrlimit on this process, which the tools inherit.
	RaiseFileLimit func(uint64) error
}

// run is one Run's state.
type run struct {
	o    Options
	args []string
	env  []string // the environment programs get, last value wins
}

// Run runs the type. A tool's failure ends the run (srtctl's scripts run
// under set -e) with exitcode.Benchmark, naming the tool and its status.
func Run(ctx context.Context, o Options) error {
	if !slices.Contains(Types, o.Type) {
		return exitcode.Errorf(exitcode.Config, "srtctl-bench: unknown type %q (want one of %s)", o.Type, strings.Join(Types, ", "))
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Exec == nil {
		o.Exec = execCmd(o.Stdout)
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{}
	}
	if o.Logs == "" {
		o.Logs = "/logs"
	}
	if o.Tmp == "" {
		o.Tmp = "/tmp"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RaiseFileLimit == nil {
		o.RaiseFileLimit = raiseFileLimit
	}
	r := &run{o: o, args: o.Args, env: slices.Clone(o.Environ)}
	switch o.Type {
	case "mmlu", "gpqa", "longbenchv2", "gsm8k-sglang":
		return r.sglangEval(ctx)
	case "gsm8k-vllm":
		return r.vllmGSM8K(ctx)
	case "lm-eval":
		return r.lmEval(ctx)
	case "router":
		return r.router(ctx)
	case "sglang-bench":
		return r.sglangBench(ctx)
	case "trace-replay":
		return r.traceReplay(ctx)
	default: // mooncake-router
		return r.mooncakeRouter(ctx)
	}
}

// arg is positional argument i (from 0), or def when it is absent or empty
// (bash's ${N:-def}, which the scripts' interface is).
func (r *run) arg(i int, def string) string {
	if i < len(r.args) && r.args[i] != "" {
		return r.args[i]
	}
	return def
}

// getenv is the step's variable as the programs see it.
func (r *run) getenv(k string) string {
	for i := len(r.env) - 1; i >= 0; i-- {
		if name, v, ok := strings.Cut(r.env[i], "="); ok && name == k {
			return v
		}
	}
	return ""
}

// setenv sets a variable for the programs run after it.
func (r *run) setenv(k, v string) { r.env = append(r.env, k+"="+v) }

// defaultEnv sets k when it is unset or empty (${k:-v}).
func (r *run) defaultEnv(k, v string) {
	if r.getenv(k) == "" {
		r.setenv(k, v)
	}
}

func (r *run) logf(format string, args ...any) { fmt.Fprintf(r.o.Stdout, format+"\n", args...) }

// exec runs argv with the run's environment.
func (r *run) exec(ctx context.Context, dir string, argv ...string) error {
	return r.o.Exec(ctx, Cmd{Argv: argv, Dir: dir, Env: dedupeEnv(r.env)})
}

// dedupeEnv keeps the last value of each variable, sorted.
func dedupeEnv(env []string) []string {
	last := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		last[k] = v
	}
	out := make([]string, 0, len(last))
	for k, v := range last {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// execCmd runs programs with os/exec, both streams to out; a failure keeps
// the program's exit status.
func execCmd(out io.Writer) func(context.Context, Cmd) error {
	return func(ctx context.Context, c Cmd) error {
		// A program is looked up on the PATH it will run with, which the
		// type may have changed (trace-replay's aiperf environment).
		prog := c.Argv[0]
		if !strings.Contains(prog, "/") {
			path := ""
			for _, kv := range c.Env {
				if v, ok := strings.CutPrefix(kv, "PATH="); ok {
					path = v
				}
			}
			if p := lookPathIn(prog, path); p != "" {
				prog = p
			}
		}
		cmd := exec.CommandContext(ctx, prog, c.Argv[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = c.Dir, c.Env, out, out
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = 30 * time.Second
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() > 0 {
				return exitcode.Errorf(exitcode.Benchmark, "%s exited %d", strings.Join(c.Argv[:min(len(c.Argv), 4)], " "), ee.ExitCode())
			}
			return fmt.Errorf("running %s: %w", c.Argv[0], err)
		}
		return nil
	}
}

func raiseFileLimit(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	lim.Cur = n
	if lim.Max < n {
		lim.Max = n
	}
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
