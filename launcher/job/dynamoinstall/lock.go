package dynamoinstall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/internal/flock"
)

// errLockUnsupported means the filesystem refuses flock(2) (Lustre mounted
// without -o flock): the caller goes on unlocked, since correctness comes
// from renaming complete entries into place.
var errLockUnsupported = flock.ErrUnsupported

// lock takes an exclusive flock on path, waiting at most timeout and no
// longer than ctx, with a progress line every o.ProgressEvery while it
// waits. The holder writes its host and pid into the file so waiters can
// say whom they wait for.
func (o Options) lock(ctx context.Context, path string, timeout time.Duration, why string) (unlock func(), err error) {
	every := o.ProgressEvery
	if every <= 0 {
		every = 30 * time.Second
	}
	next := time.Duration(0)
	waited := false
	l, err := flock.Acquire(ctx, path, flock.Options{Timeout: timeout, Every: min(every, time.Second), Waiting: func(d time.Duration) {
		waited = true
		if d >= next {
			o.logf("waiting for %s for %s: %s (held by %s)", path, d.Round(time.Second), why, holder(path))
			next += every
		}
	}})
	if errors.Is(err, flock.ErrTimeout) {
		return nil, fmt.Errorf("timed out after %s waiting for %s: %s (held by %s)", timeout, path, why, holder(path))
	}
	if err != nil {
		return nil, err
	}
	if l.Writable() {
		host, _ := os.Hostname()
		_ = l.File().Truncate(0)
		_, _ = l.File().WriteAt([]byte(fmt.Sprintf("%s pid %d since %s\n", host, os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0)
	}
	if waited {
		o.logf("got %s", path)
	}
	return func() {
		if err := l.Release(); err != nil {
			o.logf("releasing %s: %v", path, err)
		}
	}, nil
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
