package profile

import (
	"path/filepath"
	"time"

	"github.com/slurmbench/slurmbench/launcher/inputs/runners"
)

// ImportLock is how an import of image into the squash file squash waits
// for another import of it, by the record's squash policy of the image
// (its framework's and model prefix's location): at most the policy's
// lock-timeout-s, on the lock file its lock-file names — "" for
// beside-squash (<squash>.lock, the importers' own default), else
// <squash's directory>/.locks/<underscore key of image>.lock. InferenceX's
// imports take exactly that lock for that long, on the submit host, in a
// compute step or on every node (squash.py@bede049f lock_path, _locked,
// and its node script's flock -w lock_timeout_s). ok is false without a
// record squash cache: the importers' defaults then.
func (p *Profile) ImportLock(squash, image, framework, modelPrefix string) (timeout time.Duration, lockFile string, ok bool) {
	pol, ok := p.SquashPolicy(framework, modelPrefix)
	if !ok {
		return 0, "", false
	}
	timeout = time.Duration(pol.LockTimeoutS) * time.Second
	if pol.LockFile == runners.LockLocksDir && squash != "" {
		lockFile = filepath.Join(filepath.Dir(squash), ".locks", runners.SquashKey(image)+".lock")
	}
	return timeout, lockFile, true
}
