package dynamoinstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/slurmbench/slurmbench/internal/tailbuf"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// tailLines is how much of a failed step's output its error carries (all
// of it is in the process log already).
const tailLines = 20

// StepError is a fetch or install step that failed; Tail is the end of its
// output.
type StepError struct {
	Phase       string // "fetch" or "install"
	Step, Steps int
	Argv        []string
	Err         error
	Tail        string
}

func (e *StepError) Error() string {
	msg := fmt.Sprintf("%s step %d/%d (%s): %v", e.Phase, e.Step, e.Steps, plan.QuoteArgv(e.Argv), e.Err)
	if e.Tail != "" {
		msg += "; last output:\n" + e.Tail
	}
	return msg
}

func (e *StepError) Unwrap() error { return e.Err }

// runSteps runs steps in order, each with a one-line banner; the first
// failure ends the phase.
func (o Options) runSteps(ctx context.Context, phase string, steps []Step) error {
	for i, s := range steps {
		o.logf("%s %d/%d: %s", phase, i+1, len(steps), plan.QuoteArgv(s.Argv))
		start := time.Now()
		tail, err := o.runStep(ctx, s)
		if err != nil {
			return &StepError{Phase: phase, Step: i + 1, Steps: len(steps), Argv: s.Argv, Err: err, Tail: tail}
		}
		if d := time.Since(start); d >= time.Second {
			o.logf("%s %d/%d done in %s", phase, i+1, len(steps), d.Round(time.Second))
		}
	}
	return nil
}

// runStep runs one step as argv with its output streamed to o.Stdout and
// o.Stderr. A done ctx sends SIGTERM to the step's process group (pip and
// cargo start their own children), then SIGKILL after o.KillGrace.
func (o Options) runStep(ctx context.Context, s Step) (tail string, err error) {
	if len(s.Argv) == 0 {
		return "", errors.New("empty argv")
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	env := stepEnv(o.Env, s)
	prog, err := lookPath(s.Argv[0], envValue(env, "PATH"))
	if err != nil {
		return "", err
	}
	var out tailbuf.Buffer
	cmd := exec.CommandContext(ctx, prog, s.Argv[1:]...)
	cmd.Args[0] = s.Argv[0]
	cmd.Env, cmd.Dir = env, s.Dir
	cmd.Stdout = io.MultiWriter(o.Stdout, &out)
	cmd.Stderr = io.MultiWriter(o.Stderr, &out)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = o.KillGrace
	err = cmd.Run()
	if cmd.Process != nil && ctx.Err() != nil {
		// Whatever of the group outlived the grace period.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	if err != nil && ctx.Err() != nil {
		err = fmt.Errorf("stopped: %w", ctx.Err())
	}
	return out.Last(tailLines), err
}

// stepEnv is env with s's variables set over it and s's directories put
// before PATH; sorted for a stable order.
func stepEnv(env []string, s Step) []string {
	m := make(map[string]string, len(env)+len(s.Env)+1)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for k, v := range s.Env {
		m[k] = v
	}
	if len(s.PathPrepend) > 0 {
		dirs := append([]string(nil), s.PathPrepend...)
		if p := m["PATH"]; p != "" {
			dirs = append(dirs, p)
		}
		m["PATH"] = strings.Join(dirs, string(os.PathListSeparator))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k + "=" + m[k]
	}
	return out
}

// envValue is name's value in env (the last one wins, as in exec).
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}

// lookPath finds prog on path (a PATH value), the way the step will: the
// container's PATH, not this process's.
func lookPath(prog, path string) (string, error) {
	if strings.Contains(prog, "/") {
		return prog, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH %q", prog, path)
}
