package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestWorkflowModes: with RUNNER_NAME set and nothing naming a recipe,
// run takes the point from the environment (a missing variable is named,
// exit 2, and job_event.json is still written); cleanup without --runner
// never fails the step; with --runner, or a flag naming a recipe, the
// operator's commands run as before.
func TestWorkflowModes(t *testing.T) {
	ws := t.TempDir()
	for _, k := range []string{"SLURMBENCH_PROFILE", "SLURM_REST_URL", "CONFIG_FILE", "SRT_RECIPE", "IMAGE"} {
		t.Setenv(k, "")
	}
	t.Setenv("RUNNER_NAME", "gb300-nv_07")
	t.Setenv("GITHUB_WORKSPACE", ws)
	tests := []struct {
		name     string
		args     []string
		want     exitcode.Code
		wantErr  string
		wantFile bool
	}{
		{"run from the environment", []string{"run"}, exitcode.Config, "required environment variables are not set: MODEL, MODEL_PREFIX, IMAGE, FRAMEWORK", true},
		{"run --from-env", []string{"run", "--from-env"}, exitcode.Config, "SRT_RECIPE", true},
		{"run naming a recipe is the operator's", []string{"run", "--recipe", "r.yaml"}, exitcode.Config, "--profile", false},
		{"cleanup in the workflow", []string{"cleanup"}, exitcode.OK, "warning: cleanup: no Slurm here", false},
		{"cleanup --runner is the operator's", []string{"cleanup", "--runner", "gb300-nv_07"}, exitcode.Config, "no slurmrestd URL", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_ = os.Remove(filepath.Join(ws, "job_event.json"))
			_, errOut, code := runCLI(t, tt.args...)
			if code != tt.want || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d, want %d; stderr %q lacks %q", code, tt.want, errOut, tt.wantErr)
			}
			b, err := os.ReadFile(filepath.Join(ws, "job_event.json"))
			if (err == nil) != tt.wantFile {
				t.Fatalf("job_event.json: %v, want written %v", err, tt.wantFile)
			}
			if tt.wantFile {
				var ev map[string]any
				if err := json.Unmarshal(b, &ev); err != nil || ev["outcome"] != "failure" || ev["runner"] != "gb300-nv_07" {
					t.Errorf("job_event.json %s, %v", b, err)
				}
			}
		})
	}
}
