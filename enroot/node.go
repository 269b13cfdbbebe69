package enroot

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// NodeImport is one node's import of an image into a squash cache on its
// own disk, for clusters whose cache is node-local or whose runners.yaml
// squash policy says import: all-nodes (InferenceX's SquashCache policy,
// infx/clusters/slurm.py@03eaa88a; its launcher stages such an image from
// inside the job's allocation, runners.SquashPolicy.NeedsJob). The job
// runs it once on every node before anything starts there
// (`slurmbench import-node`); each node takes its own lock (the lock file
// lives in the node-local directory), reuses a squash its sidecar or a
// validation vouches for, and otherwise imports, validates and renames
// atomically, as Importer.Import does on shared storage.
type NodeImport struct {
	// SquashDir is the node-local cache directory; it is created when
	// missing (a fresh node has none yet).
	SquashDir string
	// Squash is the file the plan's containers start from; the import must
	// land exactly there (SquashDir/<the reference's squash name>).
	Squash      string
	Enroot      string
	LockTimeout time.Duration
	// LockFile is the lock the node's import takes ("" : <Squash>.lock),
	// for a squash policy whose locks live in a directory of their own.
	LockFile string
	Version  string
	// Log gets one line per node: host, action, path, size, time; and
	// enroot's own output.
	Log io.Writer
	// Host names the node in the log ("" : os.Hostname).
	Host string
	// Runner runs enroot (nil: here, LocalRunner).
	Runner Runner
}

// Run imports image on this node and checks the result is the plan's file.
func (n NodeImport) Run(ctx context.Context, image string) (Result, error) {
	ref, err := ParseRef(image)
	if err != nil {
		return Result{}, err
	}
	if ref.IsLocal() {
		return Result{}, fmt.Errorf("%s is a squash file already: nothing to import on the node", image)
	}
	if !filepath.IsAbs(n.SquashDir) {
		return Result{}, fmt.Errorf("node squash directory %q is not absolute", n.SquashDir)
	}
	if want := filepath.Join(n.SquashDir, ref.SquashName()); n.Squash != "" && filepath.Clean(n.Squash) != want {
		return Result{}, fmt.Errorf("the plan starts containers from %s, but %s imports to %s", n.Squash, image, want)
	}
	if err := os.MkdirAll(n.SquashDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating the node's squash directory: %w", err)
	}
	host := n.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	log := n.Log
	if log == nil {
		log = io.Discard
	}
	opts := Options{SquashDir: n.SquashDir, Enroot: n.Enroot, LockTimeout: n.LockTimeout, Version: n.Version,
		Runner: n.Runner, Output: log, Logf: func(format string, args ...any) { fmt.Fprintf(log, host+": "+format+"\n", args...) }}
	if n.LockFile != "" {
		if !filepath.IsAbs(n.LockFile) {
			return Result{}, fmt.Errorf("lock file %q is not absolute", n.LockFile)
		}
		opts.LockFile = func(Ref) string { return n.LockFile }
	}
	im, err := NewImporter(opts)
	if err != nil {
		return Result{}, err
	}
	res, err := im.Import(ctx, ref)
	if err != nil {
		return res, fmt.Errorf("on %s: %w", host, err)
	}
	fmt.Fprintf(log, "%s: %s %s (%d bytes, %s, lock wait %s)\n", host, res.Action, res.Path, res.Size,
		res.Elapsed.Round(time.Millisecond), res.LockWait.Round(time.Millisecond))
	return res, nil
}
