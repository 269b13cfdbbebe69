package results

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// ServerLogsBundleName is the InferenceX name of the multinode logs archive.
const ServerLogsBundleName = "multinode_server_logs.tar.gz"

// BundleOptions controls BundleDir.
type BundleOptions struct {
	// Prefix is the top directory inside the archive; default: the base
	// name of the source directory, as "tar -C parent base" would have it.
	Prefix string
	// Overwrite replaces a different archive already at the destination.
	Overwrite bool
}

// BundleDir writes srcDir as a gzip-compressed tar to dst, atomically.
// Entries are in lexical path order, with owner names, access and change
// times left out, so the same tree gives the same listing every time.
// Symlinks are stored as links, except those whose target leaves srcDir
// (resolved link by link, as CopyTree does); the archive itself and
// temporary files are skipped when dst lies inside srcDir.
func BundleDir(srcDir, dst string, opt BundleOptions) error {
	st, err := os.Stat(srcDir)
	if err != nil {
		return fmt.Errorf("bundling %s: %w", srcDir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("bundling %s: not a directory", srcDir)
	}
	prefix := opt.Prefix
	if prefix == "" {
		abs, err := filepath.Abs(srcDir)
		if err != nil {
			return fmt.Errorf("bundling %s: %w", srcDir, err)
		}
		prefix = filepath.Base(abs)
	}
	dstAbs, _ := filepath.Abs(dst)
	root, err := os.OpenRoot(srcDir)
	if err != nil {
		return fmt.Errorf("bundling %s: %w", srcDir, err)
	}
	defer root.Close()
	err = atomicfile.Write(dst, atomicfile.Options{Overwrite: opt.Overwrite}, func(w io.Writer) error {
		zw := gzip.NewWriter(w) // no name or mtime in the gzip header
		tw := tar.NewWriter(zw)
		// WalkDir visits entries in lexical order.
		walkErr := filepath.WalkDir(srcDir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.HasPrefix(d.Name(), atomicfile.TempPrefix) {
				return nil
			}
			if abs, _ := filepath.Abs(p); abs == dstAbs {
				return nil
			}
			if d.Type()&fs.ModeSymlink != 0 {
				// Left out like CopyTree leaves it out: its target, resolved
				// inside srcDir, leaves it (an extracting tar -h would follow).
				if rel, err := filepath.Rel(srcDir, p); err != nil || checkLink(root, filepath.ToSlash(rel)) != "" {
					return nil
				}
			}
			return addTarEntry(tw, srcDir, prefix, p, d)
		})
		if walkErr != nil {
			return walkErr
		}
		if err := tw.Close(); err != nil {
			return err
		}
		return zw.Close()
	})
	if err != nil {
		return fmt.Errorf("bundling %s into %s: %w", srcDir, dst, err)
	}
	return nil
}

func addTarEntry(tw *tar.Writer, root, prefix, p string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	var link string
	if info.Mode()&fs.ModeSymlink != 0 {
		if link, err = os.Readlink(p); err != nil {
			return err
		}
	} else if !info.Mode().IsRegular() && !info.IsDir() {
		return nil // sockets, fifos, devices: nothing to keep
	}
	var f *os.File
	if info.Mode().IsRegular() {
		// Open what was listed, not what the path names now: no symlink is
		// followed (O_NOFOLLOW), a FIFO swapped in does not block
		// (O_NONBLOCK), and the opened file must be the one listed, or a
		// symlink or another file swapped in between would be archived.
		if f, err = openListed(p, info); err != nil {
			return err
		}
		defer f.Close()
	}
	hdr, err := tar.FileInfoHeader(info, link)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return err
	}
	hdr.Name = path.Join(prefix, filepath.ToSlash(rel))
	if info.IsDir() {
		hdr.Name += "/"
	}
	hdr.Uname, hdr.Gname = "", ""
	hdr.AccessTime, hdr.ChangeTime = time.Time{}, time.Time{}
	hdr.ModTime = hdr.ModTime.Truncate(time.Second)
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	if f == nil {
		return nil
	}
	// A log still being appended to is archived as it was when listed.
	n, err := io.Copy(tw, io.LimitReader(f, info.Size()))
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if n != info.Size() {
		return fmt.Errorf("%s: shrank while being archived", p)
	}
	return nil
}

// openListed opens p without following a symlink and checks it is still
// the regular file listed as info.
func openListed(p string, info fs.FileInfo) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (replaced while being archived?)", p, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() || !os.SameFile(st, info) {
		f.Close()
		return nil, fmt.Errorf("%s: replaced while being archived", p)
	}
	return f, nil
}
