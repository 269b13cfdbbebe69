package driver

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/plan"
)

// TestSequentialStart: a worker with StartAfter starts only once the
// worker it names answers its readiness probe with 200, and the run goes
// on; a worker that never gets ready fails the run at the health deadline.
func TestSequentialStart(t *testing.T) {
	for _, tc := range []struct {
		name      string
		readyIn   time.Duration // -1: never
		code      exitcode.Code
		w1Started bool
	}{
		{"waits then starts", 1500 * time.Millisecond, exitcode.OK, true},
		{"never ready", -1, exitcode.Health, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var readyAt atomic.Int64
			start := time.Now()
			probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.readyIn < 0 || time.Since(start) < tc.readyIn {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				readyAt.CompareAndSwap(0, time.Now().UnixNano())
			}))
			defer probe.Close()
			_, ps, _ := net.SplitHostPort(probe.Listener.Addr().String())
			port, _ := strconv.Atoi(ps)

			front := startFrontend(t)
			front.prefill.Store(2)
			front.decode.Store(1)
			sleep := []string{"/bin/sleep", "60"}
			pl := runPlan(t, front, sleep, []string{"/bin/true"})
			w1 := pl.Processes[0]
			w1.Name, w1.Worker, w1.Log = "prefill_w1", 1, filepath.Join(pl.RunDir, "logs", "prefill_w1.log")
			w1.StartAfter = []string{"prefill_w0"}
			pl.Processes[0].Ready = &plan.Probe{Node: 0, Port: port, Path: "/health"}
			pl.Processes = append(pl.Processes[:1], append([]plan.Process{w1}, pl.Processes[1:]...)...)
			pl.Health.Prefill, pl.Health.MaxAttempts, pl.Health.IntervalSeconds = 2, 3, 1
			if err := pl.Validate(); err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(pl)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(pl.PlanFile, data, 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res := runDriver(t, ctx, pl)
			if res.ExitCode != tc.code {
				t.Fatalf("exit %d, want %d: %s", res.ExitCode, tc.code, res.Outcome.Message)
			}
			fi, err := os.Stat(pl.Layout.StepSpec("prefill_w1"))
			if started := err == nil; started != tc.w1Started {
				t.Fatalf("prefill_w1 started %v, want %v", started, tc.w1Started)
			}
			// File times come from the kernel's coarse clock: allow a tick.
			if tc.w1Started && (readyAt.Load() == 0 || fi.ModTime().Before(start.Add(tc.readyIn-50*time.Millisecond))) {
				t.Errorf("prefill_w1 started at %v, before prefill_w0 could be ready (%v after %v)", fi.ModTime(), tc.readyIn, start)
			}
		})
	}
}
