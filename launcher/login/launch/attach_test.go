package launch

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// attachProfile writes a profile whose runs_dir is a fresh directory
// holding one run directory, "have-1" (a plan file), and one directory
// without a plan, "empty-1".
func attachProfile(t *testing.T) (profilePath, runsDir string) {
	t.Helper()
	dir := t.TempDir()
	runsDir = filepath.Join(dir, "runs")
	for _, d := range []string{"have-1", "empty-1"} {
		if err := os.MkdirAll(filepath.Join(runsDir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(rundir.PlanPath(filepath.Join(runsDir, "have-1")), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ATTACH_TEST_JWT", "tok")
	profilePath = filepath.Join(dir, "profile.toml")
	text := "[slurm]\nrest_url = \"http://127.0.0.1:1\"\npartition = \"debug\"\ngpus_per_node = 4\ntoken_env = \"ATTACH_TEST_JWT\"\n[paths]\nruns_dir = \"runs\"\nsquash_dir = \"squash\"\n"
	if err := os.WriteFile(profilePath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return profilePath, runsDir
}

// TestFindRunRefusals: the job or run attach and logs follow is named by
// exactly one JOBID or a --run-id that rundir's rule accepts and that
// names a run directory; anything else is a config error naming what is
// wrong, before slurmrestd is asked.
func TestFindRunRefusals(t *testing.T) {
	prof, _ := attachProfile(t)
	for _, tt := range []struct {
		name  string
		args  []string
		runID string
		want  string
	}{
		{"no JOBID", nil, "", "give one JOBID"},
		{"two JOBIDs", []string{"1", "2"}, "", "give one JOBID"},
		{"not a job id", []string{"12x"}, "", `JOBID "12x"`},
		{"both", []string{"1"}, "have-1", "give a JOBID or --run-id, not both"},
		{"a path, not an id", nil, "../have-1", `--run-id "../have-1": not a run id`},
		{"no such run", nil, "gone-1", `--run-id "gone-1"`},
		{"no plan in it", nil, "empty-1", `--run-id "empty-1"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Attach(context.Background(), AttachOptions{IO: IO{Stdout: io.Discard, Stderr: io.Discard}, Profile: prof, Args: tt.args, RunID: tt.runID})
			if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("attach: %v (exit %d), want exit 2 with %q", err, exitcode.Of(err), tt.want)
			}
			if tt.runID != "" {
				return
			}
			err = Logs(context.Background(), LogsOptions{Stdout: io.Discard, Profile: prof, Args: tt.args})
			if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("logs: %v (exit %d), want exit 2 with %q", err, exitcode.Of(err), tt.want)
			}
		})
	}
}

// TestRunOfID: a --run-id turns into <runs_dir>/<id> through rundir's rule.
func TestRunOfID(t *testing.T) {
	prof, runsDir := attachProfile(t)
	client, dir, err := runOfID(context.Background(), prof, nil, "have-1")
	if err != nil || client == nil {
		t.Fatalf("runOfID: %v (client %v)", err, client)
	}
	if want := filepath.Join(runsDir, "have-1"); dir != want {
		t.Errorf("dir %s, want %s", dir, want)
	}
}
