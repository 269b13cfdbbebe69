package driver

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// The exec shim is tested through this test binary: with SLURMBENCH_EXEC_SPEC
// set, TestMain execs that spec instead of running tests.
func TestMain(m *testing.M) {
	if os.Getenv(fakeSrunEnv) == "1" {
		fakeSrun(os.Args[1:])
	}
	if spec := os.Getenv("SLURMBENCH_EXEC_SPEC"); spec != "" {
		s, err := ReadSpec(spec)
		if err == nil {
			err = Exec(s)
		}
		var se *SetupError
		if errors.As(err, &se) {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(se.ExitCode())
		}
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(127)
	}
	os.Exit(m.Run())
}

func runSpec(t *testing.T, s Spec, env ...string) (string, int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "spec.json")
	if err := WriteSpec(path, s); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), append(env, "SLURMBENCH_EXEC_SPEC="+path)...)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestExecSetsEnvRunsSetupThenExecs(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "setup-ran")
	out, code := runSpec(t, Spec{
		Name:    "w",
		Workdir: dir,
		Unset:   []string{"DROP_ME"},
		Env:     map[string]string{"CUDA_VISIBLE_DEVICES": "4,5", "KEEP": "plan"},
		Setup:   [][]string{{"touch", marker}},
		Argv:    []string{"sh", "-c", `echo "cvd=$CUDA_VISIBLE_DEVICES keep=$KEEP drop=${DROP_ME-unset} pwd=$(pwd)"; test -e setup-ran`},
	}, "CUDA_VISIBLE_DEVICES=0,1,2,3", "DROP_ME=x", "KEEP=env")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	want := "cvd=4,5 keep=plan drop=unset pwd=" + dir
	if !strings.Contains(out, want) {
		t.Errorf("output %q lacks %q", out, want)
	}
	if !strings.Contains(out, "setup 1/1") {
		t.Errorf("no setup banner in %q", out)
	}
}

func TestExecFailedSetupEndsTheStepWithItsCode(t *testing.T) {
	dir := t.TempDir()
	out, code := runSpec(t, Spec{
		Name: "w", Workdir: dir,
		Setup: [][]string{{"sh", "-c", "exit 42"}},
		Argv:  []string{"touch", filepath.Join(dir, "engine-ran")},
	})
	if code != 42 {
		t.Errorf("exit %d, want 42:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "engine-ran")); err == nil {
		t.Error("the program ran after a failed setup step")
	}
}

// TestExecSetsOpenFilesLimit: a spec's NoFile becomes the program's
// open-files limit, soft and hard (srtctl's `ulimit -n N &&`); a limit that
// cannot be set (above the hard limit, unprivileged) keeps the program
// from starting, as bash's && would.
func TestExecSetsOpenFilesLimit(t *testing.T) {
	var cur syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &cur); err != nil {
		t.Fatal(err)
	}
	want := cur.Max // the hard limit: always allowed
	if want > 1<<20 {
		want = 1 << 20
	}
	out, code := runSpec(t, Spec{Name: "nginx", NoFile: want, Argv: []string{"sh", "-c", "echo soft=$(ulimit -Sn) hard=$(ulimit -Hn)"}})
	w := strconv.FormatUint(want, 10)
	if code != 0 || !strings.Contains(out, "soft="+w+" hard="+w) {
		t.Errorf("exit %d: %s, want soft and hard %s", code, out, w)
	}
	if os.Geteuid() != 0 && cur.Max < 1<<40 {
		dir := t.TempDir()
		out, code = runSpec(t, Spec{Name: "nginx", NoFile: cur.Max + 1, Argv: []string{"touch", filepath.Join(dir, "ran")}})
		if code == 0 || !strings.Contains(out, "raising the open-files limit") {
			t.Errorf("above the hard limit: exit %d: %s", code, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
			t.Error("the program ran without its limit")
		}
	}
}

// The shim fingerprints the step after its setup, just before exec: the
// record has the argv exec'd and the environment's names, never a value,
// and a fake nvidia-smi on the step's PATH gives the GPUs. A setup that
// installs a package is seen (the probe runs after it).
func TestExecWritesFingerprint(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	fp := filepath.Join(dir, "fingerprint")
	site := filepath.Join(dir, "site")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	smi := "#!/bin/sh\necho '0, NVIDIA B200, 570.86.15, 183359 MiB, GPU-aaaa'\necho '1, NVIDIA B200, 570.86.15, 183359 MiB, GPU-bbbb'\n"
	if err := os.WriteFile(filepath.Join(bin, "nvidia-smi"), []byte(smi), 0o755); err != nil {
		t.Fatal(err)
	}
	install := filepath.Join(site, "sglang-0.5.2.dist-info")
	out, code := runSpec(t, Spec{
		Name: "prefill_w0", Workdir: dir, Fingerprint: fp,
		Env:   map[string]string{"PATH": bin + ":/usr/bin:/bin", "SECRET_TOKEN": "hunter2", "PYTHONPATH": site},
		Setup: [][]string{{"mkdir", "-p", install}, {"sh", "-c", "printf 'Metadata-Version: 2.1\\nName: sglang\\nVersion: 0.5.2\\n\\nbody' > " + install + "/METADATA"}},
		Argv:  []string{"true", "--served-model-name", "m"},
	}, "SLURM_PROCID=3")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(fp, "prefill_w0.task3.json"))
	if err != nil {
		t.Fatalf("no fingerprint: %v\n%s", err, out)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("fingerprint holds an environment value:\n%s", b)
	}
	for _, want := range []string{`"SECRET_TOKEN"`, `"--served-model-name"`, `"NVIDIA B200"`, `"570.86.15"`, `"name": "sglang"`, `"version": "0.5.2"`, `"task": "3"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("fingerprint lacks %s:\n%s", want, b)
		}
	}
	// The machine's own site-packages count too (the default roots).
	if !regexp.MustCompile(`prefill_w0 fingerprint: [1-9][0-9]* packages, 2 GPUs -> `).MatchString(out) {
		t.Errorf("no fingerprint line in %q", out)
	}
}
