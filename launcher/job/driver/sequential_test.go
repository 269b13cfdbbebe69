package driver

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestWorkersWaitForAfter: a worker that names another in After starts
// only once that one's probe answers 200; a probe that never does, or a
// waited-for worker that exits, ends the run before the later worker
// starts.
func TestWorkersWaitForAfter(t *testing.T) {
	tests := []struct {
		name        string
		failures    int32 // answers before the first 200; -1 = never
		prefill     []string
		code        exitcode.Code
		class       diagnose.Class
		phase       rundir.Phase
		decodeStart bool
	}{
		{"serves after two tries", 2, []string{"/bin/sleep", "60"}, exitcode.OK, "", rundir.PhaseDone, true},
		{"never serves", -1, []string{"/bin/sleep", "60"}, exitcode.Health, diagnose.HealthDeadline, rundir.PhaseWorkers, false},
		{"exits while waited for", -1, []string{"/bin/false"}, exitcode.Engine, diagnose.ExitedBeforeHealthy, rundir.PhaseWorkers, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			var mu sync.Mutex
			var servedAt time.Time
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n := calls.Add(1)
				if r.URL.Path != "/health" || tt.failures < 0 || n <= tt.failures {
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				mu.Lock()
				if servedAt.IsZero() {
					servedAt = time.Now().UTC()
				}
				mu.Unlock()
			}))
			defer srv.Close()
			_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
			probePort, _ := strconv.Atoi(port)

			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(1)
			pl := runPlan(t, front, []string{"/bin/sleep", "60"}, []string{"/bin/true"})
			pl.Health.MaxAttempts = 4
			for i := range pl.Processes {
				p := &pl.Processes[i]
				switch p.Name {
				case "prefill_w0":
					p.Argv = tt.prefill
					p.Ready = &plan.Probe{Node: 0, Port: probePort, Path: "/health"}
				case "decode_w0":
					p.After = []string{"prefill_w0"}
				}
			}
			writePlan(t, pl)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res := runDriver(t, ctx, pl)
			o := res.Outcome
			if res.ExitCode != tt.code || o.Class != tt.class || o.Phase != tt.phase {
				t.Errorf("exit %d, class %q, phase %s; want %d, %q, %s: %s", res.ExitCode, o.Class, o.Phase, tt.code, tt.class, tt.phase, o.Message)
			}
			if tt.code != exitcode.OK && o.Process != "prefill_w0" {
				t.Errorf("outcome names %q, want prefill_w0", o.Process)
			}
			mu.Lock()
			served := servedAt
			mu.Unlock()
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range st.Processes {
				if ps.Name != "decode_w0" {
					continue
				}
				switch {
				case !tt.decodeStart && ps.Started != nil:
					t.Errorf("decode_w0 started although prefill_w0 never served")
				case tt.decodeStart && (ps.Started == nil || ps.Started.Before(served)):
					t.Errorf("decode_w0 started at %v, before prefill_w0 served at %v", ps.Started, served)
				}
			}
			if tt.decodeStart && calls.Load() != tt.failures+1 {
				t.Errorf("%d probes, want %d", calls.Load(), tt.failures+1)
			}
		})
	}
}
