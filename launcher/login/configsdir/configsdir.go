// Package configsdir stages what the containers of a job run from
// InferenceX's tree see at /configs, as InferenceX's jobs see their srt-slurm
// checkout's configs/.
package configsdir

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe/fragment"
)

// Sources are the directories of InferenceX's tree that make up what its
// jobs' containers see at /configs, in the order its launcher stages them
// (fragment.ConfigsDirs): srt-slurm's own configs/, then the recipe
// mirror's over it, a mirror file replacing srt-slurm's of the same name.
var Sources = fragment.ConfigsDirs

// Note is what the staged directory holds, for the profile's sources.
var Note = "staged for this run: " + strings.Join(Sources, ", then ") + " over it"

// Under is where a run from the tree at root stages it: in the tree (the
// workspace every job mounts, so on the filesystem the nodes share),
// beside the bound recipes (.slurmbench/bound).
func Under(root string) string { return filepath.Join(root, ".slurmbench", "configs") }

// Stage copies the tree's Sources into dest, replacing an
// earlier run's copy whole: the new tree is built beside it and renamed
// into place, so a reader never sees half of one. Symbolic links are
// copied as links and a missing source is skipped; with neither present
// dest is an empty directory, and a recipe's setup_script is then refused
// by name before submission rather than failing in every worker.
func Stage(ctx context.Context, root, dest string) error {
	return replace(dest, "/configs", func(tmp string) error {
		for _, src := range Sources {
			if err := overlay(ctx, filepath.Join(root, src), tmp, nil); err != nil {
				return exitcode.With(exitcode.Config, fmt.Errorf("staging /configs from %s: %w", src, err))
			}
		}
		return nil
	})
}

// StageTree copies the tree at src into dest as Stage copies, replacing an
// earlier copy whole, leaving out what skip names (nil: nothing; rel is
// slash-separated under src; a directory's whole tree goes with it). A
// workflow run stages a job's copy of the workspace with it.
func StageTree(ctx context.Context, src, dest string, skip func(rel string, dir bool) bool) error {
	return replace(dest, dest, func(tmp string) error {
		if err := overlay(ctx, src, tmp, skip); err != nil {
			return exitcode.With(exitcode.Config, fmt.Errorf("staging %s from %s: %w", dest, src, err))
		}
		return nil
	})
}

// replace builds dest's new tree beside it (fill writes into a fresh
// directory) and renames it into place, the earlier one removed after: a
// reader never sees half of one. what names it in errors.
func replace(dest, what string, fill func(tmp string) error) error {
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return exitcode.With(exitcode.Internal, fmt.Errorf("staging %s: %w", what, err))
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dest)+"-")
	if err != nil {
		return exitcode.With(exitcode.Internal, fmt.Errorf("staging %s: %w", what, err))
	}
	defer os.RemoveAll(tmp) //nolint:errcheck // gone after the rename; a leftover on failure
	if err := fill(tmp); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp's is 0700: the job's user reads it
		return exitcode.With(exitcode.Internal, err)
	}
	old := tmp + ".old"
	if err := os.Rename(dest, old); err != nil && !os.IsNotExist(err) {
		return exitcode.With(exitcode.Internal, fmt.Errorf("staging %s: %w", what, err))
	}
	if err := os.Rename(tmp, dest); err != nil {
		return exitcode.With(exitcode.Internal, fmt.Errorf("staging %s: %w", what, err))
	}
	return os.RemoveAll(old)
}

// overlay copies the tree at src into dst, replacing files of the same
// path; a src that does not exist adds nothing. src is read through an
// os.Root (nothing outside it is read); dst is the caller's fresh
// directory. skip (nil: none) leaves an entry out, a directory with its
// tree.
func overlay(ctx context.Context, src, dst string, skip func(rel string, dir bool) bool) error {
	if st, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", src)
	}
	root, err := os.OpenRoot(src)
	if err != nil {
		return err
	}
	defer root.Close()
	return fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if rel != "." && skip != nil && skip(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			// Kept as a link, as InferenceX's copytree(symlinks=True) keeps it.
			link, err := root.Readlink(rel)
			if err != nil {
				return err
			}
			if err := os.Remove(target); err != nil && !os.IsNotExist(err) {
				return err
			}
			return os.Symlink(link, target) //nolint:gosec // target is under the caller's fresh directory; src is read through an os.Root
		case d.Type().IsRegular():
			in, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
			if err != nil {
				return err
			}
			defer in.Close()
			st, err := in.Stat()
			if err != nil {
				return err
			}
			// The source's mode: a preamble may run a script directly.
			return atomicfile.CopyOpen(in, target, atomicfile.Options{Overwrite: true, Perm: st.Mode().Perm()})
		default:
			return nil // sockets, devices: nothing a recipe runs
		}
	})
}
