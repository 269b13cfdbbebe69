package launch

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestRunRefusesAnEmptyIn: --in given empty (an unset $SLURM_JOB_ID) is a
// config error before anything is read, never a plain submit.
func TestRunRefusesAnEmptyIn(t *testing.T) {
	for _, in := range []string{"", " ", "x1"} {
		err := Run(context.Background(), RunOptions{IO: IO{Stdout: io.Discard, Stderr: io.Discard}, In: &in,
			Plan: PlanOptions{Profile: "/nonexistent/profile.toml"}})
		if exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), "--in") || strings.Contains(err.Error(), "profile") {
			t.Errorf("--in %q: %v, want a config error about --in before the profile is read", in, err)
		}
	}
}
