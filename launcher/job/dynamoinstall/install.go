// Package dynamoinstall installs Dynamo into a running engine container
// from a wheel cache on the shared filesystem: the body of the plan's
// `slurmbench dynamo-install` setup step (planner/infra/dynamo.go names it in the plan; steps.go holds its commands).
//
// The cache entry of a source (release, exact wheel or source commit) for
// one Python ABI and machine is filled once, by whichever node gets there
// first, under an exclusive flock next to the cache; everyone else waits on
// that lock and then installs from the entry. Inside one container the
// install itself runs once: the tasks of a step that share the container
// (several MPI ranks per node) serialize on a lock in the Python prefix and
// skip when its marker names the same key.
package dynamoinstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// Defaults of Options.
const (
	DefaultTmp           = "/tmp"
	DefaultLockTimeout   = 2 * time.Hour // a source build takes tens of minutes
	DefaultProgressEvery = 30 * time.Second
	DefaultKillGrace     = 10 * time.Second
)

// Names inside the Python prefix (or Tmp when the prefix is read-only).
const (
	localLockName = ".slurmbench-dynamo.lock"
	markerName    = ".slurmbench-dynamo.installed"
	completeName  = ".complete"
)

// Options configure one install.
type Options struct {
	// Dynamo names the source (Version, Wheel or Hash, as the plan has
	// it) and Cache, the absolute cache directory every node mounts.
	Dynamo plan.Dynamo
	// Tmp is the container's scratch directory: a fetch's build tree, and
	// a source install's editable tree, which must outlive this command.
	Tmp string
	// Env is the environment of the Python probe and of every step
	// (default os.Environ()); programs are looked up on its PATH.
	Env []string
	// LockTimeout bounds each wait for a lock; ProgressEvery is how often
	// a waiter says so.
	LockTimeout   time.Duration
	ProgressEvery time.Duration
	// KillGrace is how long a step stopped by ctx has between SIGTERM and
	// SIGKILL.
	KillGrace time.Duration
	// Stdout and Stderr receive the steps' output; Log the banners and
	// progress lines (default Stderr).
	Stdout, Stderr, Log io.Writer
}

func (o Options) withDefaults() Options {
	if o.Tmp == "" {
		o.Tmp = DefaultTmp
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = DefaultProgressEvery
	}
	if o.KillGrace <= 0 {
		o.KillGrace = DefaultKillGrace
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Log == nil {
		o.Log = o.Stderr
	}
	return o
}

// Result says what Install did.
type Result struct {
	Key   string   // cache key (CacheKey)
	Entry string   // the cache entry installed from
	Files []string // the entry's files that were installed
	// Fetched: this call filled the cache entry. Installed: this call ran
	// the install (false when the container already had this key).
	Fetched, Installed bool
}

// Install makes sure the container has Dynamo as o.Dynamo names it,
// filling the cache entry first when no one has.
func Install(ctx context.Context, o Options) (Result, error) {
	o = o.withDefaults()
	d := o.Dynamo
	if !filepath.IsAbs(d.Cache) {
		return Result{}, fmt.Errorf("dynamo cache %q is not an absolute path", d.Cache)
	}
	if !filepath.IsAbs(o.Tmp) {
		return Result{}, fmt.Errorf("tmp directory %q is not an absolute path", o.Tmp)
	}
	py, err := probePython(ctx, o.Env)
	if err != nil {
		return Result{}, err
	}
	key, err := CacheKey(d, py.Tag, py.Machine)
	if err != nil {
		return Result{}, fmt.Errorf("naming the cache entry from python3 (%s): %w", py.Path, err)
	}
	res := Result{Key: key, Entry: filepath.Join(d.Cache, key)}
	o.logf("cache key %s (%s: %s on %s, prefix %s)", key, py.Path, py.Tag, py.Machine, py.Prefix)

	// The marker lives where the install lands, so it dies with it: a
	// fresh container never inherits "installed" from an earlier one, even
	// where /tmp is bound from the host.
	state := py.Prefix
	if err := touchLock(filepath.Join(state, localLockName)); err != nil {
		o.logf("python prefix %s is not writable (%v): the install marker goes to %s", state, err, o.Tmp)
		state = o.Tmp
	}
	if installedKey(state) == key {
		o.logf("already installed in this container, nothing to do")
		return res, nil
	}
	// Twice the timeout: the holder may itself wait out the cache lock
	// before fetching.
	unlock, err := o.lock(ctx, filepath.Join(state, localLockName), 2*o.LockTimeout, "another task in this container is installing Dynamo")
	switch {
	case errors.Is(err, errLockUnsupported):
		o.logf("warning: %v: installing without a lock", err)
		unlock = func() {}
	case err != nil:
		return res, err
	}
	defer unlock()
	if installedKey(state) == key {
		o.logf("installed by another task in this container meanwhile, nothing to do")
		return res, nil
	}

	files, fetched, err := o.ensureEntry(ctx, key)
	res.Files, res.Fetched = files, fetched
	if err != nil {
		return res, err
	}
	// A directory of its own, so a source install's editable tree is never
	// replaced under another container sharing this Tmp.
	work, err := os.MkdirTemp(o.Tmp, "slurmbench-dynamo-")
	if err != nil {
		return res, fmt.Errorf("creating the install directory: %w", err)
	}
	steps, err := InstallSteps(d, res.Entry, files, work)
	if err != nil {
		os.RemoveAll(work)
		return res, err
	}
	if err := o.runSteps(ctx, "install", steps); err != nil {
		os.RemoveAll(work)
		return res, err
	}
	os.Remove(work) // kept only when it holds an editable source tree
	res.Installed = true
	if err := writeMarker(state, key); err != nil {
		// Installed all the same; a later task would just install again.
		o.logf("warning: writing the install marker: %v", err)
	}
	return res, nil
}

// ensureEntry returns the files of the complete cache entry of key,
// filling it under the cache lock when it is not complete.
func (o Options) ensureEntry(ctx context.Context, key string) (files []string, fetched bool, err error) {
	d := o.Dynamo
	entry := filepath.Join(d.Cache, key)
	if files, err := completeEntry(d, entry); err == nil {
		o.logf("cache entry %s is complete", entry)
		return files, false, nil
	}
	locks := filepath.Join(d.Cache, ".locks")
	if err := os.MkdirAll(locks, 0o777); err != nil {
		return nil, false, fmt.Errorf("creating the cache lock directory: %w", err)
	}
	flat := flatKey(key)
	unlock, err := o.lock(ctx, filepath.Join(locks, flat+".lock"), o.LockTimeout, "another node is filling the cache entry")
	locked := err == nil
	switch {
	case errors.Is(err, errLockUnsupported):
		// The rename into place keeps the entry whole; the worst case is
		// the same fetch on several nodes at once.
		o.logf("warning: %v: filling the cache entry without a lock", err)
		unlock = func() {}
	case err != nil:
		return nil, false, err
	}
	defer unlock()
	if files, err := completeEntry(d, entry); err == nil {
		o.logf("cache entry %s was filled by another node meanwhile", entry)
		return files, false, nil
	}
	if locked {
		removeStaleTemps(d.Cache, flat, o.logf)
	}
	files, err = o.fetch(ctx, key, entry)
	return files, err == nil, err
}

// fetch runs the fetch steps into a temporary directory on the cache's
// filesystem and renames it to entry once it is verified and marked
// complete, so no one ever sees a partial entry.
func (o Options) fetch(ctx context.Context, key, entry string) ([]string, error) {
	d := o.Dynamo
	start := time.Now()
	tmp, err := os.MkdirTemp(d.Cache, tempPrefix(flatKey(key)))
	if err != nil {
		return nil, fmt.Errorf("creating a temporary cache entry: %w", err)
	}
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(tmp)
		}
	}()
	scratch, err := os.MkdirTemp(o.Tmp, "slurmbench-dynamo-build-")
	if err != nil {
		return nil, fmt.Errorf("creating the build directory: %w", err)
	}
	defer os.RemoveAll(scratch)
	_, cargoErr := lookPath("cargo", envValue(o.Env, "PATH"))
	steps, err := FetchSteps(d, tmp, scratch, envValue(o.Env, "HOME"), cargoErr == nil)
	if err != nil {
		return nil, err
	}
	o.logf("filling cache entry %s", entry)
	if err := o.runSteps(ctx, "fetch", steps); err != nil {
		return nil, err
	}
	names, err := dirNames(tmp)
	if err != nil {
		return nil, err
	}
	files, err := EntryFiles(d, names)
	if err != nil {
		return nil, fmt.Errorf("the fetch steps succeeded but left an unusable entry (%s): %w", strings.Join(names, ", "), err)
	}
	host, _ := os.Hostname()
	note := fmt.Sprintf("key=%s\nfiles=%s\nhost=%s\ntime=%s\n", key, strings.Join(files, ","), host, time.Now().UTC().Format(time.RFC3339))
	if err := atomicfile.WriteFile(filepath.Join(tmp, completeName), []byte(note), atomicfile.Options{}); err != nil {
		return nil, err
	}
	// MkdirTemp made it private; every user of the cache reads it.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return nil, fmt.Errorf("creating the cache entry's parent: %w", err)
	}
	if err := os.Rename(tmp, entry); err != nil {
		// Something is in the way: a complete entry from a fetch that ran
		// without a lock (use it), or a directory no fetch of ours left
		// (replace it).
		if files, cerr := completeEntry(d, entry); cerr == nil {
			return files, nil
		}
		aside := fmt.Sprintf("%s.stale-%d-%d", entry, os.Getpid(), time.Now().UnixNano())
		if err2 := os.Rename(entry, aside); err2 != nil {
			return nil, fmt.Errorf("placing the cache entry %s: %w (and moving the old one aside: %w)", entry, err, err2)
		}
		if err := os.Rename(tmp, entry); err != nil {
			return nil, fmt.Errorf("placing the cache entry %s: %w", entry, err)
		}
		os.RemoveAll(aside)
	}
	placed = true
	o.logf("cache entry %s filled in %s", entry, time.Since(start).Round(time.Second))
	return files, nil
}

// completeEntry returns the install files of entry when it is marked
// complete and holds them.
func completeEntry(d plan.Dynamo, entry string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(entry, completeName)); err != nil {
		return nil, err
	}
	names, err := dirNames(entry)
	if err != nil {
		return nil, err
	}
	return EntryFiles(d, names)
}

// flatKey turns a cache key into one file name (for locks and temporary
// entries).
func flatKey(key string) string { return strings.ReplaceAll(key, "/", "_") }

func tempPrefix(flat string) string { return ".tmp-" + flat + "-" }

// staleTempAge is how old a temporary entry must be before a fetch
// removes it. Under a working flock every temporary entry seen by the
// lock's holder is dead; the age guards filesystems whose flock is only
// node-local (Lustre -o localflock), where another node's fetch may be
// running. A source build leaves its directory untouched for its whole
// build, so the age is well beyond any build.
const staleTempAge = 6 * time.Hour

// removeStaleTemps removes temporary entries of flat that fetches killed
// before their cleanup left behind. Only a holder of flat's cache lock may
// call it: temporary entries are only made under that lock.
func removeStaleTemps(cache, flat string, logf func(string, ...any)) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), tempPrefix(flat)) {
			continue
		}
		if fi, err := e.Info(); err != nil || time.Since(fi.ModTime()) < staleTempAge {
			continue
		}
		logf("removing %s, left by an interrupted fetch", filepath.Join(cache, e.Name()))
		os.RemoveAll(filepath.Join(cache, e.Name()))
	}
}

func dirNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names, nil
}

// installedKey is the key this container's marker names ("" when none).
func installedKey(state string) string {
	b, err := os.ReadFile(filepath.Join(state, markerName))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// writeMarker records key as installed: one marker per prefix, since an
// install of another key replaces the packages.
func writeMarker(state, key string) error {
	return atomicfile.WriteFile(filepath.Join(state, markerName), []byte(key+"\n"), atomicfile.Options{Overwrite: true, Perm: 0o600})
}

func (o Options) logf(format string, args ...any) {
	fmt.Fprintf(o.Log, "dynamo-install: "+format+"\n", args...)
}
