package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/login/matrix"
)

// matrixMaster is a master config in InferenceX's shape with three points
// on each of two recipes: points of one recipe differ only in concurrency.
func matrixMaster(recipeA, recipeB string) string {
	var b strings.Builder
	for _, r := range []string{recipeA, recipeB} {
		fmt.Fprintf(&b, `%s:
  image: slurmbench/mock-engine:e2e
  model: mock/DeepSeek-R1
  model-prefix: mock
  runner: testcluster
  precision: fp8
  framework: dynamo-mock
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 64
      osl: 16
      search-space:
`, r)
		for _, conc := range []int{2, 4, 8} {
			fmt.Fprintf(&b, `      - conc-list: [%d]
        prefill: {num-worker: 1, tp: 4, ep: 1, dp-attn: false, additional-settings: ["CONFIG_FILE=recipes/%s.yaml"]}
        decode: {num-worker: 1, tp: 4, ep: 1, dp-attn: false}
`, conc, r)
		}
	}
	return b.String()
}

// TestMatrixSharesAllocations is #24's matrix on the test cluster: six mock
// points over two server sets run in two allocations side by side (one job
// per recipe name, both held at once with --max-parallel 2), stage six
// result sets each in its own directory, leave no job running, and a
// second run reuses all six without submitting anything.
func TestMatrixSharesAllocations(t *testing.T) {
	c := setup(t)
	dir := t.TempDir()
	a, b := uniqueName("e2e-mxa"), uniqueName("e2e-mxb")
	recipes := filepath.Join(dir, "recipes")
	if err := os.MkdirAll(recipes, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, workers := range map[string]int{a: 2, b: 1} {
		r := mockRecipe{Name: name, PrefillWorkers: workers, OSL: 16, Conc: "2"}.String()
		if err := os.WriteFile(filepath.Join(recipes, name+".yaml"), []byte(r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	master := filepath.Join(dir, "master.yaml")
	if err := os.WriteFile(master, []byte(matrixMaster(a, b)), 0o644); err != nil {
		t.Fatal(err)
	}
	profile := c.Env.Profile(t, dir, "")
	stage := filepath.Join(dir, "stage")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, n := range []string{a, b} {
			for _, j := range c.jobsNamed(t, n) {
				if !j.Terminal() {
					_ = c.api.CancelJob(ctx, j.ID)
				}
			}
		}
	})
	argv := []string{"matrix", "-p", profile, "--master", master, "--recipes-root", recipes, "--stage-dir", stage, "--max-parallel", "2"}

	start := time.Now()
	out, errOut, code := c.matrixRun(t, 8*time.Minute, argv...)
	if code != 0 {
		t.Fatalf("matrix: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	t.Logf("6 points in %s", time.Since(start).Round(time.Second))
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "matrix:") {
			t.Log(l)
		}
	}
	t.Logf("summary:\n%s", out)
	var spans [][2]time.Time
	for _, n := range []string{a, b} {
		jobs := c.jobsNamed(t, n)
		for _, j := range jobs {
			spans = append(spans, [2]time.Time{j.StartTime, j.EndTime})
		}
		if len(jobs) != 1 {
			t.Errorf("recipe %s ran in %d jobs, want 1 allocation", n, len(jobs))
		}
		for _, j := range jobs {
			if !j.Terminal() {
				t.Errorf("job %d of %s is still %s after the matrix", j.ID, n, j.State)
			}
		}
	}
	// Side by side: each allocation started before the other ended.
	if len(spans) == 2 && !(spans[0][0].Before(spans[1][1]) && spans[1][0].Before(spans[0][1])) {
		t.Errorf("the two allocations did not overlap: %v", spans)
	}
	if !strings.Contains(errOut, "6 done, 0 running, 0 queued, 0 failed") {
		t.Errorf("progress never reached 6 done:\n%s", errOut)
	}
	dirs, err := os.ReadDir(stage)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 6 {
		t.Errorf("%d stage directories, want 6", len(dirs))
	}
	for _, d := range dirs {
		p := filepath.Join(stage, d.Name())
		data, err := os.ReadFile(filepath.Join(p, matrix.MarkerFile))
		var mk matrix.Marker
		if err != nil || json.Unmarshal(data, &mk) != nil || !mk.OK || mk.KeyParts["recipe_sha256"] == "" {
			t.Errorf("%s: marker %s (%v)", d.Name(), data, err)
		}
		results, _ := filepath.Glob(filepath.Join(p, "*.json"))
		if len(results) < 2 { // the marker and at least one staged result
			t.Errorf("%s: staged %v, want a result set", d.Name(), results)
		}
	}

	// The rerun finds six valid results and submits nothing.
	out, errOut, code = c.matrixRun(t, 2*time.Minute, argv...)
	if code != 0 {
		t.Fatalf("rerun: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "6 reused") {
		t.Errorf("rerun did not reuse all six:\n%s", errOut)
	}
	for _, n := range []string{a, b} {
		if jobs := c.jobsNamed(t, n); len(jobs) != 1 {
			t.Errorf("after the rerun recipe %s has %d jobs, want still 1", n, len(jobs))
		}
	}
}

// matrixRun runs slurmbench with a deadline (a hung matrix fails the test
// instead of the suite's timeout).
func (c *cluster) matrixRun(t *testing.T, timeout time.Duration, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Binary, args...)
	cmd.Env = c.baseEnv("")
	cmd.WaitDelay = 10 * time.Second
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errOut.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}
