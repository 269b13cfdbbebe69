// Package driver runs a plan inside its Slurm allocation: one srun step per
// process in the profile's container runtime, a health gate that ends as
// soon as any step exits, failure diagnosis from the failed step's log, and
// the benchmark and eval steps, with status and outcome files written as it
// goes. The batch script execs `slurmbench driver --plan FILE`.
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/fingerprint"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// Spec is what one step executes, after placeholders are filled: the
// `slurmbench exec SPEC` shim sets Env over the environment the container
// runtime gives it (so Slurm's own CUDA_VISIBLE_DEVICES cannot win over the
// plan's GPU slice), changes to Workdir and execs Argv. No shell is involved.
type Spec struct {
	Name    string            `json:"name"`
	Argv    []string          `json:"argv"`
	Env     map[string]string `json:"env,omitempty"`
	Unset   []string          `json:"unset,omitempty"` // removed before Env is applied
	Setup   [][]string        `json:"setup,omitempty"` // run in order before Argv; any failure ends the step
	Workdir string            `json:"workdir,omitempty"`
	// NoFile, when set, is the open-files limit set before Argv runs.
	NoFile uint64 `json:"rlimit_nofile,omitempty"`
	// Fingerprint, when set, is the directory the shim writes the step's
	// fingerprint into (package fingerprint) after Setup, just before it
	// execs Argv: what really runs, read inside the container.
	Fingerprint string `json:"fingerprint,omitempty"`
}

// WriteSpec writes spec atomically (it is read on another node).
func WriteSpec(path string, spec Spec) error {
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, append(b, '\n'), atomicfile.Options{Overwrite: true, Perm: 0o644})
}

// ReadSpec reads a spec file.
func ReadSpec(path string) (Spec, error) {
	var s Spec
	b, err := os.ReadFile(path)
	if err != nil {
		return s, fmt.Errorf("reading step spec: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("step spec %s: %w", path, err)
	}
	if len(s.Argv) == 0 {
		return s, fmt.Errorf("step spec %s: empty argv", path)
	}
	return s, nil
}

// Exec replaces the current process with spec's program. It returns only on
// error.
func Exec(spec Spec) error {
	env := mergeEnv(withoutVars(os.Environ(), spec.Unset), spec.Env)
	if spec.Workdir != "" {
		if err := os.Chdir(spec.Workdir); err != nil {
			return fmt.Errorf("step %s: %w", spec.Name, err)
		}
	}
	host, _ := os.Hostname()
	for i, argv := range spec.Setup {
		fmt.Fprintf(os.Stderr, "slurmbench exec: %s setup %d/%d on %s: %s\n", spec.Name, i+1, len(spec.Setup), host, plan.QuoteArgv(argv))
		if err := runSetup(argv, env); err != nil {
			return &SetupError{Step: i + 1, Argv: argv, Err: err}
		}
	}
	prog, err := lookPath(spec.Argv[0], env)
	if err != nil {
		return fmt.Errorf("step %s: %w", spec.Name, err)
	}
	if spec.NoFile > 0 {
		// srtctl runs `ulimit -n N && nginx …`: the program does not start
		// when the limit cannot be raised.
		lim := syscall.Rlimit{Cur: spec.NoFile, Max: spec.NoFile}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return fmt.Errorf("step %s: raising the open-files limit to %d: %w", spec.Name, spec.NoFile, err)
		}
	}
	if spec.Fingerprint != "" {
		writeFingerprint(spec, env)
	}
	fmt.Fprintf(os.Stderr, "slurmbench exec: %s on %s: %s\n", spec.Name, host, plan.QuoteArgv(spec.Argv))
	if err := syscall.Exec(prog, spec.Argv, env); err != nil {
		return fmt.Errorf("step %s: exec %s: %w", spec.Name, prog, err)
	}
	return nil
}

// SetupError is a failed setup step; ExitCode is the step's, so the srun
// step (and the driver's diagnosis) sees how it failed.
type SetupError struct {
	Step int
	Argv []string
	Err  error
}

func (e *SetupError) Error() string {
	return fmt.Sprintf("setup step %d (%s): %v", e.Step, plan.QuoteArgv(e.Argv), e.Err)
}

// ExitCode is the failed step's exit code (1 when it did not start).
func (e *SetupError) ExitCode() int {
	var ee *exec.ExitError
	if errors.As(e.Err, &ee) && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	return 1
}

// runSetup runs one setup step to its end, forwarding SIGTERM/SIGINT so a
// stopped step stops its setup too.
func runSetup(argv, env []string) error {
	prog, err := lookPath(argv[0], env)
	if err != nil {
		return err
	}
	//nolint:noctx // the exec shim has no context: srun's signal to the step ends its setup too (see above)
	cmd := exec.Command(prog, argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, os.Stdout, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			_ = cmd.Process.Signal(s)
		case err := <-done:
			return err
		}
	}
}

// lookPath finds prog on the PATH the step will have.
func lookPath(prog string, env []string) (string, error) {
	if strings.Contains(prog, "/") {
		return prog, nil
	}
	old := os.Getenv("PATH")
	defer os.Setenv("PATH", old)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			os.Setenv("PATH", v)
		}
	}
	return exec.LookPath(prog)
}

func withoutVars(env []string, names []string) []string {
	if len(names) == 0 {
		return env
	}
	drop := map[string]bool{}
	for _, n := range names {
		drop[n] = true
	}
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return out
}

// mergeEnv sets over's variables on base (over wins), sorted for stable
// output.
func mergeEnv(base []string, over map[string]string) []string {
	m := make(map[string]string, len(base)+len(over))
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	for k, v := range over {
		m[k] = v
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

// writeFingerprint records what the step runs; a probe that cannot write
// says so and the step still starts (provenance never fails a run).
func writeFingerprint(spec Spec, env []string) {
	rec := fingerprint.Probe(context.Background(), fingerprint.Options{Step: spec.Name, Argv: spec.Argv, Env: env})
	path, err := fingerprint.Write(spec.Fingerprint, rec)
	if err != nil {
		fmt.Fprintf(os.Stderr, "slurmbench exec: %s: writing its fingerprint: %v\n", spec.Name, err)
		return
	}
	fmt.Fprintf(os.Stderr, "slurmbench exec: %s fingerprint: %d packages, %d GPUs -> %s\n", spec.Name, len(rec.Packages), len(rec.GPUs), path)
	for _, n := range rec.Notes {
		fmt.Fprintf(os.Stderr, "slurmbench exec: %s fingerprint: %s\n", spec.Name, n)
	}
}
