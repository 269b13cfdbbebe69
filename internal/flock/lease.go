package flock

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LeaseTTL is how old an unrefreshed lease must be before a waiter takes
// it over: its holder refreshes it every LeaseTTL/4, so only a dead holder
// (or one stalled that long) lets it age.
const LeaseTTL = 2 * time.Minute

// localClock is this host's clock (a test skews it).
var localClock = time.Now

// LeaseSuffix names the lease file beside a lock file.
const LeaseSuffix = ".lease"

// mountInfo is read to tell how the filesystem treats flock.
var mountInfo = "/proc/self/mountinfo"

// leaseReason says why locks under path are leases ("" for flock): the
// environment forces it, or the mount grants flock per node only.
func leaseReason(path string) string {
	switch os.Getenv("SLURMBENCH_LOCKS") {
	case "lease":
		return "SLURMBENCH_LOCKS=lease"
	case "flock":
		return ""
	}
	return nodeLocalFlock(path)
}

// nodeLocalFlock reads the mount holding path and says why its flock is
// not shared between nodes, or "" when it is (or the mount is unknown).
func nodeLocalFlock(path string) string {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		dir = filepath.Dir(path)
	}
	f, err := os.Open(mountInfo)
	if err != nil {
		return ""
	}
	defer f.Close()
	best, fstype, opts := "", "", ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent maj:min root mountpoint mountopts [optional...] - fstype source superopts
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 6 || len(tail) < 3 {
			continue
		}
		mp := unescapeMount(fields[4])
		if !within(dir, mp) || len(mp) < len(best) {
			continue
		}
		best, fstype, opts = mp, tail[0], fields[5]+","+tail[2]
	}
	has := func(o string) bool { return strings.Contains(","+opts+",", ","+o+",") }
	switch {
	case fstype == "lustre" && has("localflock"):
		return "Lustre mounted with localflock: flock holds on one node only"
	case fstype == "lustre" && !has("flock"):
		return "Lustre mounted without flock"
	case (fstype == "nfs" || fstype == "nfs4") && (has("local_lock=flock") || has("local_lock=all")):
		return "NFS mounted with local_lock: flock holds on one node only"
	}
	return ""
}

func within(dir, mp string) bool {
	return mp == "/" || dir == mp || strings.HasPrefix(dir, mp+"/")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var n int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%03o", &n); err == nil && n <= 0xff {
				b.WriteByte(byte(n)) //nolint:gosec // n <= 0xff, checked above
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lease is a held lease file, refreshed until released.
type lease struct {
	path string
	ino  uint64
	stop chan struct{}
	wg   sync.WaitGroup
}

// tryLease takes the lease beside lock file path once: EWOULDBLOCK while
// another holder keeps it fresh.
func tryLease(path string) (*lease, error) {
	lp := path + LeaseSuffix
	for range 2 {
		f, err := os.OpenFile(lp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			host, _ := os.Hostname()
			_, _ = fmt.Fprintf(f, "%s pid %d since %s\n", host, os.Getpid(), localClock().UTC().Format(time.RFC3339))
			f.Close()
			// The lease's age is judged on the file server's clock only:
			// its mtime comes from this write and from refreshes that ask
			// for "now" without naming a time (see touch), and waiters
			// compare it with a fresh write's (serverNow).
			st, serr := os.Stat(lp)
			if serr != nil {
				return nil, serr
			}
			l := &lease{path: lp, ino: inode(st), stop: make(chan struct{})}
			l.wg.Add(1)
			go l.refresh()
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("taking lease %s: %w", lp, err)
		}
		if !breakStale(lp) {
			return nil, syscall.EWOULDBLOCK
		}
	}
	return nil, syscall.EWOULDBLOCK
}

// breakStale removes lease lp if it is older than LeaseTTL. It renames
// the file away first and checks it renamed the very file it judged
// stale, so two waiters never both break (and then both take) one lease.
func breakStale(lp string) bool {
	st, err := os.Stat(lp)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	now, err := serverNow(lp)
	if err != nil || now.Sub(st.ModTime()) < LeaseTTL {
		return false // without the server's time nothing is judged stale
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	aside := lp + ".stale-" + hex.EncodeToString(b[:])
	if err := os.Rename(lp, aside); err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	got, err := os.Stat(aside)
	if err == nil && (inode(got) != inode(st) || now.Sub(got.ModTime()) < LeaseTTL) {
		// Another waiter broke the stale one and took a fresh lease in
		// between: put it back.
		_ = os.Link(aside, lp)
	}
	_ = os.Remove(aside)
	return true
}

// refresh keeps the lease fresh until release.
func (l *lease) refresh() {
	defer l.wg.Done()
	t := time.NewTicker(LeaseTTL / 4)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			_ = touch(l.path)
		}
	}
}

// release stops refreshing and removes the lease if it is still this one.
func (l *lease) release() {
	close(l.stop)
	l.wg.Wait()
	if st, err := os.Stat(l.path); err == nil && inode(st) == l.ino {
		_ = os.Remove(l.path)
	}
}

// utimeNow is Linux's UTIME_NOW: utimensat sets the time to "now" as the
// filesystem keeps it (an NFS client asks the server to use its own
// clock), not to a time this host names.
const utimeNow = 1<<30 - 1

// touch sets path's times to the file server's now.
func touch(path string) error {
	return syscall.UtimesNano(path, []syscall.Timespec{{Nsec: utimeNow}, {Nsec: utimeNow}})
}

// serverNow is the file server's time beside lease lp: the mtime of a
// file written there just now. Judging a lease's age against it, rather
// than against this host's clock, keeps a holder whose clock is behind
// (or a checker whose clock is ahead) from losing a live lease.
func serverNow(lp string) (time.Time, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	probe := lp + ".now-" + hex.EncodeToString(b[:])
	f, err := os.OpenFile(probe, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return time.Time{}, err
	}
	defer os.Remove(probe)
	_, werr := f.Write([]byte{'\n'})
	cerr := f.Close() // flushed: on NFS the mtime is now the server's
	st, err := os.Stat(probe)
	if err != nil || werr != nil || cerr != nil {
		return time.Time{}, errors.Join(err, werr, cerr)
	}
	return st.ModTime(), nil
}

func inode(st fs.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Ino
	}
	return 0
}
