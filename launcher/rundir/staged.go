package rundir

import (
	"path/filepath"
	"time"
)

// StagedName is staged.json: where run staged the results, so `runs ls`
// and `runs show` can say where a run's results went.
const StagedName = "staged.json"

// StagedPath names root's staged.json.
func StagedPath(root string) string { return filepath.Join(root, StagedName) }

// Staged records one staging of a run's results.
type Staged struct {
	// Dir is the stage directory (--stage-dir, $GITHUB_WORKSPACE).
	Dir string `json:"dir"`
	// Files are the staged files' paths, results first.
	Files []string  `json:"files"`
	Time  time.Time `json:"time"`
}

func ReadStaged(path string) (Staged, error) {
	var s Staged
	err := readJSON(path, "staging record", &s)
	return s, err
}

func WriteStaged(path string, s Staged) error { return writeJSON(path, "staging record", s) }
