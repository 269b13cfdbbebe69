package e2e

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"
)

// TestArm64DriverUnderQemu is GB300's shape on this x86_64 machine: a
// profile whose compute nodes are aarch64. run imports the image on a
// compute node (a one-node job), ships the linux/arm64 slurmbench into the
// run directory, and the test cluster's nodes run that driver, its exec
// shims, the mock engines and the benchmark through qemu-user (binfmt_misc;
// scripts/qemu-arm64.sh sets it up, make test runs it).
func TestArm64DriverUnderQemu(t *testing.T) {
	t.Parallel()
	c := setup(t)
	if runtime.GOARCH != "amd64" {
		t.Skip("the emulated architecture is aarch64 on an x86_64 host")
	}
	if err := exec.Command(filepath.Join(c.repo, "scripts", "qemu-arm64.sh"), "--check").Run(); err != nil {
		t.Skip("aarch64 binaries do not run here: run scripts/qemu-arm64.sh as root (make test does)")
	}
	binDir := t.TempDir()
	arm := filepath.Join(binDir, "linux-arm64", "slurmbench")
	build := exec.Command("go", "build", "-trimpath", "-o", arm, "./cmd/slurmbench")
	build.Dir = c.repo
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building for arm64: %v\n%s", err, out)
	}

	name := uniqueName("e2e-arm64")
	tag := name // a fresh image: imported on a compute node, not found cached
	r := c.prepare(t, runOpts{name: name, recipe: mockRecipe{Name: name}.String(),
		slurm: []string{`compute_arch = "aarch64"`}, args: []string{"--binary-dir", binDir},
		env: []string{"IMAGE=slurmbench/mock-engine:" + tag}}).start()
	code := r.wait(10 * time.Minute)
	t.Logf("exit %d in %s", code, r.ended.Sub(r.started).Round(time.Second))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, r.output())
	}
	shipped := filepath.Join(r.runDir(), "bin", "slurmbench")
	f, err := elf.Open(shipped)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 {
		t.Errorf("%s is %v, want aarch64", shipped, f.Machine)
	}
	if got := stagedResults(t, r.stage); len(got) == 0 {
		t.Errorf("nothing staged\n%s", r.output())
	}
	for _, want := range []string{"compute nodes are aarch64: the job runs " + arm, "importing on a compute node: job"} {
		if len(r.stderr.find(regexp.MustCompile(regexp.QuoteMeta(want)))) == 0 {
			t.Errorf("stderr lacks %q\n%s", want, r.output())
		}
	}
}
