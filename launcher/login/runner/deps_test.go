package runner

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReadsTheRunDirectoryThroughRundir: the runner reads the driver's and
// the bench step's files through rundir, never by importing the
// packages that write them.
func TestReadsTheRunDirectoryThroughRundir(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "/job/driver") || strings.HasSuffix(dep, "/job/steps") {
			t.Errorf("login/runner depends on %s", dep)
		}
	}
}
