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

// TestFrontendWaitsForWorkers: a frontend that names workers in After
// (trtllm-serve's disaggregated orchestrator) starts only once each of
// them answers its probe with 200; a worker that never serves, or exits
// while waited for, ends the run in the workers' phase and the frontend
// never starts.
func TestFrontendWaitsForWorkers(t *testing.T) {
	tests := []struct {
		name       string
		failures   int32 // answers before the first 200; -1 = never
		decode     []string
		code       exitcode.Code
		class      diagnose.Class
		phase      rundir.Phase
		frontStart bool
	}{
		{"serves after two tries", 2, []string{"/bin/sleep", "60"}, exitcode.OK, "", rundir.PhaseDone, true},
		{"never serves", -1, []string{"/bin/sleep", "60"}, exitcode.Health, diagnose.HealthDeadline, rundir.PhaseFrontend, false},
		{"exits while waited for", -1, []string{"/bin/false"}, exitcode.Engine, diagnose.ExitedBeforeHealthy, rundir.PhaseFrontend, false},
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
			pl := runPlan(t, front, tt.decode, []string{"/bin/true"})
			pl.Health.MaxAttempts = 4
			for i := range pl.Processes {
				p := &pl.Processes[i]
				switch p.Name {
				case "prefill_w0":
					p.Ready = &plan.Probe{Node: 0, Port: probePort, Path: "/health", Status: 200}
				case "decode_w0":
					p.Ready = &plan.Probe{Node: 0, Port: probePort, Path: "/health", Status: 200}
				case "frontend_0":
					p.After = []string{"prefill_w0", "decode_w0"}
				}
			}
			if err := pl.Validate(); err != nil {
				t.Fatalf("plan: %v", err)
			}
			writePlan(t, pl)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res := runDriver(t, ctx, pl)
			o := res.Outcome
			if res.ExitCode != tt.code || o.Class != tt.class || o.Phase != tt.phase {
				t.Errorf("exit %d, class %q, phase %s; want %d, %q, %s: %s", res.ExitCode, o.Class, o.Phase, tt.code, tt.class, tt.phase, o.Message)
			}
			mu.Lock()
			served := servedAt
			mu.Unlock()
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range st.Processes {
				if ps.Name != "frontend_0" {
					continue
				}
				switch {
				case !tt.frontStart && ps.Started != nil:
					t.Errorf("frontend_0 started although the workers never served")
				case tt.frontStart && (ps.Started == nil || ps.Started.Before(served)):
					t.Errorf("frontend_0 started at %v, before the workers served at %v", ps.Started, served)
				}
			}
			if tt.frontStart && calls.Load() != tt.failures+2 {
				// prefill's probe answers 503 twice then 200; decode's at once.
				t.Errorf("%d probes, want %d", calls.Load(), tt.failures+2)
			}
		})
	}
}
