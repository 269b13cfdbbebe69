package launch

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestRender: one plan shown three ways — JSON that parses, the human view
// ending with the job run would submit, and a brief view that keeps the
// job but leaves the processes' detail out.
func TestRender(t *testing.T) {
	po := PlanOptions{Profile: filepath.Join("..", "..", "..", "profiles", "testcluster.toml"), Recipe: filepath.Join("..", "..", "..", "examples", "mock-2p1d.yaml"),
		Point: -1, Warn: io.Discard}
	show := func(o RenderOptions) string {
		t.Helper()
		var out strings.Builder
		o.Stdout, o.Stderr, o.Plan = &out, io.Discard, po
		if err := Render(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	var pl struct {
		RunID string `json:"run_id"`
	}
	if js := show(RenderOptions{IO: IO{JSON: true}}); json.Unmarshal([]byte(js), &pl) != nil || pl.RunID == "" {
		t.Errorf("--json is not the plan:\n%.300s", js)
	}
	human, brief := show(RenderOptions{}), show(RenderOptions{Brief: true})
	for name, v := range map[string]string{"human": human, "brief": brief} {
		if !strings.Contains(v, "Slurm job (submitted through slurmrestd)") || !strings.Contains(v, "Job binary: ") ||
			!strings.Contains(v, "Transport: rest (slurm.transport is auto and slurm.rest_url is set") {
			t.Errorf("%s view lacks the job:\n%s", name, v)
		}
	}
	if len(brief) >= len(human) {
		t.Errorf("brief (%d bytes) is not shorter than the full view (%d bytes)", len(brief), len(human))
	}
}

// TestDoctorAndDownRefuse: both need a profile, and down one JOBID, each
// refusal a config error naming what is missing.
func TestDoctorAndDownRefuse(t *testing.T) {
	quiet := IO{Stdout: io.Discard, Stderr: io.Discard}
	prof := filepath.Join("..", "..", "..", "profiles", "testcluster.toml")
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"doctor without a profile", Doctor(context.Background(), DoctorOptions{IO: quiet}), "--profile: required"},
		{"down without a JOBID", Down(context.Background(), DownOptions{IO: quiet, Profile: prof}), "give one JOBID"},
		{"down with two", Down(context.Background(), DownOptions{IO: quiet, Profile: prof, Args: []string{"1", "2"}}), "give one JOBID"},
		{"down without a profile", Down(context.Background(), DownOptions{IO: quiet, Args: []string{"1"}}), "--profile: required"},
	} {
		if exitcode.Of(tt.err) != exitcode.Config || !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%s: %v (exit %d), want exit 2 with %q", tt.name, tt.err, exitcode.Of(tt.err), tt.want)
		}
	}
}
