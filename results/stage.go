package results

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/slurmbench/slurmbench/internal/atomicfile"
)

// StageOptions says where collected results go and under which names.
type StageOptions struct {
	// ResultFilename is the workflow's RESULT_FILENAME.
	ResultFilename string
	// Dest is the directory to stage into, e.g. $GITHUB_WORKSPACE.
	Dest string
	// Extra artifacts (files) are copied into Dest under their own base names.
	Extra []string
	// Overwrite replaces different files already in Dest; without it such a
	// file is an error naming its path.
	Overwrite bool
}

// StagedFile is one file Stage wrote.
type StagedFile struct {
	Source string
	Dest   string
	// Point is set for a result file, nil for an extra artifact.
	Point *Point
}

// Stage copies each collected point's result into opt.Dest as its
// StagedName, then the extra artifacts flat, each atomically. Identical
// files already there are left alone.
func Stage(points []CollectedPoint, opt StageOptions) ([]StagedFile, error) {
	if opt.Dest == "" {
		return nil, fmt.Errorf("staging results: no destination directory")
	}
	if err := os.MkdirAll(opt.Dest, 0o755); err != nil {
		return nil, fmt.Errorf("staging results: %w", err)
	}
	fopt := atomicfile.Options{Overwrite: opt.Overwrite}
	var staged []StagedFile
	taken := map[string]string{} // staged base name → source, to catch two sources on one name
	claim := func(name, src string) error {
		if prev, ok := taken[name]; ok {
			return fmt.Errorf("staging results: %s and %s would both be staged as %s", prev, src, name)
		}
		taken[name] = src
		return nil
	}
	for _, cp := range points {
		name, err := StagedName(opt.ResultFilename, cp.Config, cp.Point)
		if err != nil {
			return staged, fmt.Errorf("staging %s: %w", cp.Path, err)
		}
		if err := claim(name, cp.Path); err != nil {
			return staged, err
		}
		dst := filepath.Join(opt.Dest, name)
		if err := atomicfile.CopyFile(cp.Path, dst, fopt); err != nil {
			return staged, fmt.Errorf("staging results: %w", err)
		}
		p := cp.Point
		staged = append(staged, StagedFile{Source: cp.Path, Dest: dst, Point: &p})
	}
	for _, src := range opt.Extra {
		name := filepath.Base(src)
		if err := claim(name, src); err != nil {
			return staged, err
		}
		dst := filepath.Join(opt.Dest, name)
		if err := atomicfile.CopyFile(src, dst, fopt); err != nil {
			return staged, fmt.Errorf("staging results: %w", err)
		}
		staged = append(staged, StagedFile{Source: src, Dest: dst})
	}
	return staged, nil
}

// CopyTree copies the directory src to dst, keeping its structure (the
// launchers' "cp -r logs LOGS", which the power audit resolves paths in).
// dst itself is the copy's root, so copying twice never nests a LOGS/logs;
// identical files already there are left alone, different ones are an
// error naming the path unless overwrite is set. Symlinks are recreated,
// not followed.
func CopyTree(src, dst string, overwrite bool) error {
	fopt := atomicfile.Options{Overwrite: overwrite}
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case strings.HasPrefix(d.Name(), atomicfile.TempPrefix):
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			if have, err := os.Readlink(target); err == nil {
				if have == link {
					return nil
				}
				if !overwrite {
					return &atomicfile.ExistsError{Path: target}
				}
				if err := os.Remove(target); err != nil {
					return err
				}
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return atomicfile.CopyFile(path, target, fopt)
		}
		return nil // sockets, fifos, devices
	})
	if err != nil {
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return nil
}
