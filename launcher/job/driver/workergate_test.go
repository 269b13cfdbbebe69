package driver

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestWorkerGate: behind a router that lists workers by URL, the run
// benchmarks only once every listed worker's /health answers 200 as well;
// a worker that never does fails the run as a health deadline, though the
// router's counts passed.
func TestWorkerGate(t *testing.T) {
	sleep := []string{"/bin/sleep", "60"}
	cases := []struct {
		name    string
		status  []int // each worker endpoint's answer
		code    exitcode.Code
		class   diagnose.Class
		phase   rundir.Phase
		benched bool
	}{
		{"every worker answers", []int{200, 200}, exitcode.OK, "", rundir.PhaseDone, true},
		{"one worker never answers", []int{200, 503}, exitcode.Health, diagnose.HealthDeadline, rundir.PhaseHealth, false},
		{"no worker endpoints listed", nil, exitcode.OK, "", rundir.PhaseDone, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(1)
			marker := t.TempDir() + "/benched"
			pl := runPlan(t, front, sleep, []string{"/bin/touch", marker})
			for _, code := range tc.status {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.URL.Path != "/health" {
						http.NotFound(w, r)
						return
					}
					w.WriteHeader(code)
				}))
				t.Cleanup(srv.Close)
				_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
				p, _ := strconv.Atoi(port)
				pl.Health.Workers = append(pl.Health.Workers, plan.Probe{Node: 0, Port: p, Path: "/health"})
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
			o := res.Outcome
			if res.ExitCode != tc.code || o.Class != tc.class || o.Phase != tc.phase {
				t.Errorf("exit %d, %s in %s; want exit %d, %s in %s\n%s", res.ExitCode, o.Class, o.Phase, tc.code, tc.class, tc.phase, o.Message)
			}
			if _, err := os.Stat(marker); (err == nil) != tc.benched {
				t.Errorf("benchmark ran: %v, want %v", err == nil, tc.benched)
			}
		})
	}
}
