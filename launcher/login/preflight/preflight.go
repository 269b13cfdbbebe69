// Package preflight checks, before anything expensive happens, that a
// cluster profile (and, given one, a plan) can run: slurmrestd answers and
// takes the token, the partition exists and has enough nodes with the GPUs
// the profile says, the directories a run writes are writable, the model
// directory and the image are where the plan says. `slurmbench doctor`
// prints every check; `slurmbench run` runs the same checks before it
// imports an image, so a bad value costs seconds instead of an import and a
// queue wait. An optional probe job reports what a compute node really has.
package preflight

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/slurm"
)

// A failed check's exit code says where the problem lies: the profile,
// recipe or environment (exitcode.Config, 2) or slurmrestd and the cluster
// (exitcode.Slurm, 11).
const (
	layerConfig = exitcode.Config
	layerSlurm  = exitcode.Slurm
)

// Check is one line of the report.
type Check struct {
	// Name is short and stable: slurmrestd, api-version, token, partition,
	// nodes, account, job-spec, runs-dir, squash-dir, model, image, probe.
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// State is "passed", "failed" or "skipped", so a filter on it
	// (select(.state != "passed")) shows skipped checks, which OK does not.
	State string `json:"state"`
	// Skipped checks could not run (an earlier check failed) or do not
	// apply (no account set); they are OK.
	Skipped bool `json:"skipped,omitempty"`
	// Detail says what was found.
	Detail string `json:"detail"`
	// Fix says what to change, naming the file and key, when !OK.
	Fix string `json:"fix,omitempty"`
	// Exit is a failed check's exit code: exitcode.Config or exitcode.Slurm.
	Exit exitcode.Code `json:"exit_code,omitempty"`
}

// Options say what to check.
type Options struct {
	Profile *profile.Profile
	// Plan, when set, narrows the checks to what this run uses (its node
	// count, model and image) and adds the job-spec check.
	Plan *plan.Plan
	// Client talks to slurmrestd; nil builds one from the profile that
	// does not retry, so a dead slurmrestd fails in a second, not minutes.
	Client *slurm.Client
	// Probe submits a one-node job that reports the node's architecture,
	// GPUs, enroot and pyxis.
	Probe bool
	// ProbeTimeout bounds the probe job, queue wait included (3 min).
	ProbeTimeout time.Duration
	// Progress is told about the probe job while it runs (nil: nothing).
	Progress io.Writer
	// LocalArch is this machine's architecture in uname -m terms, which
	// compute nodes have when the profile sets no compute_arch (default:
	// the running binary's).
	LocalArch string
}

// Report is every check, in order.
type Report struct {
	Checks []Check `json:"checks"`
}

// OK reports whether no check failed.
func (r Report) OK() bool { return len(r.Failed()) == 0 }

// Failed are the checks that failed, in order.
func (r Report) Failed() []Check {
	var out []Check
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c)
		}
	}
	return out
}

// ExitCode is the first failed check's exit code (exitcode.OK when all
// passed): checks run from the connection outwards, so the first failure
// is the one to fix first.
func (r Report) ExitCode() exitcode.Code {
	if f := r.Failed(); len(f) > 0 {
		return f[0].Exit
	}
	return exitcode.OK
}

// Err is nil when every check passed, else an *Error naming each failure.
func (r Report) Err() error {
	if r.OK() {
		return nil
	}
	return &Error{Report: r}
}

// Error is a failed preflight.
type Error struct{ Report Report }

func (e *Error) Error() string {
	var parts []string
	for _, c := range e.Report.Failed() {
		s := "preflight " + c.Name + ": " + c.Detail
		if c.Fix != "" {
			s += "; fix: " + c.Fix
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// ExitCode makes the error carry the first failure's exit code.
func (e *Error) ExitCode() int { return int(e.Report.ExitCode()) }

// WriteText prints one line per check: ✓, ✗ or – (skipped), the check's
// name, what was found and, on failure, the fix.
func (r Report) WriteText(w io.Writer) error {
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	var b strings.Builder
	for _, c := range r.Checks {
		mark := "✓"
		switch {
		case !c.OK:
			mark = "✗"
		case c.Skipped:
			mark = "–"
		}
		fmt.Fprintf(&b, "%s %-*s  %s", mark, width, c.Name, oneLine(c.Detail))
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(&b, "; fix: %s", oneLine(c.Fix))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// MarshalJSON adds ok and the exit code to the checks.
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		OK       bool          `json:"ok"`
		ExitCode exitcode.Code `json:"exit_code"`
		Checks   []Check       `json:"checks"`
	}{r.OK(), r.ExitCode(), r.Checks})
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Run runs every check that applies and returns them all: a failure does
// not stop the checks that do not depend on it.
func Run(ctx context.Context, o Options) Report {
	if o.ProbeTimeout <= 0 {
		o.ProbeTimeout = 3 * time.Minute
	}
	if o.LocalArch == "" {
		o.LocalArch = profile.GoArch()
	}
	r := &run{o: o, p: o.Profile}
	cluster := r.slurmChecks(ctx)
	if o.Plan != nil {
		r.jobSpec()
	}
	r.dirs()
	r.models()
	r.images()
	if o.Probe {
		if cluster {
			r.probe(ctx)
		} else {
			r.skip("probe", "slurmrestd or the partition failed above")
		}
	}
	return Report{Checks: r.checks}
}

// run accumulates checks.
type run struct {
	o      Options
	p      *profile.Profile
	client *slurm.Client
	checks []Check
}

func (r *run) pass(name, format string, args ...any) {
	r.checks = append(r.checks, Check{Name: name, OK: true, State: "passed", Detail: fmt.Sprintf(format, args...)})
}

func (r *run) skip(name, why string) {
	r.checks = append(r.checks, Check{Name: name, OK: true, State: "skipped", Skipped: true, Detail: "skipped: " + why})
}

func (r *run) fail(name string, code exitcode.Code, detail, fix string) {
	r.checks = append(r.checks, Check{Name: name, State: "failed", Exit: code, Detail: detail, Fix: fix})
}

// errText is err's message on one line.
func errText(err error) string {
	var apiErr *slurm.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Error()
	}
	return oneLine(err.Error())
}
