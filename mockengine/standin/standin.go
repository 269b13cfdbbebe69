// Package standin runs slurmbench's mock engine under the names and command
// lines of the real serving tools a recipe's frontend starts:
// trtllm-llmapi-launch and trtllm-serve (frontend.type trtllm_serve), vllm
// serve and vllm-router (frontend.type vllm-router). The mock image ships
// each name as a two-line script calling `slurmbench mock-tool NAME`
// (testcluster/mock-image.sh), so a plan built for the real engine runs
// unchanged on the test cluster.
//
// Each tool parses the flags the real one takes (the subset srtctl and our
// planner pass, plus what the recipe may add), answers on the wire as the
// real server does, and refuses any flag it does not know: a wrong argv
// fails the job instead of being ignored.
package standin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/mockengine"
)

// Tools are the names Run answers to.
var Tools = []string{"trtllm-llmapi-launch", "trtllm-serve", "vllm", "vllm-router"}

// Env are the variables that tune the stand-in servers (the real tools
// have no flags for latency or a gsm8k answer key): the mock engine's own
// SLURMBENCH_MOCK_TTFT, _ITL and _ANSWER_KEY, which a recipe sets in the
// workers' environment.
const (
	EnvTTFT      = "SLURMBENCH_MOCK_TTFT"
	EnvITL       = "SLURMBENCH_MOCK_ITL"
	EnvAnswerKey = "SLURMBENCH_MOCK_ANSWER_KEY"
)

// Options are one call's inputs.
type Options struct {
	Tool string
	Args []string
	Log  io.Writer
	// Getenv reads the environment (os.Getenv when nil).
	Getenv func(string) string
	// Exec runs a command in place of this process (trtllm-llmapi-launch's
	// leader rank); nil means syscall.Exec.
	Exec func(argv []string) error
}

// Run is `slurmbench mock-tool TOOL ARGS...`: it serves until ctx ends.
// A flag the tool does not know exits 2 naming it.
func Run(ctx context.Context, o Options) error {
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	var err error
	switch o.Tool {
	case "trtllm-llmapi-launch":
		err = llmapiLaunch(ctx, o)
	case "trtllm-serve":
		err = trtllmServe(ctx, o)
	case "vllm":
		err = vllmServe(ctx, o)
	case "vllm-router":
		err = vllmRouter(ctx, o)
	default:
		return exitcode.Errorf(exitcode.Config, "mock-tool: unknown tool %q (want one of %s)", o.Tool, strings.Join(Tools, ", "))
	}
	var usage *usageError
	if asUsage(err, &usage) {
		return exitcode.Errorf(exitcode.Config, "%s (stand-in): %v", o.Tool, usage.msg)
	}
	return err
}

// usageError is a command line the real tool would refuse.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

func asUsage(err error, target **usageError) bool { return errors.As(err, target) }

// flagSpec is how many values a flag takes: 0 (a switch), 1, or -1 (every
// following argument up to the next flag, none or more).
type flagSpec map[string]int

// parseFlags reads args against spec: --name value, --name=value, and
// switches; a positional argument or an unknown flag is an error unless
// positional accepts it. Repeated flags keep every value in order.
func parseFlags(args []string, spec flagSpec, positional func(string) error) (map[string][]string, error) {
	got := map[string][]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if positional == nil {
				return nil, usagef("unexpected argument %q", a)
			}
			if err := positional(a); err != nil {
				return nil, err
			}
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		n, ok := spec[name]
		if !ok {
			return nil, usagef("no such option: %s", name)
		}
		switch {
		case n == 0:
			if hasVal {
				return nil, usagef("option %s takes no value", name)
			}
			got[name] = append(got[name], "")
		case hasVal:
			got[name] = append(got[name], val)
		case n == 1:
			if i+1 >= len(args) {
				return nil, usagef("option %s requires an argument", name)
			}
			i++
			got[name] = append(got[name], args[i])
		default: // every value up to the next flag, maybe none
			start := i + 1
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
			got[name] = append(got[name], args[start:i+1]...)
		}
	}
	return got, nil
}

// last is the last value given for any of names ("" when none).
func last(got map[string][]string, names ...string) string {
	v := ""
	for _, n := range names {
		if vs := got[n]; len(vs) > 0 {
			v = vs[len(vs)-1]
		}
	}
	return v
}

// engineOptions are the mock engine's serving options from the
// environment (latency and the answer key).
func engineOptions(o Options, model string) (mockengine.Options, error) {
	opts := mockengine.Options{Mode: mockengine.ModeStandalone, Model: model, Log: o.Log}
	for _, d := range []struct {
		env string
		dst *time.Duration
	}{{EnvTTFT, &opts.TTFT}, {EnvITL, &opts.ITL}} {
		if v := o.Getenv(d.env); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil {
				return opts, fmt.Errorf("%s: %w", d.env, err)
			}
			*d.dst = t
		}
	}
	if f := o.Getenv(EnvAnswerKey); f != "" {
		key, err := mockengine.LoadAnswerKey(f)
		if err != nil {
			return opts, fmt.Errorf("%s: %w", EnvAnswerKey, err)
		}
		opts.AnswerKey = key
	}
	return opts, nil
}

// serveEngine runs a standalone mock engine on addr until ctx ends.
func serveEngine(ctx context.Context, opts mockengine.Options, addr string) error {
	s, err := mockengine.New(opts)
	if err != nil {
		return exitcode.Errorf(exitcode.Config, "%v", err)
	}
	if err := s.ListenAndServe(ctx, addr); err != nil {
		return fmt.Errorf("serving on %s: %w", addr, err)
	}
	return nil
}
