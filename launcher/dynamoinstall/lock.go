package dynamoinstall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// errLockUnsupported means the filesystem refuses flock(2) (Lustre mounted
// without -o flock): the caller goes on unlocked, since correctness comes
// from renaming complete entries into place.
var errLockUnsupported = errors.New("the filesystem does not support flock")

// Polling bounds: a blocking flock cannot be interrupted by a context.
const (
	lockPollMin = 20 * time.Millisecond
	lockPollMax = time.Second
)

// lock takes an exclusive flock on path, waiting at most timeout and no
// longer than ctx, with a progress line every o.ProgressEvery while it
// waits. The holder writes its host and pid into the file so waiters can
// say whom they wait for. Lock files are never removed: deleting one while
// another process waits on its inode would let two holders in.
func (o Options) lock(ctx context.Context, path string, timeout time.Duration, why string) (unlock func(), err error) {
	// Write access is needed on NFS, where an exclusive flock becomes a
	// write lock; a lock file of another user may only be readable, which
	// still works on local filesystems and Lustre.
	writable := true
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if errors.Is(err, os.ErrPermission) {
		writable = false
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening lock %s: %w", path, err)
	}
	start := time.Now()
	nextReport := start
	sleep := lockPollMin
	waited := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			if writable {
				host, _ := os.Hostname()
				_ = f.Truncate(0)
				_, _ = f.WriteAt([]byte(fmt.Sprintf("%s pid %d since %s\n", host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
			}
			if waited {
				o.logf("got %s after %s", path, time.Since(start).Round(time.Second))
			}
			return func() { f.Close() }, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EOPNOTSUPP), errors.Is(err, syscall.ENOLCK):
			f.Close()
			return nil, fmt.Errorf("%w (%s): %v", errLockUnsupported, path, err)
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		waited = true
		now := time.Now()
		if !now.Before(nextReport) {
			o.logf("waiting for %s for %s: %s (held by %s)", path, now.Sub(start).Round(time.Second), why, holder(path))
			nextReport = nextReport.Add(o.ProgressEvery)
		}
		remaining := timeout - now.Sub(start)
		if remaining <= 0 {
			f.Close()
			return nil, fmt.Errorf("timed out after %s waiting for %s: %s (held by %s)", timeout, path, why, holder(path))
		}
		t := time.NewTimer(min(sleep, remaining, time.Until(nextReport)+time.Millisecond))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("waiting for %s: %w", path, ctx.Err())
		case <-t.C:
		}
		sleep = min(sleep*2, lockPollMax)
	}
}

// touchLock checks that the lock file at path can be created or opened
// for writing (the Python prefix may be read-only).
func touchLock(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return err
	}
	return f.Close()
}

// holder is what the lock's current holder wrote into it.
func holder(path string) string {
	b, err := os.ReadFile(path)
	if s := strings.TrimSpace(string(b)); err == nil && s != "" && len(s) < 200 {
		return s
	}
	return "an unknown process"
}
