package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

func TestExitCode(t *testing.T) {
	live := context.Background()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	frontend := fmt.Errorf("point 1: %w", &FrontendError{URL: "http://h:8000", Err: errors.New("connection refused")})
	plain := errors.New("point 1: 3 of 10 requests failed")
	sigterm := func() exitcode.Code { return exitcode.Terminated }
	sigint := func() exitcode.Code { return exitcode.Interrupted }
	for _, tt := range []struct {
		name        string
		ctx         context.Context
		err         error
		interrupted func() exitcode.Code
		want        exitcode.Code
	}{
		{"the step's own", live, plain, sigint, exitcode.Benchmark},
		{"a dead frontend is the engine's", live, frontend, sigint, exitcode.Engine},
		{"SIGINT", done, plain, sigint, exitcode.Interrupted},
		{"SIGTERM over a dead frontend", done, frontend, sigterm, exitcode.Terminated},
		{"no signal named is 143", done, plain, nil, exitcode.Terminated},
	} {
		if got := ExitCode(tt.ctx, tt.err, exitcode.Benchmark, tt.interrupted); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// TestStepCommandsRefuse: both steps need --plan and --frontend, and a
// plan that reads; each refusal exits 2 naming it.
func TestStepCommandsRefuse(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "plan.json")
	for _, tt := range []struct {
		name, plan, frontend, want string
	}{
		{"no plan", "", "http://h:8000", "--plan is required"},
		{"no frontend", missing, "", "--frontend is required"},
		{"neither", "", "", "--plan is required"},
		{"no such plan", missing, "http://h:8000", "plan.json"},
	} {
		for cmd, err := range map[string]error{
			"bench": BenchCommand(context.Background(), BenchCommandOptions{PlanFile: tt.plan, BenchOptions: BenchOptions{Frontend: tt.frontend, Out: io.Discard}}),
			"eval":  EvalCommand(context.Background(), EvalCommandOptions{PlanFile: tt.plan, EvalOptions: EvalOptions{Frontend: tt.frontend, Out: io.Discard}}),
		} {
			if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s %s: %v (exit %d), want exit 2 with %q", cmd, tt.name, err, exitcode.Of(err), tt.want)
			}
		}
	}
}
