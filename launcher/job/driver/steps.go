package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/enroot/oci"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// Step is one srun invocation: its argv and the variables its environment
// needs beyond the driver's own (values never go into argv).
type Step struct {
	Argv []string
	Env  []string // KEY=VALUE
	Spec Spec
	// Files are written before the step starts (placeholders filled).
	Files map[string]string
}

// BuildStep renders the srun command of proc on alloc. getenv supplies the
// passthrough variables' values (os.Getenv in production).
func BuildStep(pl *plan.Plan, proc plan.Process, alloc Allocation, getenv func(string) string) (Step, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	spec := Spec{Name: proc.Name, Workdir: pl.RunDir, Env: map[string]string{}, Fingerprint: pl.Layout.Fingerprints()}
	for _, a := range proc.Argv {
		v, err := alloc.Fill(a)
		if err != nil {
			return Step{}, fmt.Errorf("process %s argv: %w", proc.Name, err)
		}
		spec.Argv = append(spec.Argv, v)
	}
	for k, v := range proc.Env {
		fv, err := alloc.Fill(v)
		if err != nil {
			return Step{}, fmt.Errorf("process %s env %s: %w", proc.Name, k, err)
		}
		spec.Env[k] = fv
	}
	spec.Unset = append([]string(nil), proc.Unset...)
	spec.NoFile = proc.NoFile
	for _, argv := range proc.Setup {
		var filled []string
		for _, a := range argv {
			v, err := alloc.Fill(a)
			if err != nil {
				return Step{}, fmt.Errorf("process %s setup: %w", proc.Name, err)
			}
			filled = append(filled, v)
		}
		spec.Setup = append(spec.Setup, filled)
	}
	hosts := make([]string, len(proc.Nodes))
	for i, n := range proc.Nodes {
		if n >= len(alloc.Hosts) {
			return Step{}, fmt.Errorf("process %s: node %d outside the allocation of %d nodes", proc.Name, n, len(alloc.Hosts))
		}
		hosts[i] = alloc.Hosts[n]
	}
	ntasks := proc.Srun.NTasks
	if ntasks == 0 {
		ntasks = len(hosts)
	}
	argv := []string{"srun", "--jobid", alloc.JobID, "--overlap",
		"--nodes", strconv.Itoa(len(hosts)), "--ntasks", strconv.Itoa(ntasks),
		"--nodelist", joinComma(hosts), "--output", proc.Log}
	if proc.Srun.MPI != "" {
		argv = append(argv, "--mpi", proc.Srun.MPI)
	}
	if len(proc.Srun.Export) > 0 {
		argv = append(argv, "--export=ALL,"+joinComma(proc.Srun.Export))
	}
	// Secrets reach the container by name only; their values stay in the
	// environment.
	passthrough := map[string]string{}
	for _, name := range append(append([]string(nil), pl.EnvPassthrough...), proc.Passenv...) {
		if v := getenv(name); v != "" {
			passthrough[name] = v
		}
	}
	shim := []string{pl.Binary, "exec", pl.Layout.StepSpec(proc.Name)}
	var env []string
	var ociFiles map[string]string
	switch {
	case !proc.Container || pl.Runtime == profile.RuntimeNone:
		argv = append(argv, proc.Srun.Extra...)
		argv = append(argv, shim...)
	case pl.Runtime == profile.RuntimePyxis:
		image := pl.Image.Squash
		if proc.Image != "" {
			ref, err := enroot.ParseRef(proc.Image)
			if err != nil {
				return Step{}, fmt.Errorf("process %s image: %w", proc.Name, err)
			}
			image = ref.PyxisImage()
		}
		mounts, err := parseMounts(proc.Mounts)
		if err != nil {
			return Step{}, fmt.Errorf("process %s: %w", proc.Name, err)
		}
		inv, err := enroot.PyxisFlags(enroot.PyxisSpec{Image: image, Mounts: mounts, Env: passthrough})
		if err != nil {
			return Step{}, fmt.Errorf("process %s: %w", proc.Name, err)
		}
		argv = append(argv, inv.Argv...)
		argv = append(argv, proc.Srun.Extra...)
		argv = append(argv, shim...)
		env = inv.Env
	case pl.Runtime == profile.RuntimeEnroot:
		image := pl.Image.Squash
		if proc.Image != "" {
			ref, err := enroot.ParseRef(proc.Image)
			if err != nil || !ref.IsLocal() {
				return Step{}, fmt.Errorf("process %s: the enroot runtime needs a .sqsh file for image %q (import it and name the squash in [containers])", proc.Name, proc.Image)
			}
			image = ref.Path
		}
		mounts, err := parseMounts(proc.Mounts)
		if err != nil {
			return Step{}, fmt.Errorf("process %s: %w", proc.Name, err)
		}
		inv, err := enroot.StartCommand(pl.Enroot, enroot.StartSpec{Image: image, Mounts: mounts, Env: passthrough, Command: shim})
		if err != nil {
			return Step{}, fmt.Errorf("process %s: %w", proc.Name, err)
		}
		argv = append(argv, proc.Srun.Extra...)
		argv = append(argv, inv.Argv...)
		env = inv.Env
	case pl.Runtime == profile.RuntimeOCI:
		bundle, cfg, err := ociStep(pl, proc)
		if err != nil {
			return Step{}, fmt.Errorf("process %s: %w", proc.Name, err)
		}
		flags, err := oci.SrunFlags(bundle)
		if err != nil {
			return Step{}, fmt.Errorf("process %s: %w", proc.Name, err)
		}
		argv = append(argv, flags...)
		argv = append(argv, proc.Srun.Extra...)
		argv = append(argv, shim...)
		// Secrets by name as for pyxis: Slurm sets the container's
		// environment from the step's, where these values are.
		_, env = sortedEnv(passthrough)
		ociFiles = map[string]string{filepath.Join(bundle, "config.json"): cfg}
	default:
		return Step{}, fmt.Errorf("runtime %q is not pyxis, enroot, oci or none", pl.Runtime)
	}
	files := map[string]string{}
	for path, content := range ociFiles {
		files[path] = content
	}
	for path, content := range proc.Files {
		if !strings.HasPrefix(filepath.Clean(path)+"/", pl.RunDir+"/") {
			return Step{}, fmt.Errorf("process %s: file %s is outside the run directory", proc.Name, path)
		}
		v, err := alloc.Fill(content)
		if err != nil {
			return Step{}, fmt.Errorf("process %s file %s: %w", proc.Name, path, err)
		}
		files[path] = v
	}
	return Step{Argv: argv, Env: env, Spec: spec, Files: files}, nil
}

// ociStep returns the step's own bundle directory (beside its spec in the
// run directory) and the config.json to write there: the image's bundle's,
// with the step's mounts and the job user's id mapping (oci.StepConfig).
// The image's bundle must have been imported (run does that before it
// submits); a process's own image is looked up beside the plan's.
func ociStep(pl *plan.Plan, proc plan.Process) (string, string, error) {
	image := pl.Image.Squash
	if proc.Image != "" {
		ref, err := enroot.ParseRef(proc.Image)
		if err != nil || ref.IsLocal() {
			return "", "", fmt.Errorf("the oci runtime needs an image reference for image %q, not a squash file", proc.Image)
		}
		image = filepath.Join(filepath.Dir(pl.Image.Squash), oci.BundleName(ref))
	}
	mounts, err := parseMounts(proc.Mounts)
	if err != nil {
		return "", "", err
	}
	cfg, err := oci.StepConfig(image, oci.StepSpec{Mounts: mounts, UID: os.Getuid(), GID: os.Getgid()})
	if err != nil {
		return "", "", fmt.Errorf("the image's OCI bundle (import it first: slurmbench images import): %w", err)
	}
	return filepath.Join(pl.Layout.Steps, proc.Name+oci.Suffix), string(cfg), nil
}

// maxRuntimeLog bounds what ociStartFailure quotes of the runtime.
const maxRuntimeLog = 30

// ociStartFailure tells a step whose OCI container never started and
// returns the runtime's own lines. Under the oci runtime slurmstepd runs
// the OCI runtime (oci.conf's RunTimeRun) as the task, and the shim inside
// the container prints "slurmbench exec: " before anything else: a failed
// step whose log has no such line never got into its container, and what
// its log holds, srun's and slurmstepd's lines aside, is the runtime's
// error (crun: "the target `/proc` is invalid: Not a directory").
func ociStartFailure(pl *plan.Plan, p plan.Process, lines []string) ([]string, bool) {
	if pl.Runtime != profile.RuntimeOCI || !p.Container {
		return nil, false
	}
	var out []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "slurmbench exec: "):
			return nil, false
		case strings.TrimSpace(l) == "", strings.HasPrefix(l, "srun: "), strings.Contains(l, "slurmstepd"):
			continue
		}
		out = append(out, strings.TrimRight(l, " \t\r"))
	}
	if len(out) > maxRuntimeLog {
		out = out[len(out)-maxRuntimeLog:]
	}
	return out, len(out) > 0
}

// sortedEnv is env's names, sorted, and its KEY=VALUE pairs in that order.
func sortedEnv(env map[string]string) (names, pairs []string) {
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		pairs = append(pairs, k+"="+env[k])
	}
	return names, pairs
}

func parseMounts(ms []string) ([]enroot.Mount, error) {
	out := make([]enroot.Mount, 0, len(ms))
	for _, m := range ms {
		pm, err := enroot.ParseMount(m)
		if err != nil {
			return nil, err
		}
		out = append(out, pm)
	}
	return out, nil
}

func joinComma(xs []string) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}
