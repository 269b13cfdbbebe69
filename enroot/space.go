package enroot

import (
	"fmt"
	"regexp"
	"syscall"
	"time"
)

// freeBytes is the space an unprivileged writer has left on dir's
// filesystem; -1 when it cannot be told.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * st.Bsize //nolint:gosec // block counts of a real filesystem fit an int64
}

// lowSpace is the free space below which a directory counts as having
// filled up during an import.
const lowSpace = 1 << 20

// spaceWatch records the lowest free space of some directories while an
// import runs.
type spaceWatch struct {
	done chan struct{}
	out  chan map[string]int64
}

// spacePoll is how often watchSpace looks.
const spacePoll = 100 * time.Millisecond

func watchSpace(dirs []string) *spaceWatch {
	w := &spaceWatch{done: make(chan struct{}), out: make(chan map[string]int64, 1)}
	go func() {
		low := map[string]int64{}
		look := func() {
			for _, d := range dirs {
				if f := freeBytes(d); f >= 0 {
					if old, ok := low[d]; !ok || f < old {
						low[d] = f
					}
				}
			}
		}
		look()
		t := time.NewTicker(spacePoll)
		defer t.Stop()
		for {
			select {
			case <-w.done:
				look()
				w.out <- low
				return
			case <-t.C:
				look()
			}
		}
	}()
	return w
}

// stop ends the watch and returns the lowest free space seen per directory.
func (w *spaceWatch) stop() map[string]int64 {
	close(w.done)
	return <-w.out
}

// noSpace is ENOSPC's message as tools print it: strerror's "No space
// left on device" (tar, mksquashfs, curl under enroot) or Go's lower-case
// "no space left on device" (skopeo, umoci).
var noSpace = regexp.MustCompile(`(?i)no space left on device`)

// spaceError names the directory an import ran out of space in and the
// space it needed, when that is why it failed; nil otherwise. free0 holds
// each directory's free bytes before the import, minFree the lowest seen
// while it ran. A directory seen nearly full counts; so does enroot's
// output saying "No space left on device" (tar, zstd, curl and mksquashfs
// write only into the import's private directories), which names the
// directory that came closest to full. cause is kept in the error.
func spaceError(dirs []string, free0, minFree map[string]int64, output, uri string, cause error) error {
	full := ""
	for _, d := range dirs {
		if m, ok := minFree[d]; ok && m < lowSpace {
			full = d
			break
		}
	}
	if full == "" && noSpace.MatchString(output) {
		full = dirs[0]
		for _, d := range dirs[1:] {
			if m, ok := minFree[d]; ok && m < minFree[full] {
				full = d
			}
		}
	}
	if full == "" {
		return nil
	}
	return fmt.Errorf("no space left in %s while importing %s: it needs more than the %s that were free there when the import started (%s free now); free some, or import into a directory with more room (paths.squash_dir; images import --scratch-dir for the unpacked layers): %w",
		full, uri, humanSize(free0[full]), humanSize(freeBytes(full)), cause)
}

func humanSize(n int64) string {
	switch {
	case n < 0:
		return "an unknown amount"
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// SpaceWatch watches the free space of some directories while an import
// runs, for importers other than enroot's (the OCI one, enroot/oci), so a
// full disk is reported the same way whichever tool filled it.
type SpaceWatch struct {
	dirs  []string
	free0 map[string]int64
	w     *spaceWatch
}

// WatchSpace starts watching dirs (the first is the one a full disk is
// blamed on when only the tool's output says so).
func WatchSpace(dirs ...string) *SpaceWatch {
	s := &SpaceWatch{dirs: dirs, free0: map[string]int64{}}
	for _, d := range dirs {
		s.free0[d] = freeBytes(d)
	}
	s.w = watchSpace(dirs)
	return s
}

// Stop ends the watch. When one of the directories filled up while it ran
// (or output says "No space left on device"), it returns an error naming
// the directory and the space it had, wrapping cause; otherwise nil.
func (s *SpaceWatch) Stop(output, what string, cause error) error {
	return spaceError(s.dirs, s.free0, s.w.stop(), output, what, cause)
}
