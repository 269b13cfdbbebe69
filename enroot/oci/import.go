package oci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/flock"
	"github.com/slurmbench/slurmbench/internal/tailbuf"
)

// Default programs, looked up in PATH where the import runs.
const (
	DefaultSkopeo = "skopeo"
	DefaultUmoci  = "umoci"
)

// outputTailLines is how much of a tool's output an error quotes.
const outputTailLines = 20

// copyAttempts: a copy that failed for a reason that may pass (a dropped
// connection, a registry error) runs once more; skopeo's own
// --retry-times already retried each request inside it.
const copyAttempts = 2

// skopeoRetries is skopeo copy --retry-times: each failed registry request
// is asked again this often before skopeo gives up.
const skopeoRetries = 2

// Options configure an Importer. Only Dir is required.
type Options struct {
	// Dir is the shared image directory (paths.squash_dir): bundles
	// <name>.oci, their .json sidecars and .lock files.
	Dir string
	// Skopeo and Umoci are the programs (default from PATH).
	Skopeo, Umoci string
	// Insecure lists registries (host[:port]) reached without TLS
	// verification, or over plain HTTP (skopeo --src-tls-verify=false).
	Insecure []string
	// Arch, when set, picks that architecture from a multi-architecture
	// image (skopeo --override-arch, Go's names: amd64, arm64).
	Arch string
	// Runner runs skopeo and umoci (default enroot.LocalRunner{}): where
	// it runs, Dir must be the same path.
	Runner enroot.Runner
	// LockTimeout bounds the wait for another import of the same image
	// (default enroot.DefaultLockTimeout).
	LockTimeout time.Duration
	// Version is recorded in sidecars as slurmbench_version.
	Version string
	// Logf receives progress messages (default: discarded).
	Logf func(format string, args ...any)
	// Output receives the tools' own output as they run.
	Output io.Writer
}

// Importer imports images as bundles into a shared directory. It is safe
// for concurrent use, also by several processes on several nodes.
type Importer struct{ opts Options }

// NewImporter checks opts and fills in defaults.
func NewImporter(opts Options) (*Importer, error) {
	if err := enroot.CheckDir("image directory (paths.squash_dir)", opts.Dir); err != nil {
		return nil, err
	}
	opts.Skopeo = cmpOr(opts.Skopeo, DefaultSkopeo)
	opts.Umoci = cmpOr(opts.Umoci, DefaultUmoci)
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = enroot.DefaultLockTimeout
	}
	if opts.Runner == nil {
		opts.Runner = enroot.LocalRunner{}
	}
	if opts.Logf == nil {
		opts.Logf = func(string, ...any) {}
	}
	return &Importer{opts: opts}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// BundlePath is where ref's bundle lives.
func (im *Importer) BundlePath(ref enroot.Ref) string {
	return filepath.Join(im.opts.Dir, BundleName(ref))
}

// workPattern names the private directories of imports of ref, so that
// abandoned ones can be found (AbandonedImports).
func workPattern(ref enroot.Ref) string { return "." + BundleName(ref) + ".import-*" }

// AbandonedImports lists private import directories in dir (from killed or
// still-running imports).
func AbandonedImports(dir string) ([]string, error) {
	return filepath.Glob(filepath.Join(dir, ".*"+Suffix+".import-*"))
}

// Import makes sure a whole bundle of ref exists and returns its path.
//
// A bundle whose sidecar matches is used as is; a whole one without a
// sidecar is adopted. Otherwise, under a per-image lock, the reference's
// tag is resolved to a digest (skopeo inspect) unless it pins one, skopeo
// copies that digest into a private OCI layout inside Dir, umoci unpacks it
// rootless into a private bundle, the bundle is checked and renamed into
// place, and the sidecar records the digest. A failed or cancelled import
// leaves nothing behind.
func (im *Importer) Import(ctx context.Context, ref enroot.Ref) (res enroot.Result, err error) {
	start := time.Now()
	res = enroot.Result{Ref: ref, Path: im.BundlePath(ref)}
	defer func() {
		res.Elapsed = time.Since(start)
		if err != nil {
			err = fmt.Errorf("importing image %q: %w", ref, err)
		}
	}()
	if ref.IsLocal() {
		return res, fmt.Errorf("%s is a squash file: the oci runtime starts OCI bundles (give an image reference)", ref.Path)
	}
	if ref.Repository == "" {
		return res, errors.New("empty reference")
	}
	if im.reuse(ref, &res) {
		return res, nil
	}
	lockPath := res.Path + ".lock"
	waitStart := time.Now()
	told := false
	lock, err := flock.Acquire(ctx, lockPath, flock.Options{Timeout: im.opts.LockTimeout, Waiting: func(time.Duration) {
		if !told {
			told = true
			im.opts.Logf("waiting up to %s for another import of %s (lock %s)", im.opts.LockTimeout, ref, lockPath)
		}
	}})
	res.LockWait = time.Since(waitStart)
	switch {
	case errors.Is(err, flock.ErrUnsupported):
		im.opts.Logf("warning: importing %s without a lock: %v; a concurrent import elsewhere would repeat the work (readers are safe either way)", ref, err)
	case errors.Is(err, flock.ErrTimeout):
		return res, fmt.Errorf("%w %s after %s (another import of this image is running, or stuck)", enroot.ErrLockTimeout, lockPath, im.opts.LockTimeout)
	case err != nil:
		return res, err
	default:
		defer func() {
			if rerr := lock.Release(); rerr != nil {
				im.opts.Logf("warning: releasing the import lock of %s: %v", ref, rerr)
			}
		}()
	}
	if im.reuse(ref, &res) {
		return res, nil
	}
	return res, im.importLocked(ctx, ref, &res)
}

// reuse reports whether the existing bundle can serve ref, filling res.
func (im *Importer) reuse(ref enroot.Ref, res *enroot.Result) bool {
	st := Inspect(res.Path)
	switch st.State {
	case enroot.StateOK:
		if st.Manifest.Name != "" && st.Manifest.Name != ref.Name() {
			im.opts.Logf("%s holds %s, not %s (the names collide); re-importing", res.Path, st.Manifest.Name, ref.Name())
			return false
		}
		res.Action, res.Size = enroot.ActionCached, st.Size
		return true
	case enroot.StateUnrecorded, enroot.StateStale:
		im.opts.Logf("%s: %s; adopting it", res.Path, st.Problem)
		if err := enroot.WriteManifest(res.Path, im.manifest(ref, enroot.OriginAdopted, 0, st.ModTime)); err != nil {
			im.opts.Logf("warning: cannot write sidecar for %s (the next check validates again): %v", res.Path, err)
		}
		res.Action = enroot.ActionValidated
		return true
	case enroot.StateInvalid:
		im.opts.Logf("%s is unusable (%s); re-importing", res.Path, st.Problem)
	}
	return false
}

func (im *Importer) manifest(ref enroot.Ref, origin string, size int64, mtime time.Time) *enroot.Manifest {
	host, _ := os.Hostname()
	return &enroot.Manifest{Ref: ref.String(), Name: ref.Name(), EnrootURI: ref.EnrootURI(), Digest: ref.Digest,
		Size: size, MTime: mtime, Origin: origin, Arch: im.opts.Arch, Host: host, CreatedAt: time.Now().UTC(), Version: im.opts.Version}
}

// source is skopeo's docker:// reference of ref, by digest when it has one
// (a tag next to a digest is dropped: the digest decides).
func source(ref enroot.Ref) string {
	name := ref.Repository
	if ref.Registry != "" {
		name = ref.Registry + "/" + name
	}
	switch {
	case ref.Digest != "":
		name += "@" + ref.Digest
	case ref.Tag != "":
		name += ":" + ref.Tag
	}
	return "docker://" + name
}

// transportFlags are skopeo's flags for reaching ref's registry.
func (im *Importer) transportFlags(ref enroot.Ref, tlsFlag string) []string {
	var f []string
	if ref.Registry != "" && slices.Contains(im.opts.Insecure, ref.Registry) {
		f = append(f, tlsFlag+"=false")
	}
	if im.opts.Arch != "" {
		f = append(f, "--override-arch", im.opts.Arch)
	}
	return f
}

// InspectArgs is skopeo's argv (after the program) asking the registry
// for the digest ref's tag names now.
func (im *Importer) InspectArgs(ref enroot.Ref) []string {
	args := append([]string{"inspect"}, im.transportFlags(ref, "--tls-verify")...)
	return append(args, "--format", "{{.Digest}}", source(ref))
}

// CopyArgs is skopeo's argv copying ref (by digest) into the OCI layout
// dir under the tag "image".
func (im *Importer) CopyArgs(ref enroot.Ref, layout string) []string {
	args := append([]string{"copy"}, im.transportFlags(ref, "--src-tls-verify")...)
	return append(args, "--retry-times", fmt.Sprint(skopeoRetries), source(ref), "oci:"+layout+":image")
}

// UnpackArgs is umoci's argv unpacking the layout's "image" into bundle,
// rootless (the files belong to the user who imports).
func UnpackArgs(layout, bundle string) []string {
	return []string{"unpack", "--rootless", "--image", layout + ":image", bundle}
}

var digestInOutput = regexp.MustCompile(`sha256:[0-9a-f]{64}`)

// ResolveDigest asks the registry, through skopeo inspect run where imports
// run, which manifest digest ref's tag points at now.
func (im *Importer) ResolveDigest(ctx context.Context, ref enroot.Ref) (string, error) {
	if ref.Digest != "" {
		return ref.Digest, nil
	}
	out := tailbuf.New(16 << 10)
	if err := im.opts.Runner.Run(ctx, enroot.Command{Path: im.opts.Skopeo, Args: im.InspectArgs(ref), Stdout: out, Stderr: out}); err != nil {
		return "", fmt.Errorf("skopeo inspect %s failed: %w%s", source(ref), err, quoteTail(out))
	}
	found := digestInOutput.FindAllString(out.Last(outputTailLines), -1)
	if len(found) == 0 {
		return "", fmt.Errorf("skopeo inspect %s printed no sha256 digest%s", source(ref), quoteTail(out))
	}
	return found[len(found)-1], nil
}

// permanent is skopeo's output for a failure another attempt repeats: the
// registry does not have the image or refuses us.
var permanent = regexp.MustCompile(`(?i)manifest unknown|not found|unauthorized|denied|no such host|invalid reference`)

func (im *Importer) importLocked(ctx context.Context, ref enroot.Ref, res *enroot.Result) error {
	im.removeAbandoned(ref)
	from := ref
	if from.Digest == "" {
		d, err := im.ResolveDigest(ctx, ref)
		if err != nil {
			return err
		}
		from.Digest = d
	}
	work, err := os.MkdirTemp(im.opts.Dir, workPattern(ref))
	if err != nil {
		return fmt.Errorf("creating import directory: %w", err)
	}
	defer os.RemoveAll(work)
	layout, bundle := filepath.Join(work, "layout"), filepath.Join(work, "bundle")
	im.opts.Logf("importing %s as %s", source(from), res.Path)
	for attempt := 1; ; attempt++ {
		_ = os.RemoveAll(layout)
		again, err := im.run(ctx, im.opts.Skopeo, im.CopyArgs(from, layout), work, source(from))
		if err == nil {
			break
		}
		if !again || attempt == copyAttempts || ctx.Err() != nil {
			return err
		}
		im.opts.Logf("copying %s failed (attempt %d of %d), trying again: %v", source(from), attempt, copyAttempts, err)
	}
	size := dirSize(layout)
	if _, err := im.run(ctx, im.opts.Umoci, UnpackArgs(layout, bundle), work, source(from)); err != nil {
		return err
	}
	if err := ValidateBundle(bundle); err != nil {
		return fmt.Errorf("umoci unpack of %s made no usable bundle: %w", source(from), err)
	}
	// The layout is the download; the bundle is what steps start, and every
	// user sharing the directory may start it (umoci makes it 0700).
	_ = os.RemoveAll(layout)
	if err := os.Chmod(bundle, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(res.Path); err == nil {
		old := filepath.Join(work, "replaced")
		if err := os.Rename(res.Path, old); err != nil {
			return fmt.Errorf("moving the unusable bundle aside: %w", err)
		}
	}
	if err := os.Rename(bundle, res.Path); err != nil {
		return fmt.Errorf("moving the bundle into place: %w", err)
	}
	if err := atomicfile.SyncDir(im.opts.Dir); err != nil {
		im.opts.Logf("warning: syncing %s: %v", im.opts.Dir, err)
	}
	cfg, err := os.Stat(filepath.Join(res.Path, "config.json"))
	if err != nil {
		return err
	}
	m := im.manifest(ref, enroot.OriginImported, size, cfg.ModTime())
	m.Digest = from.Digest
	if err := enroot.WriteManifest(res.Path, m); err != nil {
		im.opts.Logf("warning: cannot write sidecar for %s (the next check validates again): %v", res.Path, err)
	}
	res.Action, res.Size = enroot.ActionImported, size
	return nil
}

// run runs one tool of the import, naming a full image directory when
// that is why it failed. again says whether another attempt may succeed.
func (im *Importer) run(ctx context.Context, prog string, args []string, work, what string) (again bool, err error) {
	tail := tailbuf.New(16 << 10)
	var w io.Writer = tail
	if im.opts.Output != nil {
		w = io.MultiWriter(tail, im.opts.Output)
	}
	watch := enroot.WatchSpace(im.opts.Dir)
	runErr := im.opts.Runner.Run(ctx, enroot.Command{Path: prog, Args: args, Writes: []string{work}, Stdout: w, Stderr: w})
	out := tail.Last(outputTailLines)
	if serr := watch.Stop(out, what, runErr); serr != nil && (runErr != nil || ctx.Err() != nil) {
		return false, fmt.Errorf("%w%s", serr, quoteTail(tail))
	}
	if runErr != nil {
		return !permanent.MatchString(out), fmt.Errorf("%s %s %s failed: %w%s", filepath.Base(prog), args[0], what, runErr, quoteTail(tail))
	}
	return false, nil
}

func quoteTail(t *tailbuf.Buffer) string {
	if s := t.Last(outputTailLines); s != "" {
		return "; last output:\n" + s
	}
	return ""
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// staleWorkAge is how old an abandoned import directory must be before an
// import of the same image removes it: a younger one may belong to an
// import on another node whose lock this node cannot see.
const staleWorkAge = 12 * time.Hour

// removeAbandoned deletes old private directories of killed imports of ref
// (only while holding ref's lock).
func (im *Importer) removeAbandoned(ref enroot.Ref) {
	matches, _ := filepath.Glob(filepath.Join(im.opts.Dir, workPattern(ref)))
	for _, m := range matches {
		if info, err := os.Lstat(m); err == nil && info.IsDir() && time.Since(info.ModTime()) > staleWorkAge {
			im.opts.Logf("removing abandoned import directory %s", m)
			_ = os.RemoveAll(m)
		}
	}
}

// ArchName is Go's name of an architecture as profile.ImportArch (enroot's
// --arch) spells it: aarch64 → arm64, x86_64 → amd64.
func ArchName(enrootArch string) string {
	switch strings.ToLower(enrootArch) {
	case "aarch64", "arm64":
		return "arm64"
	case "x86_64", "amd64":
		return "amd64"
	}
	return enrootArch
}
