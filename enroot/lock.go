package enroot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ErrLockTimeout is returned (wrapped) when another import held an image's
// lock for longer than the lock timeout.
var ErrLockTimeout = errors.New("timed out waiting for the import lock")

// errLockUnsupported means the filesystem refuses flock(2) altogether.
var errLockUnsupported = errors.New("the filesystem does not support flock")

// fileLock is an exclusive flock(2) on a lock file next to the squash.
//
// Why flock and nothing else: Linux NFS clients turn flock into byte-range
// locks the server enforces across nodes, and Lustre does the same when
// mounted with -o flock; that covers the shared squash directories the
// runners use. No O_EXCL lockfile fallback: such a file outlives a killed
// importer and then blocks every later import until someone deletes it by
// hand, while a flock dies with its process. The lock is an optimisation
// anyway — it only prevents two nodes from importing the same image at
// once. Correctness (a reader never sees a half-written squash) comes from
// importing into a private directory and renaming into place, which holds
// with or without the lock. So where flock is refused (ENOSYS, EOPNOTSUPP,
// ENOLCK: Lustre without -o flock) the import goes ahead unlocked with a
// warning, and where it is only node-local (Lustre -o localflock) the worst
// case is a duplicate import.
//
// Lock files are never removed: deleting a lock file while another process
// waits on its old inode would let two holders in at once.
type fileLock struct {
	f    *os.File
	path string
}

// Polling bounds for the non-blocking flock loop: a blocking flock cannot be
// interrupted by a context.
const (
	lockPollMin = 20 * time.Millisecond
	lockPollMax = time.Second
)

// acquireLock takes the exclusive lock at path, waiting up to timeout and no
// longer than ctx allows. waiting is called once if the lock is busy.
func acquireLock(ctx context.Context, path string, timeout time.Duration, waiting func()) (*fileLock, error) {
	// Write access is needed on NFS, where an exclusive flock becomes a write
	// lock; a lock file created by another user may only be readable, which
	// is still enough for flock on local filesystems and Lustre.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if errors.Is(err, os.ErrPermission) {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	deadline := time.Now().Add(timeout)
	sleep := lockPollMin
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return &fileLock{f: f, path: path}, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOLCK):
			f.Close()
			return nil, fmt.Errorf("%w (%s): %v", errLockUnsupported, path, err)
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if sleep == lockPollMin && waiting != nil {
			waiting()
		}
		remaining := time.Until(deadline)
		if remaining <= 0 {
			f.Close()
			return nil, fmt.Errorf("%w %s after %s (another import of this image is running, or stuck)", ErrLockTimeout, path, timeout)
		}
		t := time.NewTimer(min(sleep, remaining))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("waiting for lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
		sleep = min(sleep*2, lockPollMax)
	}
}

// release unlocks by closing; closing the descriptor drops the flock.
func (l *fileLock) release() error {
	if l == nil {
		return nil
	}
	return l.f.Close()
}
