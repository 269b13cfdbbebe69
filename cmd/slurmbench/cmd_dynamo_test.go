package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/inputs/recipe"
	"github.com/slurmbench/slurmbench/launcher/job/dynamoinstall/dynamoinstalltest"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/launcher/planner"
)

// runDynamoInstall runs "slurmbench dynamo-install ..." in-process and
// returns stdout, stderr and the exit code main would use.
func runDynamoInstall(t *testing.T, args ...string) (string, string, exitcode.Code) {
	t.Helper()
	return runCLI(t, append([]string{"dynamo-install"}, args...)...)
}

func TestDynamoInstallCommand(t *testing.T) {
	fakes := dynamoinstalltest.New(t)
	fakes.Setenv(t, t.TempDir())
	cache := filepath.Join(t.TempDir(), "wheels")
	out, errOut, code := runDynamoInstall(t, "--cache", cache, "--version", "1.2.1", "--tmp", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	entry := filepath.Join(cache, "version-1.2.1", "cp312-x86_64")
	if !strings.Contains(out, "dynamo-install: version-1.2.1/cp312-x86_64 fetched into "+entry+" and installed") {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "dynamo-install: fetch 1/1: python3 -m pip download") {
		t.Errorf("stderr lacks the step banner:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(entry, ".complete")); err != nil {
		t.Error(err)
	}
	// The same container again.
	out, _, code = runDynamoInstall(t, "--cache", cache, "--version", "1.2.1", "--tmp", t.TempDir())
	if code != 0 || !strings.Contains(out, "already installed in this container") {
		t.Errorf("second run: exit %d, %s", code, out)
	}
}

func TestDynamoInstallCommandErrors(t *testing.T) {
	fakes := dynamoinstalltest.New(t)
	fakes.Setenv(t, t.TempDir(), dynamoinstalltest.EnvFail+"=download")
	cache := filepath.Join(t.TempDir(), "wheels")
	cases := []struct {
		name string
		args []string
		code exitcode.Code
		want string
	}{
		{"no source", []string{"--cache", cache}, exitcode.Config, "exactly one of --version, --wheel, --hash and --top-of-tree"},
		{"two sources", []string{"--cache", cache, "--version", "1.0", "--hash", "abcdef1"}, exitcode.Config, "exactly one"},
		{"no cache", []string{"--version", "1.0"}, exitcode.Config, "--cache: required"},
		{"relative cache", []string{"--cache", "wheels", "--version", "1.0"}, exitcode.Config, `--cache "wheels": not an absolute path`},
		{"relative tmp", []string{"--cache", cache, "--version", "1.0", "--tmp", "tmp"}, exitcode.Config, `--tmp "tmp"`},
		{"bad version", []string{"--cache", cache, "--version", "../../etc"}, exitcode.Config, "not a version"},
		{"bad hash", []string{"--cache", cache, "--hash", "main"}, exitcode.Config, "not a hex commit"},
		{"bad top-of-tree id", []string{"--cache", cache, "--top-of-tree", "../x"}, exitcode.Config, "not a run id"},
		{"fetch fails", []string{"--cache", cache, "--version", "9.9.9", "--tmp", t.TempDir()}, exitcode.Engine, "fetch step 1/1 (python3 -m pip download"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := runDynamoInstall(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d; stderr:\n%s\nwant %q", code, tc.code, errOut, tc.want)
			}
		})
	}
	// The failure ends with the step's output, one indented line each.
	_, errOut, _ := runDynamoInstall(t, "--cache", cache, "--version", "9.9.9", "--tmp", t.TempDir())
	if _, tail, ok := strings.Cut(errOut, "last output:\n"); !ok || !strings.Contains(tail, "  ERROR: No matching distribution found") {
		t.Errorf("the failure line lacks the step's last output:\n%s", errOut)
	}
}

// TestDynamoInstallPlanStep: the setup step the plan emits for a source
// build runs as written (with the container's tmp moved for the test).
func TestDynamoInstallPlanStep(t *testing.T) {
	td, err := profile.Canonical(filepath.Join("..", "..", "launcher", "planner", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(filepath.Join(td, "profiles", "b200.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "wheels")
	p.Paths.WheelCache = cache
	r, err := recipe.Load(filepath.Join(td, "recipes", "4p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pl, err := planner.Build(planner.Inputs{Profile: p, Recipe: r, RunID: "dynamo-step", Binary: "/opt/slurmbench/bin/slurmbench",
		ResolveImage: func(ref, dir string) (plan.Image, error) {
			return plan.Image{Ref: ref, Squash: filepath.Join(dir, "image.sqsh")}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var step []string
	for _, proc := range pl.Processes {
		for _, s := range proc.Setup {
			if len(s) > 1 && s[1] == "dynamo-install" {
				step = s
			}
		}
	}
	if step == nil {
		t.Fatal("the 4p1d plan has no dynamo-install setup step")
	}
	fakes := dynamoinstalltest.New(t)
	fakes.Setenv(t, t.TempDir())
	out, errOut, code := runDynamoInstall(t, append(step[2:], "--tmp", t.TempDir())...)
	if code != 0 || !strings.Contains(out, "fetched into "+cache+"/hash-") {
		t.Fatalf("%q: exit %d\n%s%s", step, code, out, errOut)
	}
	if fakes.Count(t, "maturin build --release") != 1 || fakes.Count(t, "python3 -m pip install --break-system-packages -e ") != 1 {
		t.Errorf("calls:\n%s", strings.Join(fakes.Calls(t), "\n"))
	}
}
