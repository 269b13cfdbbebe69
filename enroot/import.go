package enroot

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/tailbuf"
)

// Defaults for Options.
const (
	// DefaultLockTimeout matches the longest wait of the InferenceX runners'
	// flock -w (600 to 3600 s) that is still shorter than a stuck import.
	DefaultLockTimeout = 30 * time.Minute
	// DefaultEnroot is looked up in PATH.
	DefaultEnroot = "enroot"
	// staleWorkDirAge is how old an abandoned import directory must be before
	// an import of the same image removes it. Younger ones may belong to an
	// import on another node whose lock this node cannot see.
	staleWorkDirAge = 12 * time.Hour
	// outputTailLines is how much of enroot's output an error quotes.
	outputTailLines = 20
)

// Options configure an Importer. Only SquashDir is required.
type Options struct {
	// SquashDir is the shared directory holding <name>.sqsh files, their
	// .json sidecars and .lock files. It must exist and be absolute.
	SquashDir string
	// ScratchDir holds enroot's private ENROOT_CACHE/DATA/TEMP/RUNTIME_PATH
	// during an import (layers are extracted there). Default: a temporary
	// directory next to the target. Set it to node-local storage when the
	// squash directory is NFS with root squashing, where enroot cannot create
	// whiteout files. The imported file itself is always written inside
	// SquashDir so that the final rename is atomic.
	ScratchDir string
	// LockTimeout bounds the wait for another import of the same image
	// (default DefaultLockTimeout).
	LockTimeout time.Duration
	// LockFile, when set, names the lock file of an import of ref (nil:
	// <squash>.lock beside it). A runners.yaml squash policy with
	// lock-file: locks-dir keeps its locks in <dir>/.locks/ instead
	// (lock_path, infx/launch/backends/slurm/squash.py@bede049f).
	LockFile func(ref Ref) string
	// Enroot is the enroot program (default DefaultEnroot, via PATH).
	Enroot string
	// Arch, when set, is passed as enroot import --arch (e.g. aarch64).
	Arch string
	// Runner runs enroot (default LocalRunner{}).
	Runner Runner
	// Checksum adds the squash file's SHA-256 to the sidecar. It reads the
	// whole file once after an import; nothing reads it back on later checks.
	Checksum bool
	// Version is recorded in sidecars as slurmbench_version.
	Version string
	// ResolveDigest makes an import of a reference without a digest ask the
	// registry for the tag's digest first (ResolveDigest) and import by that
	// digest, so the squash is exactly the image its sidecar names. A
	// registry failure that may pass is asked about again (digest.go); when
	// enroot still cannot say (enroot 3.x has no `digest`), the import goes
	// ahead by tag and the sidecar's digest stays empty, with a warning.
	ResolveDigest bool
	// Logf receives progress messages (default: discarded).
	Logf func(format string, args ...any)
	// Output receives enroot's own output as it runs (default: discarded;
	// the tail is quoted in errors either way).
	Output io.Writer
}

// Importer imports images into a shared squash directory. It is safe for
// concurrent use, also by several processes on several nodes.
type Importer struct {
	opts Options
	// digestBackoff is the first wait between digest attempts (tests
	// shorten it).
	digestBackoff time.Duration
}

// CheckDir checks that dir, the image store called what in errors, is
// given, absolute and an existing directory: what both importers (squash
// files and OCI bundles) need before they lock anything in it.
func CheckDir(what, dir string) error {
	if dir == "" {
		return fmt.Errorf("no %s given", what)
	}
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s %q is not absolute", what, dir)
	}
	if info, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	} else if !info.IsDir() {
		return fmt.Errorf("%s %s is not a directory", what, dir)
	}
	return nil
}

// NewImporter checks opts and fills in defaults.
func NewImporter(opts Options) (*Importer, error) {
	if err := CheckDir("squash directory", opts.SquashDir); err != nil {
		return nil, err
	}
	if opts.ScratchDir != "" && !filepath.IsAbs(opts.ScratchDir) {
		return nil, fmt.Errorf("scratch directory %q is not absolute", opts.ScratchDir)
	}
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	if opts.Enroot == "" {
		opts.Enroot = DefaultEnroot
	}
	if opts.Runner == nil {
		opts.Runner = LocalRunner{}
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Importer{opts: opts, digestBackoff: defaultDigestBackoff}, nil
}

// Action says what Import had to do.
type Action string

// Actions.
const (
	// ActionCached: the sidecar matched; only metadata was read.
	ActionCached Action = "cached"
	// ActionValidated: the squash existed without a matching sidecar, passed
	// ValidateSquash and was adopted (sidecar written when possible).
	ActionValidated Action = "validated"
	// ActionImported: enroot import ran.
	ActionImported Action = "imported"
	// ActionLocal: the reference is a local .sqsh file; it was validated.
	ActionLocal Action = "local"
)

// Result describes a finished Import.
type Result struct {
	Ref      Ref
	Path     string // the squash file to start
	Action   Action
	Size     int64
	LockWait time.Duration // time spent waiting for another importer
	Elapsed  time.Duration
}

// SquashPath returns where the squash for ref lives: ref's own path for a
// local image, otherwise SquashDir/ref.SquashName().
func (im *Importer) SquashPath(ref Ref) string {
	if ref.IsLocal() {
		return ref.Path
	}
	return filepath.Join(im.opts.SquashDir, ref.SquashName())
}

// LockPath returns the lock file guarding the import of ref: Options.LockFile's,
// else beside the squash.
func (im *Importer) LockPath(ref Ref) string {
	if im.opts.LockFile != nil {
		if p := im.opts.LockFile(ref); p != "" {
			return p
		}
	}
	return im.SquashPath(ref) + ".lock"
}

// Import makes sure a valid squash of ref exists and returns its path.
//
// A squash whose sidecar matches is used as is. One without a matching
// sidecar is validated and adopted. Otherwise, under a per-image lock,
// enroot imports into a private directory inside SquashDir with private
// ENROOT_CACHE_PATH, ENROOT_DATA_PATH, ENROOT_TEMP_PATH and
// ENROOT_RUNTIME_PATH; the result is validated, made world-readable, fsynced
// and renamed over the target, and then the sidecar is written. A failed or
// cancelled import leaves nothing behind.
func (im *Importer) Import(ctx context.Context, ref Ref) (res Result, err error) {
	start := time.Now()
	res = Result{Ref: ref, Path: im.SquashPath(ref)}
	defer func() {
		res.Elapsed = time.Since(start)
		if err != nil {
			err = fmt.Errorf("importing image %q: %w", ref, err)
		}
	}()
	if ref.IsLocal() {
		res.Action = ActionLocal
		res.Size, err = ValidateSquash(ref.Path)
		return res, err
	}
	if ref.Repository == "" {
		return res, errors.New("empty reference")
	}
	if im.reuse(ref, &res) {
		return res, nil
	}

	lockPath := im.LockPath(ref)
	if filepath.Dir(lockPath) != filepath.Dir(res.Path) {
		// A locks directory of its own (lock-file: locks-dir) may not be
		// there yet, as InferenceX's import creates it when missing.
		if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
			return res, fmt.Errorf("creating the lock directory: %w", err)
		}
	}
	waitStart := time.Now()
	lock, err := acquireLock(ctx, lockPath, im.opts.LockTimeout, func() {
		im.opts.Logf("waiting up to %s for another import of %s (lock %s)", im.opts.LockTimeout, ref, lockPath)
	})
	res.LockWait = time.Since(waitStart)
	switch {
	case errors.Is(err, errLockUnsupported):
		im.opts.Logf("warning: importing %s without a lock: %v; a concurrent import elsewhere would repeat the work (readers are safe either way)", ref, err)
	case err != nil:
		return res, err
	default:
		defer func() {
			if rerr := lock.Release(); rerr != nil {
				im.opts.Logf("warning: releasing the import lock of %s: %v", ref, rerr)
			}
		}()
		im.removeAbandoned(ref)
	}
	// Someone else may have finished while we waited.
	if im.reuse(ref, &res) {
		return res, nil
	}
	return res, im.importLocked(ctx, ref, &res)
}

// reuse reports whether the existing squash can serve ref, filling res.
func (im *Importer) reuse(ref Ref, res *Result) bool {
	st := Inspect(res.Path)
	switch st.State {
	case StateOK:
		if st.Manifest.Name != "" && st.Manifest.Name != ref.Name() {
			im.opts.Logf("%s holds %s, not %s (the squash names collide); re-importing", res.Path, st.Manifest.Name, ref.Name())
			return false
		}
		res.Action, res.Size = ActionCached, st.Size
		return true
	case StateUnrecorded, StateStale:
		im.opts.Logf("%s: %s; adopting it", res.Path, st.Problem)
		m := im.manifest(ref, OriginAdopted, st.Size, st.ModTime)
		if err := writeManifest(res.Path, m); err != nil {
			im.opts.Logf("warning: cannot write sidecar for %s (the next check validates again): %v", res.Path, err)
		}
		res.Action, res.Size = ActionValidated, st.Size
		return true
	case StateInvalid:
		im.opts.Logf("%s is unusable (%s); re-importing", res.Path, st.Problem)
	}
	return false
}

func (im *Importer) manifest(ref Ref, origin string, size int64, mtime time.Time) *Manifest {
	host, _ := os.Hostname()
	return &Manifest{
		Ref:       ref.String(),
		Name:      ref.Name(),
		EnrootURI: ref.EnrootURI(),
		Digest:    ref.Digest,
		Size:      size,
		MTime:     mtime,
		Origin:    origin,
		Arch:      im.opts.Arch,
		Host:      host,
		CreatedAt: time.Now().UTC(),
		Version:   im.opts.Version,
	}
}

// workDirPattern names the private directories of imports of ref, so that
// abandoned ones can be found again.
func workDirPattern(ref Ref) string { return "." + ref.SquashName() + ".import-*" }

func (im *Importer) importLocked(ctx context.Context, ref Ref, res *Result) (err error) {
	outDir, err := os.MkdirTemp(im.opts.SquashDir, workDirPattern(ref))
	if err != nil {
		return fmt.Errorf("creating import directory: %w", err)
	}
	defer os.RemoveAll(outDir)
	scratch := outDir
	if im.opts.ScratchDir != "" {
		if scratch, err = os.MkdirTemp(im.opts.ScratchDir, workDirPattern(ref)); err != nil {
			return fmt.Errorf("creating scratch directory: %w", err)
		}
		defer os.RemoveAll(scratch)
	}
	var env []string
	for _, v := range []string{"ENROOT_CACHE_PATH", "ENROOT_DATA_PATH", "ENROOT_TEMP_PATH", "ENROOT_RUNTIME_PATH"} {
		dir := filepath.Join(scratch, v)
		if err := os.Mkdir(dir, 0o700); err != nil {
			return err
		}
		env = append(env, v+"="+dir)
	}
	out := filepath.Join(outDir, ref.SquashName())
	args := []string{"import"}
	if im.opts.Arch != "" {
		args = append(args, "--arch", im.opts.Arch)
	}
	args = append(args, "-o", out, ref.EnrootURI())

	from := ref
	if im.opts.ResolveDigest && ref.Digest == "" {
		digest, derr := im.resolveDigestRetrying(ctx, ref)
		switch {
		case ctx.Err() != nil:
			return derr
		case derr != nil:
			im.opts.Logf("warning: importing %s by tag, without its digest: %v", ref, derr)
		default:
			from.Digest = digest
			args[len(args)-1] = from.EnrootURI()
		}
	}
	im.opts.Logf("importing %s as %s", from.EnrootURI(), res.Path)
	// A failed import runs again at once (no backoff).
	err = im.retrying(ctx, "importing "+from.EnrootURI(), importAttempts, 0, func() (bool, error) {
		// enroot refuses an output file that exists: a failed attempt's
		// goes; the cached layers in the scratch directories stay.
		if err := os.Remove(out); err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("removing the failed import's file: %w", err)
		}
		return im.runImport(ctx, args, env, out, from)
	})
	if err != nil {
		return err
	}
	f, err := os.Open(out)
	if err != nil {
		return err
	}
	defer f.Close()
	var sum string
	if im.opts.Checksum {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return fmt.Errorf("hashing %s: %w", out, err)
		}
		sum = hex.EncodeToString(h.Sum(nil))
	}
	// Readable by everyone sharing the cache, like the runners' chmod a+r.
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", out, err)
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := os.Rename(out, res.Path); err != nil {
		return fmt.Errorf("moving the squash into place: %w", err)
	}
	if err := atomicfile.SyncDir(im.opts.SquashDir); err != nil {
		im.opts.Logf("warning: syncing %s: %v", im.opts.SquashDir, err)
	}
	m := im.manifest(ref, OriginImported, info.Size(), info.ModTime())
	m.Digest = from.Digest
	m.SHA256 = sum
	if err := writeManifest(res.Path, m); err != nil {
		im.opts.Logf("warning: cannot write sidecar for %s (the next check validates again): %v", res.Path, err)
	}
	res.Action, res.Size = ActionImported, info.Size()
	return nil
}

// importAttempts: an import that left no valid squash file, or that a
// registry failure that may pass stopped, runs once more. InferenceX's
// runners do the same for the first case (runners/launch_b200-nv.sh
// re-imports once when unsquashfs cannot list the file).
const importAttempts = 2

// runImport runs enroot import once into out and checks the file it made.
// again says whether another attempt may succeed: not after a full disk or
// an interrupt, nor after a failure the registry will repeat.
func (im *Importer) runImport(ctx context.Context, args, env []string, out string, from Ref) (again bool, err error) {
	tail := tailbuf.New(16 << 10)
	var w io.Writer = tail
	if im.opts.Output != nil {
		w = io.MultiWriter(tail, im.opts.Output)
	}
	// Free space before, to say how much a full disk lacked.
	dirs := []string{im.opts.SquashDir}
	if im.opts.ScratchDir != "" {
		dirs = append(dirs, im.opts.ScratchDir)
	}
	free0 := map[string]int64{}
	for _, d := range dirs {
		free0[d] = freeBytes(d)
	}
	// enroot deletes what it wrote when it fails, and its "No space left"
	// may not reach an output file on the same full disk: the lowest free
	// space seen while it ran tells instead.
	low := watchSpace(dirs)
	runErr := im.opts.Runner.Run(ctx, Command{Path: im.opts.Enroot, Args: args, Env: env, Stdout: w, Stderr: w})
	minFree := low.stop()
	if runErr != nil {
		if serr := spaceError(dirs, free0, minFree, tail.Last(outputTailLines), from.EnrootURI(), runErr); serr != nil && ctx.Err() == nil {
			return false, fmt.Errorf("%w%s", serr, quoteTail(tail))
		}
		return transientRegistry.MatchString(tail.Last(outputTailLines)),
			fmt.Errorf("enroot import %s failed: %w%s", from.EnrootURI(), runErr, quoteTail(tail))
	}
	if _, err := ValidateSquash(out); err != nil {
		if serr := spaceError(dirs, free0, minFree, tail.Last(outputTailLines), from.EnrootURI(), err); serr != nil {
			return false, fmt.Errorf("%w%s", serr, quoteTail(tail))
		}
		return true, fmt.Errorf("enroot import %s produced no valid squash file: %w%s", from.EnrootURI(), err, quoteTail(tail))
	}
	return false, nil
}

func quoteTail(t *tailbuf.Buffer) string {
	if s := t.Last(outputTailLines); s != "" {
		return "; last output:\n" + s
	}
	return ""
}

// removeAbandoned deletes old private directories left by killed imports
// of ref. It runs only while holding ref's lock.
func (im *Importer) removeAbandoned(ref Ref) {
	for _, dir := range []string{im.opts.SquashDir, im.opts.ScratchDir} {
		if dir == "" {
			continue
		}
		matches, _ := filepath.Glob(filepath.Join(dir, workDirPattern(ref)))
		for _, m := range matches {
			if info, err := os.Lstat(m); err == nil && info.IsDir() && time.Since(info.ModTime()) > staleWorkDirAge {
				im.opts.Logf("removing abandoned import directory %s", m)
				os.RemoveAll(m)
			}
		}
	}
}

// AbandonedImports lists private import directories in dir (from killed or
// still-running imports), for operators.
func AbandonedImports(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, ".*.sqsh.import-*"))
}
