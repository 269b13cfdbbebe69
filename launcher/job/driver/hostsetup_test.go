package driver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestHostSetupRunsFirstAndTearsDown: host_setup steps run on the bare
// host before anything else starts; a node that fails, or outlasts
// timeout_seconds, ends the run as host_setup_failed naming it (unless
// ignore_failure); the teardown runs after every step stopped, whether
// the run succeeded or not, and never changes its outcome.
func TestHostSetupRunsFirstAndTearsDown(t *testing.T) {
	tests := []struct {
		name            string
		setup, teardown string // shell scripts ("" : no such step)
		timeout         int
		ignore          bool
		code            exitcode.Code
		class           diagnose.Class
		phase           rundir.Phase
		message         string
		workersRun      bool
	}{
		{name: "succeeds", setup: "echo locked > \"$MARK.setup\"\n", teardown: "echo reset > \"$MARK.teardown\"\n",
			code: exitcode.OK, phase: rundir.PhaseDone, workersRun: true},
		{name: "fails", setup: "echo 'sudo: a password is required'\nexit 3\n", teardown: "echo reset > \"$MARK.teardown\"\n",
			code: exitcode.Engine, class: diagnose.HostSetupFailed, phase: rundir.PhaseHostSetup,
			message: "host_setup failed on 1 of 1 node(s): node1 (exit 3; "},
		{name: "fails, ignored", setup: "exit 3\n", ignore: true, code: exitcode.OK, phase: rundir.PhaseDone, workersRun: true},
		{name: "times out", setup: "exec /bin/sleep 60\n", timeout: 1, teardown: "echo reset > \"$MARK.teardown\"\n",
			code: exitcode.Engine, class: diagnose.HostSetupFailed, phase: rundir.PhaseHostSetup, message: "node1 (timed out after 1s; "},
		{name: "a teardown that fails changes nothing", setup: "true\n", teardown: "echo reset > \"$MARK.teardown\"\nexit 9\n",
			code: exitcode.OK, phase: rundir.PhaseDone, workersRun: true},
		{name: "a teardown alone", teardown: "echo reset > \"$MARK.teardown\"\n", code: exitcode.OK, phase: rundir.PhaseDone, workersRun: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(1)
			pl := runPlan(t, front, []string{"/bin/sleep", "60"}, []string{"/bin/true"})
			dir := t.TempDir()
			mark := filepath.Join(dir, "mark")
			host := func(role plan.Role, script string) plan.Process {
				path := filepath.Join(dir, string(role)+".sh")
				if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
				name := string(role) + "_0"
				return plan.Process{Name: name, Role: role, Nodes: []int{0}, Argv: []string{"/bin/sh", path},
					Env: map[string]string{"MARK": mark}, Log: filepath.Join(pl.RunDir, "logs", name+".log")}
			}
			if tt.setup != "" {
				pl.Processes = append(pl.Processes, host(plan.RoleHostSetup, tt.setup))
			}
			if tt.teardown != "" {
				pl.Processes = append(pl.Processes, host(plan.RoleHostTeardown, tt.teardown))
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 30
			}
			pl.HostSetup = &plan.HostSetup{TimeoutSeconds: timeout, IgnoreFailure: tt.ignore, Nodes: "all", Source: "recipe host_setup"}
			if err := pl.Validate(); err != nil {
				t.Fatal(err)
			}
			writePlan(t, pl)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res := runDriver(t, ctx, pl)
			o := res.Outcome
			if res.ExitCode != tt.code || o.Class != tt.class || o.Phase != tt.phase || !strings.Contains(o.Message, tt.message) {
				t.Errorf("exit %d, class %q, phase %s, message %q; want exit %d, class %q, phase %s, message with %q",
					res.ExitCode, o.Class, o.Phase, o.Message, tt.code, tt.class, tt.phase, tt.message)
			}
			if tt.code != exitcode.OK && (o.Process != "host_setup_0" || o.Log != filepath.Join(pl.RunDir, "logs", "host_setup_0.log")) {
				t.Errorf("outcome names %q, log %q; want host_setup_0 and its log", o.Process, o.Log)
			}
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			at := map[string]rundir.ProcessStatus{}
			for _, ps := range st.Processes {
				at[ps.Name] = ps
			}
			setup, worker, bench, down := at["host_setup_0"], at["prefill_w0"], at["benchmark"], at["host_teardown_0"]
			switch {
			case tt.workersRun && (worker.Started == nil || tt.setup != "" && (setup.Ended == nil || worker.Started.Before(*setup.Ended))):
				t.Errorf("the worker started at %v, the host setup ended at %v: want the worker after it", worker.Started, setup.Ended)
			case !tt.workersRun && worker.Started != nil:
				t.Errorf("a worker started although host_setup failed")
			}
			if tt.teardown == "" {
				return
			}
			if _, err := os.Stat(mark + ".teardown"); err != nil || down.Started == nil {
				t.Fatalf("the teardown did not run: %v (status %+v)", err, down)
			}
			if bench.Ended != nil && down.Started.Before(*bench.Ended) {
				t.Errorf("the teardown started at %v, before the benchmark ended at %v", down.Started, bench.Ended)
			}
		})
	}
}
