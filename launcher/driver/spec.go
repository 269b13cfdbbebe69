// Package driver runs a plan inside its Slurm allocation: one srun step per
// process in the profile's container runtime, a health gate that ends as
// soon as any step exits, failure diagnosis from the failed step's log, and
// the benchmark and eval steps, with status and outcome files written as it
// goes. The batch script execs `slurmbench driver --plan FILE`.
package driver

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/slurmbench/slurmbench/results/atomicfile"
)

// Spec is what one step executes, after placeholders are filled: the
// `slurmbench exec SPEC` shim sets Env over the environment the container
// runtime gives it (so Slurm's own CUDA_VISIBLE_DEVICES cannot win over the
// plan's GPU slice), changes to Workdir and execs Argv. No shell is involved.
type Spec struct {
	Name    string            `json:"name"`
	Argv    []string          `json:"argv"`
	Env     map[string]string `json:"env,omitempty"`
	Workdir string            `json:"workdir,omitempty"`
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
	env := mergeEnv(os.Environ(), spec.Env)
	if spec.Workdir != "" {
		if err := os.Chdir(spec.Workdir); err != nil {
			return fmt.Errorf("step %s: %w", spec.Name, err)
		}
	}
	prog := spec.Argv[0]
	if !strings.Contains(prog, "/") {
		// Look the program up on the PATH the step will have.
		old := os.Getenv("PATH")
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "PATH="); ok {
				os.Setenv("PATH", v)
			}
		}
		p, err := exec.LookPath(prog)
		os.Setenv("PATH", old)
		if err != nil {
			return fmt.Errorf("step %s: %w", spec.Name, err)
		}
		prog = p
	}
	host, _ := os.Hostname()
	fmt.Fprintf(os.Stderr, "slurmbench exec: %s on %s: %s\n", spec.Name, host, oneLine(spec.Argv))
	if err := syscall.Exec(prog, spec.Argv, env); err != nil {
		return fmt.Errorf("step %s: exec %s: %w", spec.Name, prog, err)
	}
	return nil
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

// specPath is where the driver writes a process's spec.
func specPath(runDir, name string) string {
	return filepath.Join(runDir, "steps", name+".json")
}

// oneLine shows argv on one line: words with white space or quotes are
// Go-quoted, so a multi-line argument cannot pose as the program's output.
func oneLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\r\"'\\") {
			out[i] = strconv.Quote(a)
		} else {
			out[i] = a
		}
	}
	return strings.Join(out, " ")
}
