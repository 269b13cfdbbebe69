package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/golden"
)

// clearRunnersEnv clears what the runners.yaml profile reads besides the
// render flags' fallbacks.
func clearRunnersEnv(t *testing.T) {
	t.Helper()
	clearRenderEnv(t)
	for _, k := range []string{"FRAMEWORK", "MODEL_PREFIX", "GITHUB_WORKSPACE", "SLURMBENCH_WORKSPACE"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

// TestRenderFromRunner pins render of a point whose profile is a
// runners.yaml record chosen by the runner's name: the partition its
// partition: label picks, the record's checkpoint, image alias, mounts,
// directives and environment, and where each value came from.
func TestRenderFromRunner(t *testing.T) {
	clearRunnersEnv(t)
	data := fixedLengthCopy(t, renderData(t))
	dir := filepath.Join(data, "runners")
	t.Setenv("RUNNER_NAME", "gb-nv_01")
	out, stderr, code := runRender(t, "--runners", filepath.Join(dir, "runners.yaml"), "-r", filepath.Join(dir, "recipe.yaml"),
		"--image", "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.5.1", "--workspace", filepath.Join(dir, "ws"))
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"partition   batch_3", "/scratch/models/DeepSeek-R1-0528:/model:ro", "--exclude=gb-node-07 --mem=0 --segment=2",
		"slurm.partition                 <- @TESTDATA@/runners/runners.yaml:12 labels.partition:batch_3"} {
		if !strings.Contains(strings.ReplaceAll(out, data, "@TESTDATA@"), want) {
			t.Errorf("render lacks %q", want)
		}
	}
	// The job binary's line depends on the machine's architecture (the
	// record's compute nodes are aarch64): it is left out of the file.
	var kept []string
	for _, l := range strings.Split(strings.ReplaceAll(out, data, "@TESTDATA@"), "\n") {
		if !strings.HasPrefix(l, "Job binary: ") {
			kept = append(kept, l)
		}
	}
	golden.Assert(t, filepath.Join("testdata", "render", "golden", "runners-gb-nv_01.txt"), []byte(strings.Join(kept, "\n")))
}

// TestRunnersBadInput: a runner the labels do not resolve, and a
// runners.yaml that breaks a rule, are exit 2 naming file, line and rule,
// for render, doctor and run alike (nothing is imported or submitted).
func TestRunnersBadInput(t *testing.T) {
	clearRunnersEnv(t)
	dir := filepath.Join(renderData(t), "runners")
	runners := filepath.Join(dir, "runners.yaml")
	broken := filepath.Join(t.TempDir(), "runners.yaml")
	src, err := os.ReadFile(runners)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte(strings.Replace(string(src), "      account: benchmark\n", "      account: benchmark\n      acount: other\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	recipe := filepath.Join(dir, "recipe.yaml")
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"runner in no cluster label", []string{"--runners", runners, "--runner", "gb"}, runners + `:3: labels: runner "gb" must be in exactly one cluster label, found []`},
		{"no runner", []string{"--runners", runners}, "no runner name"},
		{"unknown key", []string{"--runners", broken, "--runner", "gb-nv_00"}, broken + ":29: clusters.gb-nv.slurm.acount: unknown key"},
		{"no runners.yaml", []string{"--runners", filepath.Join(dir, "none.yaml"), "--runner", "gb-nv_00"}, "none.yaml"},
	} {
		for _, cmd := range []string{"render", "doctor", "run"} {
			t.Run(tt.name+"/"+cmd, func(t *testing.T) {
				args := append([]string{cmd, "-r", recipe, "--workspace", filepath.Join(dir, "ws")}, tt.args...)
				_, stderr, code := runCLI(t, args...)
				if code != 2 || !strings.Contains(stderr, tt.want) {
					t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tt.want)
				}
			})
		}
	}
}

// TestDoctorSaysWhereValuesCameFrom: doctor lists each profile value's
// runners.yaml line before its checks.
func TestDoctorSaysWhereValuesCameFrom(t *testing.T) {
	clearRunnersEnv(t)
	dir := filepath.Join(renderData(t), "runners")
	out, _, _ := runCLI(t, "doctor", "--runners", filepath.Join(dir, "runners.yaml"), "--runner", "gb-nv_00", "--workspace", filepath.Join(dir, "ws"))
	for _, want := range []string{"Profile values (runner gb-nv_00, cluster gb-nv, partition batch_1)", "runners.yaml:28 clusters.gb-nv.slurm.account"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}
