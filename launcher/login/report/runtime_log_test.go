package report

import (
	"strings"
	"testing"
)

// A container that did not start shows the runtime's own log (here
// enroot's) under the first error, in the terminal summary and in the
// Markdown one.
func TestSummaryShowsRuntimeLog(t *testing.T) {
	s := Summary{Name: "r", Outcome: "failed", Class: "container_runtime", ExitCode: 4,
		FirstError: "slurmstepd-node1: error: pyxis: container start failed with error code: 1",
		RuntimeLog: []string{"enroot-switchroot: failed to execute: /bin/sh: No such file or directory"}}
	for name, out := range map[string]string{"text": s.Text(), "markdown": s.Markdown()} {
		i := strings.Index(out, "runtime log:")
		if i < 0 || !strings.Contains(out[i:], "enroot-switchroot: failed to execute: /bin/sh") {
			t.Errorf("%s summary lacks the runtime log:\n%s", name, out)
		}
	}
	s.RuntimeLog = nil
	if out := s.Text() + s.Markdown(); strings.Contains(out, "runtime log") {
		t.Errorf("a runtime log heading without a log:\n%s", out)
	}
}
