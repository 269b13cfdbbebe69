package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// RefusedLink is a symbolic link a copy left out: its target, resolved
// link by link inside the copied tree, leaves the tree (or cannot be
// resolved there). Anything in a job can plant one; a reader that follows
// links (an artifact upload, cp -rL, tar -h, a power reader) would read
// its target from the login node.
type RefusedLink struct {
	Path   string `json:"path"`   // relative to the copy's root, '/'-separated
	Target string `json:"target"` // what the link reads
	Why    string `json:"why"`
}

// maxLinkHops bounds the links one resolution follows (Linux's MAXSYMLINKS
// is 40): a loop of links is refused, not followed forever.
const maxLinkHops = 40

// errOutside is a resolution that left the tree.
var errOutside = errors.New("its target leaves the copied tree")

// checkLink resolves the link at rel ('/'-separated, inside root) the way
// the kernel would after the copy: component by component from the link's
// directory, each link met on the way resolved in turn, every ".." taken
// from the real directory it stands in, not from the text (a chain of
// "s -> ." links makes "s/../s/../../x" climb however it reads). It
// returns why the link is refused, or "" when its target stays inside.
func checkLink(root *os.Root, rel string) string {
	target, err := root.Readlink(rel)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	hops := 0
	dir := splitPath(path.Dir(rel))
	if _, err := resolveInside(root, dir, target, &hops); err != nil {
		return err.Error()
	}
	return ""
}

// resolveInside resolves target from the real directory dir (components
// from root) and returns the real path it names.
func resolveInside(root *os.Root, dir []string, target string, hops *int) ([]string, error) {
	if strings.HasPrefix(target, "/") {
		return nil, fmt.Errorf("%w: an absolute target", errOutside)
	}
	cur := append([]string(nil), dir...)
	parts := strings.Split(target, "/")
	for i, p := range parts {
		switch p {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return nil, errOutside
			}
			cur = cur[:len(cur)-1]
			continue
		}
		next := append(append([]string(nil), cur...), p)
		st, err := root.Lstat(path.Join(next...))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// A dangling name: what follows it can only be plain names
			// (a ".." after a missing directory fails on the real tree, and
			// would climb from wherever it is made later).
			for _, q := range parts[i+1:] {
				if q == ".." {
					return nil, fmt.Errorf("%w: \"..\" after %s, which does not exist", errOutside, path.Join(next...))
				}
			}
			return next, nil
		case err != nil:
			return nil, fmt.Errorf("cannot resolve it: %w", err)
		case st.Mode()&fs.ModeSymlink != 0:
			if *hops++; *hops > maxLinkHops {
				return nil, fmt.Errorf("more than %d links deep (a loop)", maxLinkHops)
			}
			t, err := root.Readlink(path.Join(next...))
			if err != nil {
				return nil, fmt.Errorf("cannot resolve it: %w", err)
			}
			if cur, err = resolveInside(root, cur, t, hops); err != nil {
				return nil, err
			}
		default:
			cur = next
		}
	}
	return cur, nil
}

func splitPath(p string) []string {
	var out []string
	for _, s := range strings.Split(p, "/") {
		if s != "" && s != "." {
			out = append(out, s)
		}
	}
	return out
}

// EscapingLinks lists the links under src that CopyTree would leave out,
// each Path prefixed with prefix (e.g. "LOGS/"): what a manifest written
// before the copy lists as refused.
func EscapingLinks(src, prefix string) ([]RefusedLink, error) {
	root, err := os.OpenRoot(src)
	if err != nil {
		return nil, fmt.Errorf("checking links under %s: %w", src, err)
	}
	defer root.Close()
	var out []RefusedLink
	err = fs.WalkDir(root.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if why := checkLink(root, rel); why != "" {
			t, _ := root.Readlink(rel)
			out = append(out, RefusedLink{Path: prefix + rel, Target: t, Why: why})
		}
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("checking links under %s: %w", src, err)
	}
	return out, nil
}
