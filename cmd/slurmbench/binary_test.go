package main

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/login/arch"
	"github.com/slurmbench/slurmbench/slurm/slurmtest"
)

// archProfile writes a profile for compute nodes of arch against the fake
// slurmrestd at url, with no container runtime (nothing to import).
func archProfile(t *testing.T, url, computeArch string) (path, runsDir string) {
	t.Helper()
	dir := t.TempDir()
	runsDir = filepath.Join(dir, "runs")
	for _, d := range []string{runsDir, filepath.Join(dir, "models", "mock")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	path = filepath.Join(dir, "p.toml")
	writeTestFile(t, path, `[slurm]
rest_url = "`+url+`"
partition = "debug"
gpus_per_node = 4
compute_arch = "`+computeArch+`"
[paths]
runs_dir = "runs"
[models]
mock = "models/mock"
[containers]
mock-image = "slurmbench/mock-engine:t"
[container]
runtime = "none"
`)
	return path, runsDir
}

// TestRunShipsComputeArchBinary: run puts the binary for slurm.compute_arch
// into <run>/bin/slurmbench (its ELF machine is checked) for both
// architectures, and without one stops before anything is submitted, with
// exit 2 naming the file it looked for.
func TestRunShipsComputeArchBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds slurmbench")
	}
	clearRenderEnv(t)
	t.Setenv("GITHUB_ACTIONS", "")
	recipe := filepath.Join(repoRoot(t), "examples", "mock-2p1d.yaml")
	// The release layout for the other architecture; this test binary is
	// the host's.
	binDir := t.TempDir()
	host := profile.GoArch()
	for _, a := range []string{arch.X86_64, arch.AArch64} {
		if a == host {
			continue
		}
		out := filepath.Join(binDir, arch.Dir(a), "slurmbench")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch.Go(a))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("building for %s: %v\n%s", a, err, b)
		}
	}
	machines := map[string]elf.Machine{arch.X86_64: elf.EM_X86_64, arch.AArch64: elf.EM_AARCH64}
	for _, a := range []string{arch.X86_64, arch.AArch64} {
		t.Run(a, func(t *testing.T) {
			fake := slurmtest.NewFake(t, slurmtest.WithLifecycle(slurmtest.Step{State: []string{"FAILED"}, Exit: 1}))
			slurmEnv(t, fake.URL, "tok")
			prof, runs := archProfile(t, fake.URL, a)
			_, errOut, _ := runCLI(t, "run", "-p", prof, "-r", recipe, "--run-id", "arch-"+a, "--binary-dir", binDir, "--stage-dir", t.TempDir(), "--cancel-wait", "1s")
			shipped := filepath.Join(runs, "arch-"+a, "bin", "slurmbench")
			f, err := elf.Open(shipped)
			if err != nil {
				t.Fatalf("%s: %v\n%s", shipped, err, errOut)
			}
			defer f.Close()
			if f.Machine != machines[a] {
				t.Errorf("%s is %v, want %v for compute_arch %s", shipped, f.Machine, machines[a], a)
			}
			if len(fake.Jobs()) != 1 {
				t.Errorf("%d jobs submitted, want 1", len(fake.Jobs()))
			}
		})
	}

	t.Run("missing", func(t *testing.T) {
		other := arch.AArch64
		if host == other {
			other = arch.X86_64
		}
		fake := slurmtest.NewFake(t)
		slurmEnv(t, fake.URL, "tok")
		prof, runs := archProfile(t, fake.URL, other)
		empty := t.TempDir()
		_, errOut, code := runCLI(t, "run", "-p", prof, "-r", recipe, "--run-id", "no-binary", "--binary-dir", empty)
		want := filepath.Join(empty, arch.Dir(other), "slurmbench") + " does not exist"
		if code != exitcode.Config || !strings.Contains(errOut, want) || !strings.Contains(errOut, "slurm.compute_arch "+other) {
			t.Errorf("exit %d, want 2 with %q:\n%s", code, want, errOut)
		}
		if len(fake.Jobs()) != 0 {
			t.Errorf("%d jobs submitted without a binary", len(fake.Jobs()))
		}
		if _, err := os.Stat(filepath.Join(runs, "no-binary")); err == nil {
			t.Error("a run directory was made without a binary")
		}
	})
}
