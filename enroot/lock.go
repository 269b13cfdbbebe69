package enroot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/slurmbench/slurmbench/internal/flock"
)

// ErrLockTimeout is returned (wrapped) when another import held an image's
// lock for longer than the lock timeout.
var ErrLockTimeout = errors.New("timed out waiting for the import lock")

// errLockUnsupported means the filesystem refuses flock(2) altogether.
var errLockUnsupported = flock.ErrUnsupported

// Why flock (internal/flock) and no O_EXCL fallback: the lock is an
// optimisation — it only keeps two nodes from importing the same image at
// once. Correctness (a reader never sees a half-written squash) comes from
// importing into a private directory and renaming into place, which holds
// with or without the lock. So where flock is refused the import goes ahead
// unlocked with a warning, and where it is only node-local (Lustre -o
// localflock) the worst case is a duplicate import.

// acquireLock takes the exclusive lock at path, waiting up to timeout and no
// longer than ctx allows. waiting is called once if the lock is busy.
func acquireLock(ctx context.Context, path string, timeout time.Duration, waiting func()) (*flock.Lock, error) {
	told := false
	l, err := flock.Acquire(ctx, path, flock.Options{Timeout: timeout, Waiting: func(time.Duration) {
		if !told && waiting != nil {
			told = true
			waiting()
		}
	}})
	if errors.Is(err, flock.ErrTimeout) {
		return nil, fmt.Errorf("%w %s after %s (another import of this image is running, or stuck)", ErrLockTimeout, path, timeout)
	}
	return l, err
}
