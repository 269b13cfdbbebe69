package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestDemoFromLoneClone is a new user's first command: `make demo` in a
// fresh clone that has no ../shared beside it (the eval's GSM8K data is
// built into the binary). It clones what is committed, so it proves the
// repository, not the working tree.
func TestDemoFromLoneClone(t *testing.T) {
	c := setup(t)
	if _, err := exec.LookPath("make"); err != nil {
		t.Skipf("no make: %v", err)
	}
	parent := t.TempDir()
	clone := filepath.Join(parent, "slurmbench")
	if out, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", c.repo, clone).CombinedOutput(); err != nil {
		t.Skipf("cannot clone %s (not a git checkout?): %v\n%s", c.repo, err, out)
	}
	if _, err := os.Stat(filepath.Join(parent, "shared")); err == nil {
		t.Fatal("the clone has a ../shared")
	}
	t0 := time.Now()
	cmd := exec.Command("make", "demo")
	cmd.Dir = clone
	cmd.Env = append(os.Environ(), "SLURM_REST_URL="+c.Cluster.RestURL)
	out, err := cmd.CombinedOutput()
	t.Logf("make demo in a lone clone: %v in %s", err, time.Since(t0).Round(time.Second))
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, out)
	}
	for _, want := range []string{"succeeded", "gsm8k"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("make demo output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "shared/data") {
		t.Errorf("make demo mentions ../shared's data:\n%s", out)
	}
	staged, _ := filepath.Glob(filepath.Join(clone, "demo-out", "*.json"))
	if len(staged) == 0 {
		t.Errorf("nothing staged in demo-out/:\n%s", out)
	}
	// The demo runs the production container path (pyxis, the real enroot,
	// the image from the cluster's registry): its manifest names the digest
	// the registry holds for the image it pushed.
	m := demoImageLine.FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("make demo did not say which image it pushed:\n%s", out)
	}
	if got := stagedManifest(t, filepath.Join(clone, "demo-out")).Provenance.ImageDigest; got != m[1] {
		t.Errorf("staged manifest image_digest %q, want the registry's %s", got, m[1])
	}
}

// demoImageLine is scripts/demo.sh's line naming the image it pushed.
var demoImageLine = regexp.MustCompile(`(?m)^demo: mock-engine image \S+@(sha256:[0-9a-f]{64})$`)
