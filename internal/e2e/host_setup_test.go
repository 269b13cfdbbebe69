package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/diagnose"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestHostSetup: a schema-2 recipe's host_setup runs on each worker node's
// bare host before anything else, as the job's user, its output in
// logs/host_setup_<node>.log, and its teardown after the run; a node whose
// commands fail ends the run before any worker starts, classified
// host_setup_failed, the teardown still run.
func TestHostSetup(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, tc := range []struct {
		name   string
		fail   bool
		code   int
		marked int // nodes whose setup wrote its mark
	}{
		{name: "runs", code: 0, marked: 3},
		{name: "fails", fail: true, code: 7, marked: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			name := uniqueName("e2e-host-setup")
			marks := filepath.Join(c.Root, "workspaces", name)
			if err := os.MkdirAll(marks, 0o777); err != nil {
				t.Fatal(err)
			}
			_ = os.Chmod(marks, 0o777)
			t.Cleanup(func() {
				if !t.Failed() {
					_ = os.RemoveAll(marks)
				}
			})
			last := `echo "setup on $(hostname) as $(id -un)" > ` + marks + `/setup.$(hostname)`
			if tc.fail {
				last = "echo 'sudo: a password is required' >&2; exit 4"
			}
			rec := mockRecipe{Name: name}.V2() + `host_setup:
  nodes: workers
  timeout_seconds: 120
  commands:
    - "cd ` + marks + `"
    - "test -w ."
    - "` + strings.ReplaceAll(last, `"`, `\"`) + `"
  teardown:
    - "echo down > ` + marks + `/teardown.$(hostname)"
`
			r := c.prepare(t, runOpts{name: name, recipe: rec})
			r.start()
			if code := r.wait(5 * time.Minute); code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, r.output())
			}
			r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
			setups, _ := filepath.Glob(filepath.Join(marks, "setup.*"))
			downs, _ := filepath.Glob(filepath.Join(marks, "teardown.*"))
			if len(setups) != tc.marked || len(downs) != 3 {
				t.Errorf("setup marks %v, teardown marks %v: want %d and 3 (one per worker node)", setups, downs, tc.marked)
			}
			dir := r.runDir()
			logs, _ := filepath.Glob(filepath.Join(dir, "logs", "host_setup_*.log"))
			sort.Strings(logs)
			if len(logs) != 3 {
				t.Errorf("host_setup logs %v, want one per worker node", logs)
			}
			o := r.outcome()
			if !tc.fail {
				if o.Result != rundir.Succeeded {
					t.Errorf("outcome %+v", o)
				}
				return
			}
			if o.Class != diagnose.HostSetupFailed || o.Phase != rundir.PhaseHostSetup || !strings.Contains(o.Message, "host_setup failed on 3 of 3 node(s)") ||
				!strings.Contains(strings.Join(o.LastLines, "\n"), "a password is required") {
				t.Errorf("outcome %+v", o)
			}
			st, err := rundir.ReadStatus(rundir.New(dir).Status)
			if err != nil {
				t.Fatal(err)
			}
			for _, ps := range st.Processes {
				if (ps.Role == "prefill" || ps.Role == "decode") && ps.Started != nil {
					t.Errorf("%s started although host_setup failed", ps.Name)
				}
			}
		})
	}
}
