// Package stagemodel copies a model directory from shared storage to a
// node's local disk before the workers start (recipe model.stage_dir). It is
// `slurmbench stage-model SOURCE DEST`, one step per worker node.
//
// It keeps srtctl's contract for that step (src/srtctl/runtime_scripts/
// stage_model.sh, run by src/srtctl/cli/do_sweep.py _stage_model,
// NVIDIA/srt-slurm@c88ef731, read as facts): the
// copy happens once per node, the copy is skipped when DEST already matches
// SOURCE by a manifest of relative path and size of every regular file
// (symbolic links followed), the copy follows symbolic links so DEST holds
// real files, STAGE_PARALLEL files (default 16) are copied at once, the
// manifests must match afterwards, and any failure fails the step, so the
// job never falls back to the slow path silently.
package stagemodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// DefaultParallel is how many files are copied at once when STAGE_PARALLEL
// does not say.
const DefaultParallel = 16

// Options is one staging.
type Options struct {
	Source, Dest string
	// Parallel is the copy fan-out; 0 = DefaultParallel.
	Parallel int
	// Host names the node in the log lines.
	Host string
	Log  io.Writer
	// Now is the clock for the duration line; nil = time.Now.
	Now func() time.Time
}

// Entry is one line of a manifest: a regular file's path relative to the
// directory, and its size.
type Entry struct {
	Path string
	Size int64
}

// Result says what a staging did.
type Result struct {
	// Skipped is true when DEST already matched.
	Skipped bool
	// Files and Bytes are what the manifest holds.
	Files int
	Bytes int64
}

// Run stages Source into Dest.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(o.Log, "[stage:%s] "+format+"\n", append([]any{o.Host}, args...)...)
	}
	if st, err := os.Stat(o.Source); err != nil || !st.IsDir() {
		return Result{}, fmt.Errorf("staging the model: source directory %s not found", o.Source)
	}
	if err := os.MkdirAll(o.Dest, 0o755); err != nil {
		return Result{}, fmt.Errorf("staging the model: creating %s: %w", o.Dest, err)
	}
	src, err := Manifest(o.Source)
	if err != nil {
		return Result{}, fmt.Errorf("staging the model: listing %s: %w", o.Source, err)
	}
	res := Result{Files: len(src)}
	for _, e := range src {
		res.Bytes += e.Size
	}
	if dst, err := Manifest(o.Dest); err == nil && slices.Equal(src, dst) {
		logf("%s already matches %s (manifest hit); nothing copied", o.Dest, o.Source)
		res.Skipped = true
		return res, nil
	}
	logf("copying %s to %s: %d files, %d bytes, %d at a time", o.Source, o.Dest, len(src), res.Bytes, o.Parallel)
	start := now()
	if err := copyAll(ctx, o.Source, o.Dest, src, o.Parallel); err != nil {
		return res, fmt.Errorf("staging the model into %s: %w", o.Dest, err)
	}
	dst, err := Manifest(o.Dest)
	if err != nil {
		return res, fmt.Errorf("staging the model: listing %s after the copy: %w", o.Dest, err)
	}
	if !slices.Equal(src, dst) {
		return res, fmt.Errorf("staging the model: %s does not match %s after the copy (%s)", o.Dest, o.Source, firstDifference(src, dst))
	}
	logf("copied in %s; manifest verified", now().Sub(start).Round(time.Second))
	return res, nil
}

// Manifest lists every regular file under dir, following symbolic links,
// sorted by path (byte order). Temporary files of an interrupted copy are
// left out, so a rerun finishes the copy instead of failing on them.
func Manifest(dir string) ([]Entry, error) {
	var out []Entry
	var walk func(abs, rel string, seen []string) error
	walk = func(abs, rel string, seen []string) error {
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return err
		}
		if slices.Contains(seen, real) {
			return fmt.Errorf("%s: a symbolic link loops back to %s", abs, real)
		}
		seen = append(seen, real)
		entries, err := os.ReadDir(abs)
		if err != nil {
			return err
		}
		for _, d := range entries {
			name := d.Name()
			p, r := filepath.Join(abs, name), filepath.ToSlash(filepath.Join(rel, name))
			st, err := os.Stat(p) // follows links
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) && d.Type()&fs.ModeSymlink != 0 {
					continue // a dangling link names no file to copy
				}
				return err
			}
			switch {
			case st.IsDir():
				if err := walk(p, r, seen); err != nil {
					return err
				}
			case st.Mode().IsRegular() && !strings.HasPrefix(name, atomicfile.TempPrefix):
				out = append(out, Entry{Path: r, Size: st.Size()})
			}
		}
		return nil
	}
	if err := walk(dir, "", nil); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// copyAll copies every file of the manifest, n at a time; the first error
// stops the others from starting.
func copyAll(ctx context.Context, src, dst string, files []Entry, n int) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	work := make(chan Entry)
	var wg sync.WaitGroup
	for range min(n, max(len(files), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e := range work {
				to := filepath.Join(dst, filepath.FromSlash(e.Path))
				err := os.MkdirAll(filepath.Dir(to), 0o755)
				if err == nil {
					// CopyFile opens the source, which follows a link: the
					// copy holds the file, never the link.
					err = atomicfile.CopyFile(filepath.Join(src, filepath.FromSlash(e.Path)), to, atomicfile.Options{Overwrite: true})
				}
				if err != nil {
					cancel(fmt.Errorf("copying %s: %w", e.Path, err))
				}
			}
		}()
	}
feed:
	for _, e := range files {
		select {
		case work <- e:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return context.Cause(ctx)
}

func firstDifference(src, dst []Entry) string {
	have := map[string]int64{}
	for _, e := range dst {
		have[e.Path] = e.Size
	}
	for _, e := range src {
		size, ok := have[e.Path]
		switch {
		case !ok:
			return e.Path + " is missing"
		case size != e.Size:
			return fmt.Sprintf("%s has %d bytes, the source %d", e.Path, size, e.Size)
		}
		delete(have, e.Path)
	}
	for p := range have {
		return p + " is not in the source"
	}
	return "same files"
}
