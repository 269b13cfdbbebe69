package report

import (
	"strings"
	"testing"
)

// A container that did not start shows enroot's own log under the first
// error, in the terminal summary and in the Markdown one.
func TestSummaryShowsEnrootLog(t *testing.T) {
	s := Summary{Name: "r", Outcome: "failed", Class: "container_runtime", ExitCode: 4,
		FirstError: "slurmstepd-node1: error: pyxis: container start failed with error code: 1",
		RuntimeLog: []string{"enroot-switchroot: failed to execute: /bin/sh: No such file or directory"}}
	for name, out := range map[string]string{"text": s.Text(), "markdown": s.Markdown()} {
		i := strings.Index(out, "enroot log:")
		if i < 0 || !strings.Contains(out[i:], "enroot-switchroot: failed to execute: /bin/sh") {
			t.Errorf("%s summary lacks the enroot log:\n%s", name, out)
		}
	}
	s.RuntimeLog = nil
	if out := s.Text() + s.Markdown(); strings.Contains(out, "enroot log") {
		t.Errorf("an enroot log heading without a log:\n%s", out)
	}
}
