package enroot

import (
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Mount is a bind mount from the host into a container.
type Mount struct {
	Source   string // absolute host path
	Target   string // absolute container path
	ReadOnly bool
}

// ParseMount parses "SRC:DST" or "SRC:DST:ro" (or ":rw").
func ParseMount(s string) (Mount, error) {
	parts := strings.Split(s, ":")
	var m Mount
	switch {
	case len(parts) == 2:
	case len(parts) == 3 && (parts[2] == "ro" || parts[2] == "rw"):
		m.ReadOnly = parts[2] == "ro"
	default:
		return Mount{}, fmt.Errorf("mount %q: want SRC:DST or SRC:DST:ro", s)
	}
	m.Source, m.Target = parts[0], parts[1]
	return m, m.validate()
}

// String returns SRC:DST or SRC:DST:ro, which is also the pyxis syntax.
func (m Mount) String() string {
	if m.ReadOnly {
		return m.Source + ":" + m.Target + ":ro"
	}
	return m.Source + ":" + m.Target
}

// validate rejects paths enroot and pyxis would split or misread: both
// split fields on ':', pyxis splits mounts on ',', and enroot's fstab fields
// on whitespace.
func (m Mount) validate() error {
	for _, p := range []struct{ what, path string }{{"source", m.Source}, {"target", m.Target}} {
		switch {
		case !filepath.IsAbs(p.path):
			return fmt.Errorf("mount %s %q is not an absolute path", p.what, p.path)
		case strings.ContainsAny(p.path, ":,") || strings.IndexFunc(p.path, unicode.IsSpace) >= 0:
			return fmt.Errorf("mount %s %q contains ':', ',' or whitespace, which enroot and pyxis cannot express", p.what, p.path)
		}
	}
	return nil
}

// enrootFstab renders the mount for enroot start --mount: the fstab fields
// joined by ':'. "SRC:DST:x-create=auto,rbind[,ro]" is what pyxis hands to
// enroot for its --container-mounts, so both runtimes see the same mount
// (create the target as a file or directory to match the source; recursive
// bind). The three-field form (options in the type column) is accepted by
// enroot-mount because the field contains a ','.
func (m Mount) enrootFstab() string {
	opts := "x-create=auto,rbind"
	if m.ReadOnly {
		opts += ",ro"
	}
	return m.Source + ":" + m.Target + ":" + opts
}

// Invocation is a command line plus the environment it needs. Env values
// are never part of Argv (argv is world-readable in /proc/PID/cmdline); the
// caller adds Env to the process environment — for srun steps, srun's own
// environment, which it exports to the step.
type Invocation struct {
	Argv []string
	Env  []string // KEY=VALUE, sorted by key
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// envNames validates env and returns its names, sorted, and KEY=VALUE pairs.
func envNames(env map[string]string) (names, pairs []string, err error) {
	for k := range env {
		if !envName.MatchString(k) {
			return nil, nil, fmt.Errorf("environment variable name %q: want letters, digits and '_', not starting with a digit", k)
		}
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		pairs = append(pairs, k+"="+env[k])
	}
	return names, pairs, nil
}

// StartSpec describes one `enroot start`.
type StartSpec struct {
	// Image is a squash file (absolute path) or the name of a container
	// made by `enroot create`.
	Image string
	// Env is set inside the container. Only the names go into argv
	// (--env NAME); enroot takes each value from its own environment.
	Env    map[string]string
	Mounts []Mount
	// Workdir, when set, is the working directory of Command. enroot start
	// has no such flag, so the command is run as
	// `env --chdir=DIR COMMAND...` inside the container, which needs GNU
	// coreutils 8.28 or later there (every Ubuntu/Debian based image since
	// 2018).
	Workdir string
	Root    bool   // --root: remap the user to root in the container
	RW      bool   // --rw: writable root filesystem
	Conf    string // --conf: configuration script
	RC      string // --rc: replaces the image's /etc/rc (e.g. to skip its entrypoint)
	// Command and its arguments; empty runs the image's default.
	Command []string
}

// StartCommand returns the argv of `enroot start` for spec:
//
//	ENROOT start [--root] [--rw] [--conf CONF] [--rc RC] [--env NAME]... [--mount FSTAB]... -- IMAGE [env --chdir=DIR] [COMMAND [ARG...]]
//
// enroot is the program (DefaultEnroot when empty). The flags are enroot's
// own (enroot start [options] [--] NAME|IMAGE [COMMAND] [ARG...]).
func StartCommand(enroot string, spec StartSpec) (Invocation, error) {
	if enroot == "" {
		enroot = DefaultEnroot
	}
	if spec.Image == "" {
		return Invocation{}, errors.New("enroot start: no image or container name")
	}
	if strings.Contains(spec.Image, "/") && !filepath.IsAbs(spec.Image) {
		return Invocation{}, fmt.Errorf("enroot start: image %q is neither an absolute squash path nor a container name", spec.Image)
	}
	names, pairs, err := envNames(spec.Env)
	if err != nil {
		return Invocation{}, fmt.Errorf("enroot start: %w", err)
	}
	argv := []string{enroot, "start"}
	if spec.Root {
		argv = append(argv, "--root")
	}
	if spec.RW {
		argv = append(argv, "--rw")
	}
	if spec.Conf != "" {
		argv = append(argv, "--conf", spec.Conf)
	}
	if spec.RC != "" {
		argv = append(argv, "--rc", spec.RC)
	}
	for _, n := range names {
		argv = append(argv, "--env", n)
	}
	for _, m := range spec.Mounts {
		if err := m.validate(); err != nil {
			return Invocation{}, fmt.Errorf("enroot start: %w", err)
		}
		argv = append(argv, "--mount", m.enrootFstab())
	}
	// "--" keeps an image name from ever being read as an option.
	argv = append(argv, "--", spec.Image)
	if spec.Workdir != "" {
		if !filepath.IsAbs(spec.Workdir) {
			return Invocation{}, fmt.Errorf("enroot start: workdir %q is not absolute", spec.Workdir)
		}
		if len(spec.Command) == 0 {
			return Invocation{}, errors.New("enroot start: a workdir needs a command")
		}
		argv = append(argv, "env", "--chdir="+spec.Workdir)
	}
	argv = append(argv, spec.Command...)
	return Invocation{Argv: argv, Env: pairs}, nil
}

// PyxisSpec describes the container of one srun step under pyxis.
type PyxisSpec struct {
	// Image is the --container-image value: Ref.PyxisImage(), i.e. a squash
	// path or an enroot URI without "docker://".
	Image  string
	Mounts []Mount
	// Env is set in the container. Only the names go into argv
	// (--container-env NAME,...): pyxis takes the values from the step's
	// environment and sets them before the entrypoint, over the image's own.
	Env     map[string]string
	Workdir string
	// MountHome mounts the user's home (default: --no-container-mount-home).
	MountHome bool
	// Entrypoint runs the image's entrypoint (default: --no-container-entrypoint).
	Entrypoint bool
	RemapRoot  bool // --container-remap-root
	Writable   bool // --container-writable
}

// PyxisFlags returns the srun flags for spec, each one argv element:
//
//	--container-image=IMG [--container-mounts=SRC:DST[:ro],...] [--container-workdir=DIR]
//	--[no-]container-mount-home --[no-]container-entrypoint [--container-env=NAME,...]
//	[--container-remap-root] [--container-writable]
func PyxisFlags(spec PyxisSpec) (Invocation, error) {
	if spec.Image == "" {
		return Invocation{}, errors.New("pyxis: no container image")
	}
	if strings.ContainsAny(spec.Image, ", ") {
		return Invocation{}, fmt.Errorf("pyxis: container image %q contains ',' or a space", spec.Image)
	}
	names, pairs, err := envNames(spec.Env)
	if err != nil {
		return Invocation{}, fmt.Errorf("pyxis: %w", err)
	}
	flags := []string{"--container-image=" + spec.Image}
	if len(spec.Mounts) > 0 {
		mounts := make([]string, len(spec.Mounts))
		for i, m := range spec.Mounts {
			if err := m.validate(); err != nil {
				return Invocation{}, fmt.Errorf("pyxis: %w", err)
			}
			mounts[i] = m.String()
		}
		flags = append(flags, "--container-mounts="+strings.Join(mounts, ","))
	}
	if spec.Workdir != "" {
		if !filepath.IsAbs(spec.Workdir) {
			return Invocation{}, fmt.Errorf("pyxis: workdir %q is not absolute", spec.Workdir)
		}
		flags = append(flags, "--container-workdir="+spec.Workdir)
	}
	if spec.MountHome {
		flags = append(flags, "--container-mount-home")
	} else {
		flags = append(flags, "--no-container-mount-home")
	}
	if spec.Entrypoint {
		flags = append(flags, "--container-entrypoint")
	} else {
		flags = append(flags, "--no-container-entrypoint")
	}
	if len(names) > 0 {
		flags = append(flags, "--container-env="+strings.Join(names, ","))
	}
	if spec.RemapRoot {
		flags = append(flags, "--container-remap-root")
	}
	if spec.Writable {
		flags = append(flags, "--container-writable")
	}
	return Invocation{Argv: flags, Env: pairs}, nil
}
