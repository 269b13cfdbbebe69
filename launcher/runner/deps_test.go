package runner

import (
	"os/exec"
	"strings"
	"testing"
)

// TestReadsTheRunDirectoryThroughRundir: the runner reads the driver's and
// the bench step's files through launcher/rundir, never by importing the
// packages that write them.
func TestReadsTheRunDirectoryThroughRundir(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasSuffix(dep, "/launcher/driver") || strings.HasSuffix(dep, "/launcher/steps") {
			t.Errorf("launcher/runner depends on %s", dep)
		}
	}
}
