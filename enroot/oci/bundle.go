package oci

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/readlimit"
)

// Suffix ends the name of an image's bundle directory in the image cache.
const Suffix = ".oci"

// maxConfig bounds a bundle's config.json (umoci writes a few KiB).
const maxConfig = 1 << 20

// BundleName is the directory name of ref's bundle: the squash name the
// enroot path uses for the same reference, with Suffix for ".sqsh", so the
// two caches can share one directory without colliding.
func BundleName(ref enroot.Ref) string {
	return strings.TrimSuffix(ref.SquashName(), ".sqsh") + Suffix
}

// config is what this package reads of a runtime config.json; the rest is
// kept as it is (StepConfig edits the document as a map).
type config struct {
	OCIVersion string `json:"ociVersion"`
	Process    *struct {
		Env []string `json:"env"`
		Cwd string   `json:"cwd"`
	} `json:"process"`
	Root *struct {
		Path string `json:"path"`
	} `json:"root"`
}

// readConfig reads and checks bundle/config.json, returning it and the
// absolute root filesystem it names.
func readConfig(bundle string) ([]byte, string, error) {
	path := filepath.Join(bundle, "config.json")
	b, err := readlimit.ReadFile(path, maxConfig)
	if err != nil {
		return nil, "", err
	}
	var c config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	switch {
	case c.OCIVersion == "":
		return nil, "", fmt.Errorf("%s: no ociVersion: not an OCI runtime config", path)
	case c.Process == nil:
		return nil, "", fmt.Errorf("%s: no process", path)
	case c.Root == nil || c.Root.Path == "":
		return nil, "", fmt.Errorf("%s: no root.path", path)
	}
	root := c.Root.Path
	if !filepath.IsAbs(root) {
		root = filepath.Join(bundle, root)
	}
	info, err := os.Stat(root)
	if err != nil {
		return nil, "", fmt.Errorf("%s: root.path: %w", path, err)
	}
	if !info.IsDir() {
		return nil, "", fmt.Errorf("%s: root.path %s is not a directory", path, root)
	}
	return b, root, nil
}

// ValidateBundle checks that bundle holds a runtime config.json (with an
// OCI version, a process and a root) whose root filesystem is a directory.
func ValidateBundle(bundle string) error {
	_, _, err := readConfig(bundle)
	return err
}

// Inspect says what the bundle at path is: ok (whole, with a sidecar that
// still matches its config.json), unrecorded (whole, no sidecar), stale
// (whole, the sidecar describes another config.json), invalid or missing.
// It never writes.
func Inspect(path string) enroot.Status {
	st := enroot.Status{Path: path}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.State, st.Problem = enroot.StateMissing, err.Error()
		return st
	case err != nil:
		st.State, st.Problem = enroot.StateInvalid, err.Error()
		return st
	case !info.IsDir():
		st.State, st.Problem = enroot.StateInvalid, "not a directory"
		return st
	}
	if err := ValidateBundle(path); err != nil {
		st.State, st.Problem = enroot.StateInvalid, err.Error()
		return st
	}
	cfg, err := os.Stat(filepath.Join(path, "config.json"))
	if err != nil {
		st.State, st.Problem = enroot.StateInvalid, err.Error()
		return st
	}
	st.ModTime = cfg.ModTime()
	m, err := enroot.ReadManifest(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st.State, st.Problem = enroot.StateUnrecorded, "no sidecar"
	case err != nil:
		st.State, st.Problem = enroot.StateStale, err.Error()
	case !m.MTime.Equal(cfg.ModTime()):
		st.State, st.Problem, st.Manifest = enroot.StateStale, "config.json changed since the import", m
	default:
		st.State, st.Manifest, st.Size = enroot.StateOK, m, m.Size
	}
	return st
}

// StepSpec is what one srun step changes in the image's config.
type StepSpec struct {
	// Mounts are bind-mounted (recursively) into the container, after the
	// image's own mounts; one with the same target replaces the image's.
	Mounts []enroot.Mount
	// Workdir is the process's working directory ("" keeps the image's).
	Workdir string
	// UID and GID are the job user's: rootless runtimes can map only the
	// calling user to root in the container, whoever unpacked the image.
	UID, GID int
}

// StepConfig returns the config.json of a step's own bundle from the
// image's bundle directory: the image's config (its environment, user and
// mounts, as umoci wrote them) with
//
//   - root.path the image's root filesystem, absolute and read-only, so
//     every step of every run shares one unpacked image;
//   - the node's network and host name: no network or UTS namespace (Slurm's
//     Containers Guide: containers use the host network), no hostname;
//   - no rlimits of the image's (umoci writes RLIMIT_NOFILE 1024; engines
//     need the node's) and no terminal;
//   - the user namespace's single mapping made the job user's;
//   - a tmpfs at /tmp (the root is read-only) and the step's bind mounts.
//
// Slurm fills in process.args and process.env (the step's command and
// environment, over the image's variables of the same name) and its own
// spool mount when it runs the step (slurmstepd's container.c).
func StepConfig(image string, s StepSpec) ([]byte, error) {
	b, root, err := readConfig(image)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	doc["root"] = map[string]any{"path": root, "readonly": true}
	delete(doc, "hostname")
	proc, _ := doc["process"].(map[string]any)
	delete(proc, "rlimits")
	proc["terminal"] = false
	if s.Workdir != "" {
		if !filepath.IsAbs(s.Workdir) {
			return nil, fmt.Errorf("workdir %q is not absolute", s.Workdir)
		}
		proc["cwd"] = s.Workdir
	}
	if linux, ok := doc["linux"].(map[string]any); ok {
		var keep []any
		userns := false
		nss, _ := linux["namespaces"].([]any)
		for _, ns := range nss {
			m, _ := ns.(map[string]any)
			switch m["type"] {
			case "network", "uts":
				continue
			case "user":
				userns = true
			}
			keep = append(keep, ns)
		}
		linux["namespaces"] = keep
		if userns {
			linux["uidMappings"] = []any{map[string]any{"containerID": 0, "hostID": s.UID, "size": 1}}
			linux["gidMappings"] = []any{map[string]any{"containerID": 0, "hostID": s.GID, "size": 1}}
		}
	}
	targets := map[string]bool{"/tmp": true}
	for _, m := range s.Mounts {
		if err := checkMount(m); err != nil {
			return nil, err
		}
		targets[filepath.Clean(m.Target)] = true
	}
	var mounts []any
	old, _ := doc["mounts"].([]any)
	for _, m := range old {
		mm, _ := m.(map[string]any)
		if dst, _ := mm["destination"].(string); targets[filepath.Clean(dst)] {
			continue
		}
		mounts = append(mounts, m)
	}
	mounts = append(mounts, map[string]any{"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
		"options": []any{"nosuid", "nodev", "mode=1777"}})
	for _, m := range s.Mounts {
		opts := []any{"rbind"}
		if m.ReadOnly {
			opts = append(opts, "ro")
		}
		mounts = append(mounts, map[string]any{"destination": m.Target, "type": "bind", "source": m.Source, "options": opts})
	}
	doc["mounts"] = mounts
	out, err := json.MarshalIndent(doc, "", "\t")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func checkMount(m enroot.Mount) error {
	if !filepath.IsAbs(m.Source) || !filepath.IsAbs(m.Target) {
		return fmt.Errorf("mount %s: source and target must be absolute", m)
	}
	return nil
}

// SrunFlags returns srun's flag for a step in the bundle at stepBundle
// (Slurm's `--container=PATH`, an absolute path on the nodes).
func SrunFlags(stepBundle string) ([]string, error) {
	if !filepath.IsAbs(stepBundle) {
		return nil, fmt.Errorf("srun --container: bundle %q is not absolute", stepBundle)
	}
	if strings.ContainsAny(stepBundle, " \t\n") {
		return nil, fmt.Errorf("srun --container: bundle %q contains white space", stepBundle)
	}
	return []string{"--container=" + stepBundle}, nil
}

// List inspects every bundle (<name>.oci directory) in dir, sorted by path;
// private import directories (leading '.') are not bundles.
func List(dir string) ([]enroot.Status, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing image directory: %w", err)
	}
	var out []enroot.Status
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), Suffix) || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		out = append(out, Inspect(filepath.Join(dir, e.Name())))
	}
	return out, nil
}
