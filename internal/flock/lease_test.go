package flock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// noFlock plays a filesystem that refuses flock (Lustre without -o flock).
func noFlock(t *testing.T) {
	old := flockFn
	flockFn = func(int, int) error { return syscall.ENOSYS }
	t.Cleanup(func() { flockFn = old })
}

// TestNoFlockFallsBackToALease: where flock is refused, a second holder
// still waits and times out, and takes the lock once it is released. The
// lock used to "succeed" for everyone (ErrUnsupported, which callers took
// as no lock): two runs shared an allocation.
func TestNoFlockFallsBackToALease(t *testing.T) {
	noFlock(t)
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("first acquire: %v", err)
	}
	if _, err := os.Stat(path + LeaseSuffix); err != nil {
		t.Fatalf("no lease file: %v", err)
	}
	_, err = Acquire(context.Background(), path, Options{Timeout: 150 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("second acquire: %v, want ErrTimeout", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(context.Background(), path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

// TestLeaseOfADeadHolderIsTakenOver: a holder that stops refreshing (it
// was killed) loses the lease after LeaseTTL; one that lives keeps it.
func TestLeaseOfADeadHolderIsTakenOver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		t.Setenv("SLURMBENCH_LOCKS", "lease")
		dir := t.TempDir()
		live, dead := filepath.Join(dir, "live.lock"), filepath.Join(dir, "dead.lock")
		l, err := Acquire(t.Context(), live, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release()
		d, err := Acquire(t.Context(), dead, Options{})
		if err != nil {
			t.Fatal(err)
		}
		close(d.lease.stop) // killed: no more refreshes, the file stays
		d.lease.wg.Wait()
		// The file server's clock (file times) does not follow the
		// bubble's: the lease is aged on it directly.
		server, err := serverNow(dead + LeaseSuffix)
		if err != nil {
			t.Fatal(err)
		}
		young := server.Add(-LeaseTTL + 10*time.Second)
		_ = os.Chtimes(dead+LeaseSuffix, young, young)
		if _, err := Acquire(t.Context(), dead, Options{Timeout: time.Hour}); !errors.Is(err, ErrTimeout) {
			t.Fatalf("a lease %s old was taken over: %v", LeaseTTL-10*time.Second, err)
		}
		old := server.Add(-LeaseTTL - time.Second)
		_ = os.Chtimes(dead+LeaseSuffix, old, old)
		l2, err := Acquire(t.Context(), dead, Options{Timeout: time.Hour})
		if err != nil {
			t.Fatalf("taking over a dead holder's lease: %v", err)
		}
		l2.Release()
		if _, err := Acquire(t.Context(), live, Options{Timeout: 3 * LeaseTTL}); !errors.Is(err, ErrTimeout) {
			t.Errorf("a live holder's lease was taken: %v", err)
		}
	})
}

// TestNodeLocalFlockIsDetected: mounts whose flock holds on one node only
// take leases; ordinary ones flock.
func TestNodeLocalFlockIsDetected(t *testing.T) {
	info := filepath.Join(t.TempDir(), "mountinfo")
	text := strings.Join([]string{
		`22 1 0:21 / / rw,relatime - ext4 /dev/sda1 rw`,
		`30 22 0:40 / /lustre rw,relatime - lustre 10.0.0.1@o2ib:/fs rw,localflock`,
		`31 22 0:41 / /lustre2 rw,relatime - lustre 10.0.0.1@o2ib:/fs2 rw,flock`,
		`32 22 0:42 / /lustre3 rw,relatime - lustre 10.0.0.1@o2ib:/fs3 rw`,
		`33 22 0:43 / /home rw,relatime - nfs4 srv:/home rw,vers=4.2,local_lock=flock`,
		`34 22 0:44 / /scratch rw,relatime - nfs srv:/scratch rw,vers=3,local_lock=none`,
		`35 22 0:45 / /with\040space rw - nfs srv:/x rw,local_lock=all`,
	}, "\n") + "\n"
	if err := os.WriteFile(info, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	old := mountInfo
	mountInfo = info
	t.Cleanup(func() { mountInfo = old })
	for path, lease := range map[string]bool{
		"/tmp/x.lock":                 false,
		"/lustre/runs/x.lock":         true,
		"/lustre2/runs/x.lock":        false,
		"/lustre3/runs/x.lock":        true,
		"/home/u/runs/x.lock":         true,
		"/scratch/runs/x.lock":        false,
		"/with space/runs/x.lock":     true,
		"/lustre2x/runs/x.lock":       false,
		"/home/u/runs/sub/dir/x.lock": true,
	} {
		if got := nodeLocalFlock(path) != ""; got != lease {
			t.Errorf("%s: lease=%v, want %v (%q)", path, got, lease, nodeLocalFlock(path))
		}
	}
}

// TestLeaseStalenessIgnoresHostClocks: a holder whose clock is behind the
// checker's (here 3 minutes, past LeaseTTL) keeps its lease while it
// refreshes it: staleness is judged on the file server's clock alone (a
// fresh write's mtime against the lease's), never one host's clock
// against another's (audit #33 row 10: a login node more than ~2 min
// behind lost its lock while it held it). A checker whose clock is behind
// still takes over a lease whose holder died.
func TestLeaseStalenessIgnoresHostClocks(t *testing.T) {
	for _, skew := range []time.Duration{-3 * time.Minute, -time.Hour, 3 * time.Minute} {
		t.Run(skew.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				t.Setenv("SLURMBENCH_LOCKS", "lease")
				path := filepath.Join(t.TempDir(), "x.lock")
				defer func(c func() time.Time) { localClock = c }(localClock)
				localClock = func() time.Time { return time.Now().Add(skew) } // the holder's host
				l, err := Acquire(t.Context(), path, Options{})
				if err != nil {
					t.Fatal(err)
				}
				localClock = time.Now // the checker's host
				if other, err := Acquire(t.Context(), path, Options{Timeout: 3 * LeaseTTL}); !errors.Is(err, ErrTimeout) {
					t.Errorf("a live holder %s off lost its lease: %v", skew, err)
					if other != nil {
						other.Release()
					}
				}
				// It dies: its lease stops being refreshed and, once
				// LeaseTTL old on the file server's clock, is taken over.
				close(l.lease.stop)
				l.lease.wg.Wait()
				dead := time.Now().Add(-LeaseTTL - time.Second)
				_ = os.Chtimes(path+LeaseSuffix, dead, dead)
				l2, err := Acquire(t.Context(), path, Options{Timeout: time.Minute})
				if err != nil {
					t.Fatalf("a dead holder's lease was not taken over: %v", err)
				}
				l2.Release()
			})
		})
	}
}
