package launcher

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Installing Dynamo into a stock engine container, once per cache entry
// instead of once per container (srtctl pip-installs from PyPI, or unpacks
// its source build, in every worker and frontend container of every job:
// srt-slurm.md §2.6).
//
// A process that needs Dynamo runs one setup step,
//
//	<run>/bin/slurmbench dynamo-install --cache DIR --version V | --wheel V | --hash H
//
// inside its container. The subcommand names the cache entry with
// DynamoCacheKey (source, the container's Python and machine), fills it under
// an exclusive flock on the shared filesystem when it is not complete
// (DynamoFetchSteps into a temporary directory, renamed into place), then
// installs from it (DynamoEntryFiles, DynamoInstallSteps). Every worker of
// every later job with the same key reuses the entry.

// nvidiaIndex is where ai-dynamo releases are published (srtctl's
// --extra-index-url).
const nvidiaIndex = "https://pypi.nvidia.com"

// dynamoRepo is the source a dynamo.hash build clones.
const dynamoRepo = "https://github.com/ai-dynamo/dynamo.git"

var (
	dynamoVersionRe = regexp.MustCompile(`^[0-9][0-9A-Za-z.+!_-]*$`)
	dynamoHashRe    = regexp.MustCompile(`^[0-9a-f]{7,40}$`)
	pythonTagRe     = regexp.MustCompile(`^cp[0-9]{2,3}$`)
	machineRe       = regexp.MustCompile(`^[a-z0-9_]+$`)
)

// dynamoSource is what d installs: "version" (a release), "wheel" (an exact
// build, pre-releases included) or "hash" (a source commit), and its ref.
func dynamoSource(d Dynamo) (kind, ref string, err error) {
	switch {
	case d.Hash != "":
		if !dynamoHashRe.MatchString(d.Hash) {
			return "", "", fmt.Errorf("dynamo.hash %q is not a hex commit id", d.Hash)
		}
		return "hash", d.Hash, nil
	case d.Wheel != "":
		if !dynamoVersionRe.MatchString(d.Wheel) {
			return "", "", fmt.Errorf("dynamo.wheel %q is not a version", d.Wheel)
		}
		return "wheel", d.Wheel, nil
	case d.Version != "":
		if !dynamoVersionRe.MatchString(d.Version) {
			return "", "", fmt.Errorf("dynamo.version %q is not a version", d.Version)
		}
		return "version", d.Version, nil
	}
	return "", "", errors.New("dynamo: nothing to install (no version, wheel or hash)")
}

// dynamoInstallArgv is the setup step that installs d from its cache.
func dynamoInstallArgv(binary string, d Dynamo) ([]string, error) {
	kind, ref, err := dynamoSource(d)
	if err != nil {
		return nil, err
	}
	if !filepath.IsAbs(d.Cache) {
		return nil, fmt.Errorf("dynamo wheel cache %q is not absolute", d.Cache)
	}
	return []string{binary, "dynamo-install", "--cache", d.Cache, "--" + kind, ref}, nil
}

// dynamoWheelEnv is what srtctl exports for a dynamo.wheel install
// (DYNAMO_WHEEL_NAME, DYNAMO_VERSION), so the environment stays the same.
func dynamoWheelEnv(d Dynamo) map[string]string {
	if d.Wheel == "" {
		return nil
	}
	return map[string]string{
		"DYNAMO_WHEEL_NAME": "ai_dynamo-" + d.Wheel + "-py3-none-any.whl",
		"DYNAMO_VERSION":    d.Wheel,
	}
}

// DynamoCacheKey names the cache entry of d for a container whose Python
// is pythonTag ("cp312") on machine ("x86_64", "aarch64"): one directory
// per source, one subdirectory per ABI, so a cache on a filesystem shared by
// clusters of both architectures never hands one the other's wheel.
func DynamoCacheKey(d Dynamo, pythonTag, machine string) (string, error) {
	kind, ref, err := dynamoSource(d)
	if err != nil {
		return "", err
	}
	if !pythonTagRe.MatchString(pythonTag) {
		return "", fmt.Errorf("python tag %q is not like cp312", pythonTag)
	}
	if !machineRe.MatchString(machine) {
		return "", fmt.Errorf("machine %q is not like x86_64", machine)
	}
	return path.Join(kind+"-"+ref, pythonTag+"-"+machine), nil
}

// DynamoStep is one command of a Dynamo fetch or install, run inside the
// engine container.
type DynamoStep struct {
	Argv []string
	Dir  string            // working directory; "" = the caller's
	Env  map[string]string // set over the caller's environment
	// PathPrepend are directories put before the caller's PATH.
	PathPrepend []string
}

// DynamoFetchSteps fill dest (an empty temporary directory on the cache's
// filesystem, renamed to the entry once every step succeeded) with what
// DynamoInstallSteps needs. work is scratch space inside the container; for
// a source build home is the container user's home (where rustup installs)
// and haveCargo says whether a Rust toolchain is already on PATH. These are
// srtctl's commands, run once per entry instead of once per container.
func DynamoFetchSteps(d Dynamo, dest, work, home string, haveCargo bool) ([]DynamoStep, error) {
	kind, ref, err := dynamoSource(d)
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
		return []DynamoStep{{Argv: argv}}, nil
	}
	// A source build, as srtctl's get_install_commands does it.
	src := filepath.Join(work, "dynamo")
	var steps []DynamoStep
	steps = append(steps,
		DynamoStep{Argv: []string{"apt-get", "update", "-qq"}},
		DynamoStep{Argv: []string{"apt-get", "install", "-y", "-qq", "libclang-dev", "curl", "git", "protobuf-compiler"}},
	)
	var cargoPath []string
	if !haveCargo {
		if !filepath.IsAbs(home) {
			return nil, fmt.Errorf("dynamo fetch: home %q must be absolute", home)
		}
		rustup := filepath.Join(work, "rustup-init.sh")
		steps = append(steps,
			DynamoStep{Argv: []string{"curl", "--proto", "=https", "--tlsv1.2", "-sSf", "-o", rustup, "https://sh.rustup.rs"}},
			DynamoStep{Argv: []string{"sh", rustup, "-y", "--default-toolchain", "stable", "-q"}},
		)
		// rustup installs into ~/.cargo (srtctl sources ~/.cargo/env).
		cargoPath = []string{filepath.Join(home, ".cargo", "bin")}
	}
	// srtctl's RUSTFLAGS; target-cpu=native is why the key names the machine.
	build := map[string]string{"RUSTFLAGS": "-C target-cpu=native --cfg tokio_unstable"}
	steps = append(steps,
		DynamoStep{Argv: []string{"python3", "-m", "pip", "install", "--break-system-packages", "--force-reinstall", "--quiet", "maturin"}},
		DynamoStep{Argv: []string{"git", "clone", dynamoRepo, src}},
		DynamoStep{Argv: []string{"git", "-C", src, "checkout", ref}},
		DynamoStep{Argv: []string{"maturin", "build", "--release", "-o", dest}, Dir: filepath.Join(src, "lib", "bindings", "python"), Env: build, PathPrepend: cargoPath},
		DynamoStep{Argv: []string{"tar", "--exclude=target", "--exclude=.git", "-czf", filepath.Join(dest, dynamoSourceTarball), "-C", work, "dynamo"}},
	)
	return steps, nil
}

// dynamoSourceTarball holds a source build's Python package, installed
// editable next to its runtime wheel (srtctl's dynamo-src.tar.gz).
const dynamoSourceTarball = "dynamo-src.tar.gz"

// DynamoEntryFiles picks, from the file names in a cache entry, the ones
// DynamoInstallSteps installs: the runtime wheel and the ai-dynamo wheel of
// the exact version, or a source build's runtime wheel and source tarball.
// A missing or ambiguous file is an error (an incomplete entry is never used).
func DynamoEntryFiles(d Dynamo, names []string) ([]string, error) {
	kind, ref, err := dynamoSource(d)
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
	if kind == "hash" {
		want = [][2]string{{"ai_dynamo_runtime-", ".whl"}, {dynamoSourceTarball, ""}}
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

// DynamoInstallSteps install d from entry (files as DynamoEntryFiles
// returned them). Releases resolve their own dependencies from the indexes
// as srtctl's pip install does; the Dynamo wheels themselves come from the
// cache. A source build is unpacked into work and installed editable, as
// srtctl does.
func DynamoInstallSteps(d Dynamo, entry string, files []string, work string) ([]DynamoStep, error) {
	kind, _, err := dynamoSource(d)
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
	if kind != "hash" {
		argv := []string{"python3", "-m", "pip", "install", "--break-system-packages"}
		if kind == "wheel" {
			argv = append(argv, "--pre")
		}
		argv = append(argv, "--extra-index-url", nvidiaIndex, filepath.Join(entry, files[0]), filepath.Join(entry, files[1]))
		return []DynamoStep{{Argv: argv}}, nil
	}
	src := filepath.Join(work, "dynamo-src")
	return []DynamoStep{
		{Argv: []string{"python3", "-m", "pip", "install", "--break-system-packages", "--force-reinstall", filepath.Join(entry, files[0])}},
		{Argv: []string{"rm", "-rf", src}},
		{Argv: []string{"mkdir", "-p", src}},
		{Argv: []string{"tar", "-xzf", filepath.Join(entry, files[1]), "-C", src}},
		{Argv: []string{"python3", "-m", "pip", "install", "--break-system-packages", "-e", filepath.Join(src, "dynamo")}},
	}, nil
}

// prepareDynamo settles where the install step caches Dynamo and checks
// the source, once, before any process names it.
func (b *builder) prepareDynamo() error {
	d := &b.plan.Dynamo
	if !d.Install {
		return nil
	}
	if _, _, err := dynamoSource(*d); err != nil {
		field := "dynamo"
		switch {
		case d.Hash != "":
			field = "dynamo.hash"
		case d.Wheel != "":
			field = "dynamo.wheel"
		case d.Version != "":
			field = "dynamo.version"
		}
		return b.fail(field, "%v", err)
	}
	d.Cache = firstNonEmpty(b.p.Paths.WheelCache, filepath.Join(b.p.Paths.RunsDir, ".dynamo-wheels"))
	return nil
}

// checkSetupScript refuses a setup_script that would leave /configs.
func (b *builder) checkSetupScript() error {
	s := b.r.SetupScript
	if s == "" {
		return nil
	}
	if path.IsAbs(s) || path.Clean(s) != s || strings.HasPrefix(s, "..") || strings.ContainsAny(s, "\x00\n") {
		return b.fail("setup_script", "%q is not a file name under /configs", s)
	}
	return nil
}

// setupSteps run in a worker's or Dynamo frontend's container before its
// program, in srtctl's order: the recipe's setup script, then the Dynamo
// install (when this process runs Dynamo and the recipe asks for it).
func (b *builder) setupSteps(dynamo bool) [][]string {
	var steps [][]string
	if s := b.r.SetupScript; s != "" {
		// srtctl runs /configs/<name> (falling back to /configs/patches/<name>,
		// and only warning when neither exists); the profile mounts the
		// scripts directory at /configs.
		steps = append(steps, []string{"bash", path.Join("/configs", s)})
	}
	if dynamo && b.plan.Dynamo.Install {
		argv, err := dynamoInstallArgv(b.plan.Binary, b.plan.Dynamo)
		if err == nil { // prepareDynamo checked the source
			steps = append(steps, argv)
		}
	}
	return steps
}

// engineMounts are the mounts of a process in the engine image: the
// common ones plus the Dynamo wheel cache at its own path.
func (b *builder) engineMounts() []string {
	m := b.mounts()
	if b.plan.Dynamo.Install && b.plan.Dynamo.Cache != "" {
		m = append(m, b.plan.Dynamo.Cache+":"+b.plan.Dynamo.Cache)
	}
	return m
}
