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

// TestImageStepsRunFirst: the per-node image steps (Image.PerNode) run
// together, each to its exit, before the prepare steps and every worker;
// one that fails ends the run as an image failure (exit 3) naming its
// node's step and log, and nothing else starts.
func TestImageStepsRunFirst(t *testing.T) {
	tests := []struct {
		name    string
		script  string // node 0's image step
		timeout time.Duration
		code    exitcode.Code
		class   diagnose.Class
		message string
	}{
		{name: "both nodes import", script: "echo 'node0: imported /raid/squash/x.sqsh'\n", code: exitcode.OK},
		{name: "one node fails", script: "echo 'enroot: manifest unknown'\nexit 3\n", code: exitcode.Image, class: diagnose.ImageImportFailed,
			message: "exited with code 3 before anything started on the nodes"},
		{name: "one node hangs", script: "exec /bin/sleep 60\n", timeout: 300 * time.Millisecond, code: exitcode.Image, class: diagnose.ImageImportFailed,
			message: "did not finish within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			front := startFrontend(t)
			front.prefill.Store(1)
			front.decode.Store(1)
			pl := runPlan(t, front, []string{"/bin/sleep", "60"}, []string{"/bin/true"})
			dir := t.TempDir()
			script := filepath.Join(dir, "import0.sh")
			if err := os.WriteFile(script, []byte(tt.script), 0o755); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(dir, "import1.sh")
			if err := os.WriteFile(other, []byte("/bin/sleep 0.2\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			img0 := plan.Process{Name: "import_image_0", Role: plan.RoleImage, Nodes: []int{0}, Argv: []string{"/bin/sh", script},
				Env: map[string]string{}, Log: filepath.Join(pl.RunDir, "logs", "import_image_0.log"), Srun: plan.SrunOptions{NTasks: 1}}
			img1 := img0
			img1.Name, img1.Argv, img1.Log = "import_image_1", []string{"/bin/sh", other}, filepath.Join(pl.RunDir, "logs", "import_image_1.log")
			prep := plan.Process{Name: "stage_model_0", Role: plan.RolePrepare, Nodes: []int{0}, Argv: []string{"/bin/true"},
				Env: map[string]string{}, Log: filepath.Join(pl.RunDir, "logs", "stage_model_0.log"), Srun: plan.SrunOptions{NTasks: 1}}
			// Last in plan order: the driver runs them first by role.
			pl.Processes = append(pl.Processes, prep, img0, img1)
			pl.Image.PerNode = true
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
			if res.ExitCode != tt.code || o.Class != tt.class || !strings.Contains(o.Message, tt.message) {
				t.Errorf("exit %d, class %q, message %q; want exit %d, class %q, message with %q", res.ExitCode, o.Class, o.Message, tt.code, tt.class, tt.message)
			}
			if tt.code != exitcode.OK && (o.Process != "import_image_0" || o.Log != img0.Log || o.Phase != rundir.PhasePrepare) {
				t.Errorf("outcome names process %q, log %q, phase %s; want import_image_0, its log, prepare", o.Process, o.Log, o.Phase)
			}
			st, err := rundir.ReadStatus(pl.Layout.Status)
			if err != nil {
				t.Fatal(err)
			}
			var imported *time.Time
			for _, ps := range st.Processes {
				if ps.Role == string(plan.RoleImage) && ps.Ended != nil && (imported == nil || ps.Ended.After(*imported)) {
					imported = ps.Ended
				}
			}
			if imported == nil {
				t.Fatalf("no image step ended: %+v", st.Processes)
			}
			for _, ps := range st.Processes {
				if ps.Role == string(plan.RoleImage) {
					continue
				}
				switch {
				case tt.code != exitcode.OK && ps.Started != nil:
					t.Errorf("%s started although an image step failed", ps.Name)
				case tt.code == exitcode.OK && ps.Started != nil && ps.Started.Before(*imported):
					t.Errorf("%s started at %v, before the image steps ended at %v", ps.Name, ps.Started, imported)
				case tt.code == exitcode.OK && ps.Started == nil && (ps.Role == string(plan.RolePrefill) || ps.Role == string(plan.RolePrepare)):
					t.Errorf("%s never started", ps.Name)
				}
			}
		})
	}
}
