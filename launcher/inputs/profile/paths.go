package profile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Canonical returns path as an absolute, symlink-free, cleaned path. The
// path must exist. Resolving once, at start, is what makes the rest of a run
// independent of the working directory and of how the binary was invoked.
func Canonical(path string) (string, error) {
	if err := checkPathText(path); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", path, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%s: no such file or directory", abs)
		}
		return "", fmt.Errorf("resolving %q: %w", path, err)
	}
	return real, nil
}

// CanonicalMaybe is Canonical for a path that may not exist yet (a runs dir
// to be created): the longest existing prefix is resolved, the rest appended.
func CanonicalMaybe(path string) (string, error) {
	if err := checkPathText(path); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving %q: %w", path, err)
	}
	var rest []string
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("resolving %q: %w", path, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
}

// envReference is a shell variable reference ($VAR or ${VAR}) in a path.
var envReference = regexp.MustCompile(`\$(\{[^}]*\}?|[A-Za-z_][A-Za-z0-9_]*)`)

// resolvePath makes p absolute relative to base (the profile's directory)
// and canonical. When mustExist, a missing path is an error.
func resolvePath(base, p string, mustExist bool) (string, error) {
	if err := checkPathText(p); err != nil {
		return "", err
	}
	if strings.HasPrefix(p, "~") {
		return "", fmt.Errorf("%q: '~' is not expanded; write the absolute path", p)
	}
	if v := envReference.FindString(p); v != "" {
		return "", fmt.Errorf("%q: %s is not expanded (profiles are read as written); write the path", p, v)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	if mustExist {
		if _, err := os.Stat(p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return "", fmt.Errorf("%s: no such file or directory", p)
			}
			return "", err
		}
		return Canonical(p)
	}
	return CanonicalMaybe(p)
}

// ResolvePath is resolvePath for callers outside the package (recipe mounts).
func ResolvePath(base, p string, mustExist bool) (string, error) {
	return resolvePath(base, p, mustExist)
}

// resolveMount resolves the host side of "host:container[:ro|:rw]".
func resolveMount(base, m string) (string, error) {
	host, rest, ok := strings.Cut(m, ":")
	if !ok || host == "" || rest == "" {
		return "", fmt.Errorf("%q is not host:container[:ro]", m)
	}
	ctr, opt, _ := strings.Cut(rest, ":")
	if !filepath.IsAbs(ctr) {
		return "", fmt.Errorf("%q: container path %q must be absolute", m, ctr)
	}
	if opt != "" && opt != "ro" && opt != "rw" {
		return "", fmt.Errorf("%q: option %q is not ro or rw", m, opt)
	}
	h, err := resolvePath(base, host, false)
	if err != nil {
		return "", err
	}
	out := h + ":" + filepath.Clean(ctr)
	if opt != "" {
		out += ":" + opt
	}
	return out, nil
}

func checkPathText(p string) error {
	if p == "" {
		return errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return fmt.Errorf("%q contains a NUL byte", p)
	}
	if strings.ContainsAny(p, "\n\r") {
		return fmt.Errorf("%q contains a newline", p)
	}
	if strings.Contains(p, ",") {
		// Mount lists are comma-joined for pyxis; a comma would split a path.
		return fmt.Errorf("%q contains a comma, which container mount lists cannot carry", p)
	}
	return nil
}

// UseConfigs makes dir, which a launch staged, the directory containers see
// at /configs (paths.configs), unless the TOML names its own; note says
// what it holds, for the profile's sources.
func (p *Profile) UseConfigs(dir, note string) {
	if p.Paths.Configs != "" {
		return
	}
	p.Paths.Configs = dir
	if p.Sources == nil {
		p.Sources = map[string]Source{}
	}
	p.Sources["paths.configs"] = Source{File: dir, Note: note}
}
