package matrix

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/slurmbench/slurmbench/launcher/login/webreport"
)

// groupRun is how long one allocation was held and which job it was.
type groupRun struct {
	g    Group
	job  string
	held time.Duration
}

// groupLog collects the allocations a matrix run held, for its page.
type groupLog struct {
	mu   sync.Mutex
	runs []groupRun
}

func (l *groupLog) add(r groupRun) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.runs = append(l.runs, r)
}

// writeMatrixReport writes stage/report.html: every point that left
// results, grouped by the allocation that served it, the GPU-hours each
// allocation held, and the setup GPU-hours sharing saved (each point after
// the first in an allocation would have held its GPUs for its own bring-up:
// the group's bring-up time, spread evenly, is that estimate).
func writeMatrixReport(w io.Writer, stage string, m *Matrix, log *groupLog) {
	page := webreport.Matrix{Title: "matrix: " + filepath.Base(stage)}
	log.mu.Lock()
	runs := append([]groupRun(nil), log.runs...)
	log.mu.Unlock()
	for i, r := range runs {
		gpus := r.g.GPUs()
		hours := float64(gpus) * r.held.Hours()
		name := fmt.Sprintf("%d of %d: %s", i+1, len(runs), r.g.Points[0].Key)
		page.Groups = append(page.Groups, webreport.MatrixGroup{Name: name, Job: r.job, Points: len(r.g.Points), GPUs: gpus, GPUHours: hours})
		if n := len(r.g.Points); n > 1 {
			page.SavedGPUHours += hours / float64(n) * float64(n-1) * setupShare
		}
		for _, p := range r.g.Points {
			page.Runs = append(page.Runs, webreport.MatrixRun{Name: p.Name(), Dir: filepath.Join(stage, StageDirName(p)), Allocation: fmt.Sprintf("allocation %d, job %s", i+1, r.job)})
		}
	}
	path := filepath.Join(stage, webreport.PageName)
	if err := webreport.WriteMatrix(path, page); err != nil {
		fmt.Fprintf(w, "matrix: %v\n", err)
		return
	}
	fmt.Fprintf(w, "matrix: report %s (%d points in %d allocations)\n", path, len(page.Runs), len(page.Groups))
}

// setupShare is the stated default share of a point's allocation time that
// is setup (queue, import, engine start) and not measurement, until a run
// records the split: what sharing an allocation saves per extra point.
const setupShare = 0.5
