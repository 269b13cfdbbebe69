package launch

import (
	"slices"
	"time"

	"github.com/slurmbench/slurmbench/enroot"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// importLocks gives the plan's image the lock its cluster record's squash
// policy names (profile.Profile.ImportLock): ImportImage's import on the
// login or a compute node waits by it, and so does each `slurmbench
// import-node` step of a job that imports on every node (import:
// all-nodes, or a node-local cache), whose argv the planner writes with
// the importers' default: its --lock-timeout becomes the record's
// lock-timeout-s, and a locks-dir lock file is passed as --lock-file.
// InferenceX's node script takes that lock for that long on each node
// (squash.py@bede049f, flock -w lock_timeout_s on lock_path).
func importLocks(pl *plan.Plan, prof *profile.Profile, framework, modelPrefix string) {
	if ref, err := enroot.ParseRef(pl.Image.Ref); pl.Image.Ref == "" || err != nil || ref.IsLocal() {
		return // nothing is imported: no lock
	}
	timeout, lockFile, ok := prof.ImportLock(pl.Image.Squash, pl.Image.Ref, framework, modelPrefix)
	if !ok || timeout <= 0 {
		return
	}
	pl.Image.LockTimeoutSeconds, pl.Image.LockFile = int(timeout/time.Second), lockFile
	for i := range pl.Processes {
		proc := &pl.Processes[i]
		if proc.Role != plan.RoleImage {
			continue
		}
		proc.Argv = importNodeArgv(proc.Argv, timeout, lockFile)
	}
}

// importNodeArgv is argv (`BINARY import-node [flags] SQUASH IMAGE`) with
// its --lock-timeout set to timeout and, when lockFile is given,
// --lock-file lockFile before the two arguments. Any other argv is
// returned as it is.
func importNodeArgv(argv []string, timeout time.Duration, lockFile string) []string {
	if len(argv) < 4 || argv[1] != "import-node" {
		return argv
	}
	flags, args := slices.Clone(argv[:len(argv)-2]), argv[len(argv)-2:]
	value := timeout.Round(time.Second).String()
	if i := slices.Index(flags, "--lock-timeout"); i >= 0 && i+1 < len(flags) {
		flags[i+1] = value
	} else {
		flags = append(flags, "--lock-timeout", value)
	}
	if lockFile != "" && !slices.Contains(flags, "--lock-file") {
		flags = append(flags, "--lock-file", lockFile)
	}
	return append(flags, args...)
}

// importLockOptions sets opts' wait by the plan's image lock.
func importLockOptions(opts *enroot.Options, img plan.Image) {
	if img.LockTimeoutSeconds > 0 {
		opts.LockTimeout = time.Duration(img.LockTimeoutSeconds) * time.Second
	}
	if f := img.LockFile; f != "" {
		opts.LockFile = func(enroot.Ref) string { return f }
	}
}
