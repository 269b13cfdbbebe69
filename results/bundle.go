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
// Symlinks are stored as links; the archive itself and temporary files are
// skipped when dst lies inside srcDir.
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
	if !info.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
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
