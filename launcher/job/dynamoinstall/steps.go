package dynamoinstall

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

// The commands of a Dynamo install: srtctl's, run once per cache entry
// (FetchSteps) instead of once per container, then per container from the
// entry (EntryFiles, InstallSteps). Install runs them; the plan only names
// the source (launcher.Dynamo).

// nvidiaIndex is where ai-dynamo releases are published (srtctl's
// --extra-index-url).
const nvidiaIndex = "https://pypi.nvidia.com"

// dynamoRepo is the source a dynamo.hash or top_of_tree build clones.
const dynamoRepo = "https://github.com/ai-dynamo/dynamo.git"

var (
	pythonTagRe = regexp.MustCompile(`^cp[0-9]{2,3}$`)
	machineRe   = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// CacheKey names the cache entry of d for a container whose Python
// is pythonTag ("cp312") on machine ("x86_64", "aarch64"): one directory
// per source, one subdirectory per ABI, so a cache on a filesystem shared by
// clusters of both architectures never hands one the other's wheel.
func CacheKey(d plan.Dynamo, pythonTag, machine string) (string, error) {
	kind, ref, err := d.Source()
	if err != nil {
		return "", err
	}
	if !pythonTagRe.MatchString(pythonTag) {
		return "", fmt.Errorf("python tag %q is not like cp312", pythonTag)
	}
	if !machineRe.MatchString(machine) {
		return "", fmt.Errorf("machine %q is not like x86_64", machine)
	}
	if d.Git != "" {
		// A fork's commit is its own entry: an abbreviated id need not
		// name the same tree in two repositories.
		sum := sha256.Sum256([]byte(d.Git))
		kind += "-" + hex.EncodeToString(sum[:6])
	}
	return path.Join(kind+"-"+ref, pythonTag+"-"+machine), nil
}

// Step is one command of a Dynamo fetch or install, run inside the
// engine container.
type Step struct {
	Argv []string
	Dir  string            // working directory; "" = the caller's
	Env  map[string]string // set over the caller's environment
	// PathPrepend are directories put before the caller's PATH.
	PathPrepend []string
}

// FetchSteps fill dest (an empty temporary directory on the cache's
// filesystem, renamed to the entry once every step succeeded) with what
// InstallSteps needs. work is scratch space inside the container; for
// a source build home is the container user's home (where rustup installs)
// and haveCargo says whether a Rust toolchain is already on PATH. These are
// srtctl's commands, run once per entry instead of once per container.
func FetchSteps(d plan.Dynamo, dest, work, home string, haveCargo bool) ([]Step, error) {
	kind, ref, err := d.Source()
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(dest) || !filepath.IsAbs(work) {
		return nil, fmt.Errorf("dynamo fetch: %q and %q must be absolute", dest, work)
	}
	switch kind {
	case "version", "wheel":
		argv := []string{"python3", "-m", "pip", "download", "--no-deps", "--only-binary=:all:"}
		if kind == "wheel" {
			argv = append(argv, "--pre")
		}
		argv = append(argv, "--extra-index-url", nvidiaIndex, "--dest", dest,
			"ai-dynamo-runtime=="+ref, "ai-dynamo=="+ref)
		return []Step{{Argv: argv}}, nil
	}
	// A source build, as srtctl's get_install_commands does it.
	src := filepath.Join(work, "dynamo")
	var steps []Step
	steps = append(steps,
		Step{Argv: []string{"apt-get", "update", "-qq"}},
		Step{Argv: []string{"apt-get", "install", "-y", "-qq", "libclang-dev", "curl", "git", "protobuf-compiler"}},
	)
	var cargoPath []string
	if !haveCargo {
		if !filepath.IsAbs(home) {
			return nil, fmt.Errorf("dynamo fetch: home %q must be absolute", home)
		}
		rustup := filepath.Join(work, "rustup-init.sh")
		steps = append(steps,
			Step{Argv: []string{"curl", "--proto", "=https", "--tlsv1.2", "-sSf", "-o", rustup, "https://sh.rustup.rs"}},
			Step{Argv: []string{"sh", rustup, "-y", "--default-toolchain", "stable", "-q"}},
		)
		// rustup installs into ~/.cargo (srtctl sources ~/.cargo/env).
		cargoPath = []string{filepath.Join(home, ".cargo", "bin")}
	}
	// srtctl's RUSTFLAGS; target-cpu=native is why the key names the machine.
	build := map[string]string{"RUSTFLAGS": "-C target-cpu=native --cfg tokio_unstable"}
	steps = append(steps,
		Step{Argv: []string{"python3", "-m", "pip", "install", "--break-system-packages", "--force-reinstall", "--quiet", "maturin"}},
		Step{Argv: []string{"git", "clone", cmp.Or(d.Git, dynamoRepo), src}},
	)
	if kind == "hash" {
		steps = append(steps, Step{Argv: []string{"git", "-C", src, "checkout", ref}})
	} else {
		// HEAD at fetch time: the log names the commit every container gets.
		steps = append(steps, Step{Argv: []string{"git", "-C", src, "rev-parse", "HEAD"}})
	}
	steps = append(steps,
		Step{Argv: []string{"maturin", "build", "--release", "-o", dest}, Dir: filepath.Join(src, "lib", "bindings", "python"), Env: build, PathPrepend: cargoPath},
		Step{Argv: []string{"tar", "--exclude=target", "--exclude=.git", "-czf", filepath.Join(dest, sourceTarball), "-C", work, "dynamo"}},
	)
	return steps, nil
}

// sourceTarball holds a source build's Python package, installed
// editable next to its runtime wheel (srtctl's dynamo-src.tar.gz).
const sourceTarball = "dynamo-src.tar.gz"

// EntryFiles picks, from the file names in a cache entry, the ones
// InstallSteps installs: the runtime wheel and the ai-dynamo wheel of
// the exact version, or a source build's runtime wheel and source tarball.
// A missing or ambiguous file is an error (an incomplete entry is never used).
func EntryFiles(d plan.Dynamo, names []string) ([]string, error) {
	kind, ref, err := d.Source()
	if err != nil {
		return nil, err
	}
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	pick := func(prefix, suffix string) (string, error) {
		var found []string
		for _, n := range sorted {
			if strings.HasPrefix(n, prefix) && strings.HasSuffix(n, suffix) {
				found = append(found, n)
			}
		}
		switch len(found) {
		case 0:
			return "", fmt.Errorf("dynamo cache entry has no %s*%s", prefix, suffix)
		case 1:
			return found[0], nil
		}
		return "", fmt.Errorf("dynamo cache entry has %d files %s*%s: %s", len(found), prefix, suffix, strings.Join(found, ", "))
	}
	var want [][2]string
	if kind == "hash" || kind == "top-of-tree" {
		want = [][2]string{{"ai_dynamo_runtime-", ".whl"}, {sourceTarball, ""}}
	} else {
		want = [][2]string{{"ai_dynamo_runtime-" + ref + "-", ".whl"}, {"ai_dynamo-" + ref + "-", ".whl"}}
	}
	var out []string
	for _, w := range want {
		f, err := pick(w[0], w[1])
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// InstallSteps install d from entry (files as EntryFiles
// returned them). Releases resolve their own dependencies from the indexes
// as srtctl's pip install does; the Dynamo wheels themselves come from the
// cache. A source build is unpacked into work and installed editable, as
// srtctl does.
func InstallSteps(d plan.Dynamo, entry string, files []string, work string) ([]Step, error) {
	kind, _, err := d.Source()
	if err != nil {
		return nil, err
	}
	if len(files) != 2 {
		return nil, fmt.Errorf("dynamo install: want 2 cache files, got %d", len(files))
	}
	if !filepath.IsAbs(entry) || !filepath.IsAbs(work) {
		return nil, fmt.Errorf("dynamo install: %q and %q must be absolute", entry, work)
	}
	for _, f := range files {
		if f != filepath.Base(f) {
			return nil, fmt.Errorf("dynamo install: cache file %q is not a base name", f)
		}
	}
	if kind != "hash" && kind != "top-of-tree" {
		argv := []string{"python3", "-m", "pip", "install", "--break-system-packages"}
		if kind == "wheel" {
			argv = append(argv, "--pre")
		}
		argv = append(argv, "--extra-index-url", nvidiaIndex, filepath.Join(entry, files[0]), filepath.Join(entry, files[1]))
		return []Step{{Argv: argv}}, nil
	}
	src := filepath.Join(work, "dynamo-src")
	return []Step{
		{Argv: []string{"python3", "-m", "pip", "install", "--break-system-packages", "--force-reinstall", filepath.Join(entry, files[0])}},
		{Argv: []string{"rm", "-rf", src}},
		{Argv: []string{"mkdir", "-p", src}},
		{Argv: []string{"tar", "-xzf", filepath.Join(entry, files[1]), "-C", src}},
		{Argv: []string{"python3", "-m", "pip", "install", "--break-system-packages", "-e", filepath.Join(src, "dynamo")}},
	}, nil
}
