package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// serviceScript copies testdata/services/slow-ready.sh where the nodes see
// it (the stand-in enroot cannot mount) and returns its path and a marker
// directory the cluster's user may write.
func (c *cluster) serviceScript(t *testing.T, name string) (script, markers string) {
	t.Helper()
	dir := filepath.Join(c.Root, "workspaces", name)
	markers = filepath.Join(dir, "markers")
	if err := os.MkdirAll(markers, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o777)
	_ = os.Chmod(markers, 0o777)
	src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "services", "slow-ready.sh"))
	if err != nil {
		t.Fatal(err)
	}
	script = filepath.Join(dir, "slow-ready.sh")
	if err := os.WriteFile(script, src, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(dir)
		}
	})
	return script, markers
}

// TestServicesBeforeWorkers: a recipe's generic services run end to end on
// the test cluster. The before_workers service (InferenceX's UMBP shape:
// placement prefill, a preamble, readiness by a log pattern) runs one
// instance per prefill node, and no worker starts before both logged the
// pattern; the after_frontend service (the generic default: head node, no
// probe, not critical) starts after the health gate and its exit does not
// fail the run. The point's results are staged as without services.
func TestServicesBeforeWorkers(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-services")
	script, markers := c.serviceScript(t, name)
	// A slow first token keeps the benchmark running (two waves of 4 s)
	// long after the sidecar's srun step has started and exited: its exit
	// is noted before the job ends, however loaded the machine.
	rec := mockRecipe{Name: name, TTFT: "4s"}.V2() + `services:
  - name: umbp
    type: generic
    placement:
      node: prefill
    start: before_workers
    critical: true
    inherit_discovery_env: false
    command: [bash, ` + script + `, "umbp-{node_id}"]
    env:
      READY_AFTER: "3"
      MARKER_DIR: ` + markers + `
    preamble: |
      export PREAMBLE_RAN=yes
    readiness:
      log:
        pattern: host memory registered for GPU access
      timeout_seconds: 60
      interval_seconds: 1
  - name: sidecar
    command: ["false"]
`
	r := c.prepare(t, runOpts{name: name, recipe: rec})
	r.start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	if got := stagedResults(t, r.stage); len(got) != 1 {
		t.Errorf("staged results %v, want the one point", got)
	}
	st, err := rundir.ReadStatus(rundir.New(r.runDir()).Status)
	if err != nil {
		t.Fatal(err)
	}
	started := map[string]time.Time{}
	for _, p := range st.Processes {
		if p.Started != nil {
			started[p.Name] = *p.Started
		}
	}
	// Two one-node prefill workers: an instance on node 0 and on node 1.
	for _, inst := range []string{"0", "1"} {
		proc := "service_umbp_" + inst
		b, err := os.ReadFile(filepath.Join(markers, "umbp-"+inst+".ready"))
		if err != nil {
			t.Fatalf("%s never logged its pattern: %v\n%s", proc, err, r.output())
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		if err != nil {
			t.Fatal(err)
		}
		ready := time.Unix(0, int64(sec*1e9))
		if _, ok := started[proc]; !ok {
			t.Errorf("%s never started", proc)
		}
		for _, w := range []string{"prefill_w0", "prefill_w1", "decode_w0"} {
			if s, ok := started[w]; !ok || s.Before(ready) {
				t.Errorf("%s started at %v, before %s logged its readiness line at %v", w, s, proc, ready)
			}
		}
		log, err := os.ReadFile(filepath.Join(r.runDir(), "logs", proc+".log"))
		if err != nil || !strings.Contains(string(log), "preamble ran: yes") {
			t.Errorf("%s log (the preamble's export must reach the command): %s %v", proc, log, err)
		}
	}
	// The sidecar started after the gate; its exit 1 was noted, not fatal.
	if s, ok := started["service_sidecar"]; !ok || s.Before(started["frontend_0"]) {
		t.Errorf("service_sidecar started %v (frontend %v)", s, started["frontend_0"])
	}
	driverLog, _ := os.ReadFile(filepath.Join(r.runDir(), "logs", rundir.DriverLogName))
	for _, want := range []string{"service_umbp_0 ready (log ", "service_sidecar on ", "not critical: the run goes on"} {
		if !strings.Contains(string(driverLog)+r.output(), want) {
			t.Errorf("driver log lacks %q:\n%s", want, driverLog)
		}
	}
	r.removeOnPass()
}

// TestServiceNotReadyFailsRun: a before_workers service that exits before
// its log shows the pattern fails the run at once (no worker starts), with
// the service named in the outcome.
func TestServiceNotReadyFailsRun(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-service-dies")
	rec := mockRecipe{Name: name}.V2() + `services:
  - name: early
    start: before_workers
    command: ["false"]
    readiness:
      log:
        pattern: never printed
      timeout_seconds: 120
`
	r := c.prepare(t, runOpts{name: name, recipe: rec}).start()
	t0 := time.Now()
	if code := r.wait(5 * time.Minute); code != 7 {
		t.Fatalf("exit %d, want 7 (engine layer)\n%s", code, r.output())
	}
	o := r.outcome()
	if o.Process != "service_early" || !strings.Contains(o.Message, "before it was ready") {
		t.Errorf("outcome %+v", o)
	}
	st, _ := rundir.ReadStatus(rundir.New(r.runDir()).Status)
	for _, p := range st.Processes {
		if p.Role == "prefill" && p.Started != nil {
			t.Errorf("%s started although the service never became ready", p.Name)
		}
	}
	t.Logf("failed in %s", time.Since(t0).Round(time.Second))
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	r.removeOnPass()
}
