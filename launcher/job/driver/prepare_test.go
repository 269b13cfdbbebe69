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

// TestPrepareRunsBeforeWorkers: prepare steps (the model pre-download,
// the model staging) run together, each to its exit, after infra and
// before any worker starts; a failure, or a step outlasting
// PrepareTimeout, ends the run before the workers start, classified from
// the step's log.
func TestPrepareRunsBeforeWorkers(t *testing.T) {
	tests := []struct {
		name    string
		script  string // the prepare step's program, a shell script
		timeout time.Duration
		code    exitcode.Code
		class   diagnose.Class
		phase   rundir.Phase
		message string
	}{
		{name: "succeeds", script: "echo 'Model already cached'\n", code: exitcode.OK, phase: rundir.PhaseDone},
		{name: "fails", script: "echo 'Downloading model...'\nexit 3\n", code: exitcode.Engine, class: diagnose.PrepareFailed,
			phase: rundir.PhasePrepare, message: "exited with code 3 before any worker started"},
		{name: "model not found", script: "echo 'huggingface_hub.errors.RepositoryNotFoundError: 401 Client Error. Repository Not Found for url'\nexit 1\n",
			code: exitcode.Engine, class: diagnose.ModelMissing, phase: rundir.PhasePrepare, message: "exited with code 1"},
		{name: "times out", script: "exec /bin/sleep 60\n", timeout: 300 * time.Millisecond, code: exitcode.Engine, class: diagnose.PrepareFailed,
			phase: rundir.PhasePrepare, message: "did not finish within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(1)
			pl := runPlan(t, front, []string{"/bin/sleep", "60"}, []string{"/bin/true"})
			script := filepath.Join(t.TempDir(), "prepare.sh")
			if err := os.WriteFile(script, []byte(tt.script), 0o755); err != nil {
				t.Fatal(err)
			}
			prep := plan.Process{Name: "model_download", Role: plan.RolePrepare, Nodes: []int{0},
				Argv: []string{"/bin/sh", script}, Env: map[string]string{},
				Log: filepath.Join(pl.RunDir, "logs", "model_download.log"), Srun: plan.SrunOptions{NTasks: 1}}
			// A second step that succeeds after a moment runs alongside.
			other := filepath.Join(t.TempDir(), "other.sh")
			if err := os.WriteFile(other, []byte("/bin/sleep 0.2\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			second := prep
			second.Name, second.Argv, second.Log = "stage_model_0", []string{"/bin/sh", other}, filepath.Join(pl.RunDir, "logs", "stage_model_0.log")
			// After the workers in plan order: the driver runs them first by role.
			pl.Processes = append(pl.Processes, prep, second)
			writePlan(t, pl)

			self, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			t.Setenv(fakeSrunEnv, "1")
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := Run(ctx, Options{PlanFile: pl.PlanFile, JobID: "42", NodeList: "node1", Srun: self,
				Lookup: func(string) ([]string, error) { return []string{"127.0.0.1"}, nil }, StopGrace: time.Second,
				PrepareTimeout: tt.timeout, Log: testWriter{t}})
			if err != nil {
				t.Fatal(err)
			}
			o := res.Outcome
			if res.ExitCode != tt.code || o.Class != tt.class || o.Phase != tt.phase || !strings.Contains(o.Message, tt.message) {
				t.Errorf("exit %d, class %q, phase %s, message %q; want exit %d, class %q, phase %s, message with %q",
					res.ExitCode, o.Class, o.Phase, o.Message, tt.code, tt.class, tt.phase, tt.message)
			}
			if tt.code != exitcode.OK && (o.Process != "model_download" || o.Log != prep.Log) {
				t.Errorf("outcome names process %q, log %q; want model_download and its log", o.Process, o.Log)
			}
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			var prepEnd *time.Time
			for _, ps := range st.Processes {
				if ps.Role != string(plan.RolePrepare) {
					continue
				}
				if ps.Ended == nil {
					t.Fatalf("%s never ended: %+v", ps.Name, ps)
				}
				if prepEnd == nil || ps.Ended.After(*prepEnd) {
					prepEnd = ps.Ended
				}
			}
			if prepEnd == nil {
				t.Fatalf("no prepare step in the status: %+v", st.Processes)
			}
			for _, ps := range st.Processes {
				if ps.Role != string(plan.RolePrefill) && ps.Role != string(plan.RoleDecode) {
					continue
				}
				switch {
				case tt.code != exitcode.OK && ps.Started != nil:
					t.Errorf("%s started although the prepare step failed", ps.Name)
				case tt.code == exitcode.OK && (ps.Started == nil || ps.Started.Before(*prepEnd)):
					t.Errorf("%s started at %v, before model_download ended at %v", ps.Name, ps.Started, prepEnd)
				}
			}
		})
	}
}
