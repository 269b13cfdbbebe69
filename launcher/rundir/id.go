package rundir

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
)

// maxID bounds a run id: it is a directory name and the job's comment.
const maxID = 128

// NewID is a fresh run id, <name>-<UTC time>-<random>: unique across runs
// of the same recipe at once, sortable by time, and a valid directory and
// job name.
func NewID(name string, now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%s-%s-%x", name, now.UTC().Format("20060102T150405Z"), b)
	if len(id) > maxID {
		id = id[len(id)-maxID:]
		id = strings.TrimLeft(id, ".-")
	}
	return id
}

// CheckID reports whether id can name a run: the characters and length a
// recipe name may have, so it is one directory name (no separator, not . or
// ..) that Slurm and shells take as it is.
func CheckID(id string) error {
	if err := recipe.CheckName(id); err != nil {
		return fmt.Errorf("run id: %w", err)
	}
	return nil
}

// Path is the run directory of id under runsDir. Every place that turns a
// run id into a directory goes through it, so the rule is written once.
func Path(runsDir, id string) (string, error) {
	if err := CheckID(id); err != nil {
		return "", err
	}
	return filepath.Join(runsDir, id), nil
}
