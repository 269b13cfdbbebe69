package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/browsertest"
	"github.com/slurmbench/slurmbench/launcher/login/matrix"
)

// masterEntryHead is a test-cluster master entry up to its search space:
// the mock image and model, disaggregated multinode, ISL 64 and OSL 16.
func masterEntryHead(name string) string {
	return name + `:
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
`
}

// matrixMaster is a master config in InferenceX's shape with three points
// on each of two recipes: points of one recipe differ only in concurrency.
func matrixMaster(recipeA, recipeB string) string {
	var b strings.Builder
	for _, r := range []string{recipeA, recipeB} {
		b.WriteString(masterEntryHead(r))
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
// second run reuses all six without submitting anything. Over slurmrestd,
// then over Slurm's commands.
func TestMatrixSharesAllocations(t *testing.T) {
	// Not parallel: its two allocations must fit side by side, so it runs before the
	// parallel tests start, on an idle cluster.
	for _, transport := range transports {
		t.Run(transport, func(t *testing.T) { testMatrixSharesAllocations(t, setup(t).over(t, transport)) })
	}
}

func testMatrixSharesAllocations(t *testing.T, c *cluster) {
	a, b, master, recipes, profile := matrixFiles(t, c, mockRecipe{OSL: 16, Conc: "2"})
	stage := filepath.Join(t.TempDir(), "stage")
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
	for _, n := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(stage, n+"-pareto.svg")); err != nil {
			t.Errorf("no Pareto chart for entry %s: %v", n, err)
		}
	}
	// One page over the whole matrix: every point on one Pareto chart,
	// grouped by the two allocations that served them.
	shot := ""
	if a := os.Getenv("SLURMBENCH_ARTIFACTS"); a != "" {
		shot = filepath.Join(a, "matrix-report.png")
		_ = os.MkdirAll(a, 0o755)
	}
	page := browsertest.Render(t, filepath.Join(stage, "report.html"), shot, 1200, 2400)
	browsertest.CheckReport(t, page, 6, "allocations", "points", "pareto")
	if n := strings.Count(page.DOM, "job "); n < 6 {
		t.Errorf("the matrix page names the allocation of %d points, want 6", n)
	}
	dirs, err := filepath.Glob(filepath.Join(stage, "*_*_*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 6 {
		t.Errorf("%d stage directories, want 6", len(dirs))
	}
	for _, p := range dirs {
		name := filepath.Base(p)
		data, err := os.ReadFile(filepath.Join(p, matrix.MarkerFile))
		var mk matrix.Marker
		if err != nil || json.Unmarshal(data, &mk) != nil || !mk.OK || mk.KeyParts["recipe_sha256"] == "" {
			t.Errorf("%s: marker %s (%v)", name, data, err)
		}
		// Named as the workflow names them: RESULT_FILENAME_BASE first.
		results, _ := filepath.Glob(filepath.Join(p, "mock_64_16_fp8_dynamo-mock_prefill-tp4-pp1-dcp1-pcp1-ep1-dpfalse-nw1_decode-tp4-pp1-dcp1-pcp1-ep1-dpfalse-nw1_disagg-true_spec-none_conc*_testcluster_*.json"))
		if len(results) == 0 {
			all, _ := filepath.Glob(filepath.Join(p, "*"))
			t.Errorf("%s: no result named by RESULT_FILENAME_BASE among %v", name, all)
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

// matrixFiles writes two mock recipes (2P1D and 1P1D, names a and b), the
// master config of their six points and a profile into a fresh directory.
func matrixFiles(t *testing.T, c *cluster, r mockRecipe) (a, b, master, recipes, profile string) {
	t.Helper()
	dir := t.TempDir()
	a, b = uniqueName("e2e-mxa"), uniqueName("e2e-mxb")
	recipes = filepath.Join(dir, "recipes")
	if err := os.MkdirAll(recipes, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, workers := range map[string]int{a: 2, b: 1} {
		r.Name, r.PrefillWorkers = name, workers
		if err := os.WriteFile(filepath.Join(recipes, name+".yaml"), []byte(r.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	master = filepath.Join(dir, "master.yaml")
	if err := os.WriteFile(master, []byte(matrixMaster(a, b)), 0o644); err != nil {
		t.Fatal(err)
	}
	return a, b, master, recipes, c.profile(t, dir)
}

// TestMatrixInterrupt: the first SIGINT drains (the running point
// finishes and is staged, no other point or allocation starts, the
// allocation is taken down, exit 130); with a second SIGINT the running
// point is cancelled instead. Nothing is left running either way, and a
// rerun after the drain would run only the points that did not finish.
func TestMatrixInterrupt(t *testing.T) {
	t.Parallel()
	c := setup(t)
	for _, twice := range []bool{false, true} {
		t.Run(fmt.Sprintf("second-sigint=%v", twice), func(t *testing.T) {
			// Slow points: 16 tokens at 200 ms each, about 3 s a request.
			a, b, master, recipes, profile := matrixFiles(t, c, mockRecipe{OSL: 16, Conc: "2", ITL: "200ms"})
			stage := filepath.Join(t.TempDir(), "stage")
			r := c.prepare(t, runOpts{command: "matrix", name: a, recipe: "-", stage: "-",
				args: []string{"--master", master, "--recipes-root", recipes, "--stage-dir", stage, "--max-parallel", "1"}})
			r.recipe, r.profile = "", ""
			r.opts.args = append([]string{"-p", profile}, r.opts.args...)
			r.start()
			r.waitLine(regexp.MustCompile(`matrix: \S+#0\S* running`), 4*time.Minute)
			r.signal(syscall.SIGINT)
			if twice {
				time.Sleep(300 * time.Millisecond)
				r.signal(syscall.SIGINT)
			}
			if code := r.wait(4 * time.Minute); code != 130 {
				t.Fatalf("exit %d, want 130\n%s", code, r.output())
			}
			out := r.stdout.String()
			if twice {
				if !strings.Contains(r.stderr.String(), "second interrupt: cancelling the running points") || !strings.Contains(r.stderr.String(), "1 failed") {
					t.Errorf("a second SIGINT did not cancel the running point:\n%s", r.output())
				}
			} else if !strings.Contains(r.stderr.String(), "1 done, 0 running") {
				t.Errorf("the running point did not finish on the first SIGINT:\n%s", r.output())
			}
			if n := strings.Count(out, "not run (interrupted)"); n != 5 {
				t.Errorf("summary has %d points not run, want 5:\n%s", n, out)
			}
			if jobs := c.jobsNamed(t, b); len(jobs) != 0 {
				t.Errorf("the second allocation was submitted after the interrupt: %d jobs", len(jobs))
			}
			jobs := c.jobsNamed(t, a)
			if len(jobs) != 1 {
				t.Fatalf("%d jobs for the first allocation, want 1", len(jobs))
			}
			deadline := time.Now().Add(time.Minute)
			for !jobs[0].Terminal() && time.Now().Before(deadline) {
				time.Sleep(time.Second)
				jobs = c.jobsNamed(t, a)
			}
			if !jobs[0].Terminal() {
				t.Errorf("job %d still %s: orphaned", jobs[0].ID, jobs[0].State)
			}
			if !strings.Contains(r.stderr.String(), "is down") {
				t.Errorf("the allocation was not taken down:\n%s", r.output())
			}
		})
	}
}
