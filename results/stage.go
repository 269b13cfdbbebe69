package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

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
	Point *PointID
}

// Stage copies each collected point's result into opt.Dest as its
// StagedName, then the extra artifacts flat, each atomically. Identical
// files already there are left alone. Every copy is checked before any is
// made, so a refused overwrite stages nothing. Sources must be regular
// files, not symbolic links (a link in a run directory can point anywhere,
// and its target would be published); nothing is written through a
// symbolic link in the stage directory. Either is refused, naming it.
func Stage(points []CollectedPoint, opt StageOptions) ([]StagedFile, error) {
	if opt.Dest == "" {
		return nil, fmt.Errorf("staging results: no destination directory")
	}
	if err := os.MkdirAll(opt.Dest, 0o755); err != nil {
		return nil, fmt.Errorf("staging results: %w", err)
	}
	fopt := atomicfile.Options{Overwrite: opt.Overwrite}
	var pl []StagedFile
	taken := map[string]string{} // staged base name → source, to catch two sources on one name
	add := func(name, src string, p *PointID) error {
		if prev, ok := taken[name]; ok {
			return fmt.Errorf("staging results: %s and %s would both be staged as %s", prev, src, name)
		}
		taken[name] = src
		pl = append(pl, StagedFile{Source: src, Dest: filepath.Join(opt.Dest, name), Point: p})
		return nil
	}
	for _, cp := range points {
		name, err := StagedName(opt.ResultFilename, cp.Config, cp.Point)
		if err != nil {
			return nil, fmt.Errorf("staging %s: %w", cp.Path, err)
		}
		p := cp.Point
		if err := add(name, cp.Path, &p); err != nil {
			return nil, err
		}
		// The point's per-request records travel with it, under the
		// staged name (…_conc8_gpus_12.requests.jsonl.gz: outside the
		// workflow's ${RESULT_FILENAME}_*.json glob).
		if req := RequestsPath(cp.Path); fileExists(req) {
			if err := add(RequestsPath(name), req, nil); err != nil {
				return nil, err
			}
		}
	}
	for _, src := range opt.Extra {
		if err := add(filepath.Base(src), src, nil); err != nil {
			return nil, err
		}
	}
	for _, f := range pl {
		if err := checkSource(f.Source); err != nil {
			return nil, fmt.Errorf("staging results: %w", err)
		}
		if err := checkDest(opt.Dest, f.Dest); err != nil {
			return nil, fmt.Errorf("staging results: %w", err)
		}
		if err := atomicfile.Check(f.Source, f.Dest, fopt); err != nil {
			return nil, fmt.Errorf("staging results: %w", err)
		}
	}
	var staged []StagedFile
	for _, f := range pl {
		if err := copyNoFollow(f.Source, f.Dest, fopt); err != nil {
			return staged, fmt.Errorf("staging results: %w", err)
		}
		staged = append(staged, f)
	}
	return staged, nil
}

// checkSource refuses a source that is not a regular file: above all a
// symbolic link, whose target may lie anywhere.
func checkSource(path string) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(path)
		return fmt.Errorf("refusing to stage %s: it is a symbolic link (to %s), and only files of the run are staged", path, target)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("refusing to stage %s: not a regular file", path)
	}
	return nil
}

// checkDest refuses a destination under root reached through a symbolic
// link: writing through one would put the file wherever the link points.
func checkDest(root, path string) error {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("refusing to stage to %s: outside %s", path, root)
	}
	p := root
	for _, part := range strings.Split(filepath.Dir(rel), string(filepath.Separator)) {
		if part == "." {
			continue
		}
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			return fmt.Errorf("refusing to stage into %s: it is a symbolic link (to %s) in the stage directory", p, target)
		}
	}
	return nil
}

// copyNoFollow copies the regular file src to dst atomically; a src that
// became a symbolic link after it was checked is refused by the open.
func copyNoFollow(src, dst string, opt atomicfile.Options) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return fmt.Errorf("copying %s: %w", src, err)
	}
	defer in.Close()
	return atomicfile.CopyOpen(in, dst, opt)
}

// CopyTree copies the directory src to dst, keeping its structure (the
// launchers' "cp -r logs LOGS", which the power audit resolves paths in).
// dst itself is the copy's root, so copying twice never nests a LOGS/logs;
// identical files already there are left alone, different ones are an
// error naming the path unless overwrite is set. src is read through an
// os.Root, so nothing outside it is read; a symbolic link is recreated
// only if its target, resolved link by link inside src (checkLink), stays
// inside; else it is left out and returned among the refused; nothing is
// written through a symbolic link under dst.
func CopyTree(src, dst string, overwrite bool) ([]RefusedLink, error) {
	fopt := atomicfile.Options{Overwrite: overwrite}
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, fmt.Errorf("copying %s: %w", src, err)
	}
	defer root.Close()
	var refused []RefusedLink
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(rel))
		under := target // the directories leading to it must be real ones
		if d.IsDir() {
			under = filepath.Join(target, "x")
		}
		if err := checkDest(dst, under); err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if st, err := os.Lstat(target); err == nil && !st.IsDir() {
				return fmt.Errorf("refusing to copy into %s: not a directory", target)
			}
			return os.MkdirAll(target, 0o755)
		case strings.HasPrefix(d.Name(), atomicfile.TempPrefix):
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			link, err := root.Readlink(rel)
			if err != nil {
				return err
			}
			if why := checkLink(root, rel); why != "" {
				refused = append(refused, RefusedLink{Path: rel, Target: link, Why: why})
				return nil
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
			return os.Symlink(link, target) //nolint:gosec // dst is the caller's own stage directory and checkDest refused links under it just above; src is read through an os.Root
		case d.Type().IsRegular():
			in, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
			if err != nil {
				return err
			}
			defer in.Close()
			return atomicfile.CopyOpen(in, target, fopt)
		}
		return nil // sockets, fifos, devices
	})
	if err != nil {
		return refused, fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	return refused, nil
}

func fileExists(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode().IsRegular()
}
