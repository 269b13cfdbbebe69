package driver

import (
	"os"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// statusFile serialises status writes.
type statusFile struct {
	mu   sync.Mutex
	path string
	s    rundir.Status
}

func (f *statusFile) update(fn func(*rundir.Status)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(&f.s)
	f.s.Updated = time.Now().UTC()
	if err := rundir.WriteStatus(f.path, f.s); err != nil {
		// A status file is a convenience for watchers; the run goes on.
		os.Stderr.WriteString("slurmbench driver: " + err.Error() + "\n")
	}
}
