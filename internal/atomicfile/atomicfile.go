// Package atomicfile writes files that a user keeps: the content goes to a
// temporary file in the target's directory, is fsynced, and only then appears
// under its final name, so a crash never leaves a half-written result behind.
//
// An existing file is never replaced silently: writing content identical to
// what is already there succeeds without touching the file, and writing
// different content fails with an *ExistsError unless Options.Overwrite is set.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Options controls how a write treats an existing file.
type Options struct {
	// Overwrite replaces an existing file with different content. Without it
	// such a write fails with an *ExistsError naming the path.
	Overwrite bool
	// Perm is the mode of a newly written file; 0 means 0o644.
	Perm fs.FileMode
}

// ExistsError reports that a different file already sits at Path.
type ExistsError struct {
	Path string
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("refusing to overwrite %s: a different file already exists there", e.Path)
}

// Is lets errors.Is(err, fs.ErrExist) match.
func (e *ExistsError) Is(target error) bool { return target == fs.ErrExist }

// TempPrefix starts the name of every temporary file; it is short and fixed,
// never derived from the final name, because result names are bounded close
// to NAME_MAX and "<name>.tmp" could overflow it. Listings (manifests,
// bundles) skip such leftovers of an interrupted write.
const TempPrefix = ".slurmbench-tmp-"

// WriteFile atomically writes data to path.
func WriteFile(path string, data []byte, opt Options) error {
	return Write(path, opt, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CopyFile atomically copies the regular file src to dst, streaming.
func CopyFile(src, dst string, opt Options) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	defer in.Close()
	return CopyOpen(in, dst, opt)
}

// CopyOpen atomically copies the open regular file in to dst, streaming:
// for a caller that opened the source its own way (O_NOFOLLOW, an os.Root).
func CopyOpen(in *os.File, dst string, opt Options) error {
	src := in.Name()
	st, err := in.Stat()
	if err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("copying %s: not a regular file", src)
	}
	if err := Write(dst, opt, func(w io.Writer) error {
		n, err := io.Copy(w, in)
		if err == nil && n != st.Size() {
			// The source changed under us; a silent short copy is worse than an error.
			err = fmt.Errorf("copied %d bytes, expected %d", n, st.Size())
		}
		return err
	}); err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return nil
}

// Write atomically creates path with the content fill writes. fill may be
// called at most once; if it fails nothing is left behind.
func Write(path string, opt Options, fill func(io.Writer) error) (err error) {
	perm := opt.Perm
	if perm == 0 {
		perm = 0o644
	}
	if st, statErr := os.Lstat(path); statErr == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("writing %s: exists and is not a regular file", path)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, TempPrefix+"*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmpName := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err = fill(tmp); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil && !errors.Is(err, syscall.ENOTSUP) && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("writing %s: fsync: %w", path, err)
	}
	// Close before rename or link: some filesystems dislike the reverse.
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Chmod(tmpName, perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = publish(tmpName, path, opt.Overwrite); err != nil {
		return err
	}
	return SyncDir(dir)
}

// publish moves the finished temp file to path. Without overwrite it uses
// link(2), which fails if path exists, so two writers can never replace each
// other's file between a check and a rename.
func publish(tmpName, path string, overwrite bool) error {
	if overwrite {
		if err := os.Rename(tmpName, path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
	err := os.Link(tmpName, path)
	switch {
	case err == nil:
		os.Remove(tmpName)
		return nil
	case errors.Is(err, fs.ErrExist):
		return keepExisting(tmpName, path)
	default:
		// Filesystems without hard links: check, then rename. The window
		// between the two is the price of not having link(2).
		if _, statErr := os.Lstat(path); statErr == nil {
			return keepExisting(tmpName, path)
		}
		if err := os.Rename(tmpName, path); err != nil {
			os.Remove(tmpName)
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}
}

// Check reports, without writing, whether writing the content of the
// regular file src to path would fail: path is not a regular file (a
// symlink, a directory), or holds different content without
// opt.Overwrite (an *ExistsError). A caller staging many files checks
// every one before writing any.
func Check(src, path string, opt Options) error {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("writing %s: exists and is not a regular file", path)
	case opt.Overwrite:
		return nil
	}
	same, err := sameContent(src, path)
	if err != nil {
		return fmt.Errorf("writing %s: comparing with the existing file: %w", path, err)
	}
	if !same {
		return &ExistsError{Path: path}
	}
	return nil
}

// keepExisting drops the new temp file when path already holds the same
// bytes, and refuses when it holds different ones.
func keepExisting(tmpName, path string) error {
	same, err := sameContent(tmpName, path)
	os.Remove(tmpName)
	if err != nil {
		return fmt.Errorf("writing %s: comparing with the existing file: %w", path, err)
	}
	if !same {
		return &ExistsError{Path: path}
	}
	return nil
}

// sameContent reports whether two files hold the same bytes.
func sameContent(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	sa, err := fa.Stat()
	if err != nil {
		return false, err
	}
	sb, err := fb.Stat()
	if err != nil {
		return false, err
	}
	if !sb.Mode().IsRegular() || sa.Size() != sb.Size() {
		return false, nil
	}
	bufA := make([]byte, 64<<10)
	bufB := make([]byte, 64<<10)
	for {
		na, errA := io.ReadFull(fa, bufA)
		nb, errB := io.ReadFull(fb, bufB)
		if !bytes.Equal(bufA[:na], bufB[:nb]) {
			return false, nil
		}
		doneA := errA == io.EOF || errA == io.ErrUnexpectedEOF
		doneB := errB == io.EOF || errB == io.ErrUnexpectedEOF
		if errA != nil && !doneA {
			return false, errA
		}
		if errB != nil && !doneB {
			return false, errB
		}
		if doneA || doneB {
			return doneA && doneB, nil
		}
	}
}

// SyncDir commits a rename or link in dir to disk, for a file placed by a
// rename this package did not make (a squash file enroot wrote). Filesystems
// that refuse to fsync a directory are not an error: the rename happened.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.ENOTSUP) && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
