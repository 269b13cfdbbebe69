// Package flock takes exclusive locks on lock files on shared filesystems,
// with a timeout and a context: a blocking flock cannot be interrupted, so
// the lock is polled with a growing gap instead.
//
// flock where it works across nodes: Linux NFS clients turn flock into
// byte-range locks the server enforces, Lustre does the same with -o flock,
// and a flock dies with its process. Where it does not — Lustre without
// -o flock refuses it (ENOSYS), Lustre with -o localflock and NFS mounted
// with local_lock=flock or local_lock=all grant it per node, silently —
// the lock falls back to a lease: a file created with O_EXCL beside the
// lock file, its mtime refreshed by the holder every LeaseTTL/4, taken
// over by a waiter once it is LeaseTTL old (its holder died) — old on the
// file server's clock, a fresh write's mtime against the lease's, so no
// host's clock is compared with another's. The mount is
// read from /proc/self/mountinfo; SLURMBENCH_LOCKS=lease forces leases
// (a filesystem the detection does not know), =flock forces flock.
// Lock files are never removed: deleting one while another process waits
// on its inode would let two holders in.
package flock

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// ErrTimeout is returned (wrapped) when the lock stayed busy for the whole
// timeout.
var ErrTimeout = errors.New("timed out waiting for the lock")

// ErrUnsupported means the filesystem refuses flock altogether (ENOSYS,
// EOPNOTSUPP, ENOLCK: Lustre without -o flock). Acquire no longer returns
// it (it takes a lease there); it stays for callers that test for it.
var ErrUnsupported = errors.New("the filesystem does not support flock")

// flockFn is flock(2); tests replace it to play a filesystem without it.
var flockFn = syscall.Flock

// Polling bounds of the non-blocking flock loop.
const (
	pollMin = 20 * time.Millisecond
	pollMax = time.Second
)

// Options bound a wait.
type Options struct {
	Timeout time.Duration
	// Waiting is called after every busy try with the time waited so far.
	Waiting func(waited time.Duration)
	// Every caps the gap between busy tries (and so between Waiting calls);
	// default one second.
	Every time.Duration
}

// Lock is a held lock.
type Lock struct {
	f        *os.File
	writable bool
	lease    *lease // set when the lock is a lease, not a flock
}

// Acquire takes the exclusive lock at path (creating the file).
func Acquire(ctx context.Context, path string, o Options) (*Lock, error) {
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
		return nil, fmt.Errorf("opening lock file %s: %w", path, err)
	}
	every := o.Every
	if every <= 0 {
		every = pollMax
	}
	start := time.Now()
	sleep := pollMin
	useLease := leaseReason(path) != ""
	for {
		var err error
		if useLease {
			var ls *lease
			ls, err = tryLease(path)
			if err == nil {
				return &Lock{f: f, writable: writable, lease: ls}, nil
			}
		} else {
			err = flockFn(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		}
		switch {
		case err == nil:
			return &Lock{f: f, writable: writable}, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case !useLease && (errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOLCK)):
			// No flock here (Lustre without -o flock): a lease instead.
			useLease = true
			continue
		case !errors.Is(err, syscall.EWOULDBLOCK):
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		waited := time.Since(start)
		if o.Waiting != nil {
			o.Waiting(waited)
		}
		remaining := o.Timeout - waited
		if remaining <= 0 {
			f.Close()
			return nil, fmt.Errorf("%w %s after %s", ErrTimeout, path, o.Timeout)
		}
		t := time.NewTimer(min(sleep, remaining, every))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("waiting for lock %s: %w", path, ctx.Err())
		case <-t.C:
		}
		sleep = min(sleep*2, pollMax)
	}
}

// File is the lock file, for a holder that records itself in it.
func (l *Lock) File() *os.File { return l.f }

// Writable reports whether the lock file was opened for writing.
func (l *Lock) Writable() bool { return l.writable }

// Release unlocks by closing; closing the descriptor drops the flock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	if l.lease != nil {
		l.lease.release()
		l.lease = nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
