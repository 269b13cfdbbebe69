package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClusterScriptsKeepTokenOffArgv: the test cluster's own scripts pass
// the slurmrestd token by environment or pipe, never as an argument, which
// any user on the host can read in /proc (TestSecrets once caught up.sh's
// readiness ping doing so while make demo ran beside it). timeout and curl,
// the commands the scripts hand a request to, are wrapped to record their
// argv.
func TestClusterScriptsKeepTokenOffArgv(t *testing.T) {
	t.Parallel()
	c := setup(t)
	bin := t.TempDir()
	argvLog := filepath.Join(bin, "argv.log")
	for _, name := range []string{"timeout", "curl"} {
		real, err := exec.LookPath(name)
		if err != nil {
			if name == "curl" {
				continue // smoke.sh's part is checked only where curl is
			}
			t.Fatal(err)
		}
		wrapper := "#!/bin/sh\nprintf '%s\\n' \"" + name + " $*\" >> '" + argvLog + "'\nexec '" + real + "' \"$@\"\n"
		if err := os.WriteFile(filepath.Join(bin, name), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "SLURM_JWT="+c.Cluster.Token)
	scripts := []string{`. testcluster/lib.sh && rest_ping_up "$SLURM_JWT"`}
	if _, err := exec.LookPath("curl"); err == nil {
		scripts = append(scripts, "bash testcluster/smoke.sh")
	}
	for _, script := range scripts {
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = c.repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", script, err, out)
		}
	}
	logged, err := os.ReadFile(argvLog)
	if err != nil || !strings.Contains(string(logged), "timeout ") {
		t.Fatalf("the wrapped commands never ran (%v): the test is vacuous", err)
	}
	if strings.Contains(string(logged), c.Cluster.Token) || jwtPattern.Match(logged) {
		t.Errorf("a token in an argv:\n%s", jwtPattern.ReplaceAllString(string(logged), "<JWT>"))
	}
}
