package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// TestCustomBenchmark: a recipe with benchmark.type custom runs its command
// (testdata/custom-bench/agentic-mock.sh, agentic_srt.sh's contract in bash)
// through `slurmbench run` on the test cluster once the mock deployment is
// healthy: the command gets srtctl's environment (the frontend's address)
// and benchmark.env, its aggregated results are staged under InferenceX's
// names, copied into the run's results and listed in the manifest, and the
// summary says what the workload produced.
func TestCustomBenchmark(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-custom")
	runID := name + "-run"
	const resultName = "agentic_mock_e2e"
	// The stand-in enroot cannot mount, so the workspace and the script are
	// named by their shared-filesystem paths, which the nodes see.
	ws := filepath.Join(c.Root, "workspaces", name)
	script := filepath.Join(ws, "benchmarks", "multi_node", "agentic-mock.sh")
	src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "custom-bench", "agentic-mock.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(ws, 0o777) // the cluster's jobs run as its user
	runDir := filepath.Join(c.Root, "runs", runID)
	rec := mockRecipe{Name: name}.String()
	rec = rec[:strings.Index(rec, "benchmark:\n")] + `benchmark:
  type: custom
  client_placement: last_decode
  command: "bash ` + script + `"
  env:
    MODEL: mock/DeepSeek-R1
    CONC_LIST: "2 3"
    RESULT_DIR: ` + filepath.Join(runDir, "logs", "agentic") + `
    INFMAX_CONTAINER_WORKSPACE: ` + ws + `
`
	r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID},
		env: []string{"RESULT_FILENAME=" + resultName}})
	r.editProfile("[paths]\n", "[paths]\nworkspace = \""+ws+"\"\n")
	r.start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))

	// Staged under InferenceX's names (copy_agentic_results' pattern).
	for _, conc := range []string{"2", "3"} {
		file := resultName + "_conc" + conc + ".json"
		var res struct {
			OK int `json:"num_requests_successful"`
		}
		b, err := os.ReadFile(filepath.Join(r.stage, file))
		if err != nil {
			t.Errorf("staged result: %v", err)
			continue
		}
		if err := json.Unmarshal(b, &res); err != nil || strconv.Itoa(res.OK) != conc {
			t.Errorf("%s: %s (%v): want %s successful requests", file, b, err, conc)
		}
		if _, err := os.Stat(filepath.Join(runDir, "results", "custom", file)); err != nil {
			t.Errorf("not copied into the run's results: %v", err)
		}
		if _, err := os.Stat(filepath.Join(runDir, "logs", "agentic", "conc_"+conc, "benchmark.log")); err != nil {
			t.Errorf("the workload's own files: %v", err)
		}
	}
	m, err := os.ReadFile(filepath.Join(runDir, "results", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var man results.Manifest
	if err := json.Unmarshal(m, &man); err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, a := range man.Artifacts {
		listed = listed || a.Path == "custom/"+resultName+"_conc2.json"
	}
	if !listed || man.Provenance.Extra["benchmark_type"] != "custom" || !strings.Contains(man.Provenance.Extra["benchmark_command"], "agentic-mock.sh") {
		t.Errorf("manifest does not list the result or record the command: %s", m)
	}
	out := r.stdout.String()
	for _, want := range []string{"benchmark: custom command bash " + script, "custom workload: ", "(conc_2, conc_3)",
		"c2 " + resultName + "_conc2.json: num_requests_successful=2 num_requests_failed=0; valid",
		"c3 " + resultName + "_conc3.json: num_requests_successful=3 num_requests_failed=0; valid"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// The client ran on the last decode node, with srtctl's environment.
	spec, err := os.ReadFile(filepath.Join(runDir, "steps", "benchmark.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"SRT_FRONTEND_HOST", "SRT_DECODE_ENDPOINTS", "AIPERF_SERVER_METRICS_URLS", `"bash"`} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("benchmark step spec lacks %s: %s", want, spec)
		}
	}
	r.removeOnPass()
}

// TestCustomBenchmarkFails: a custom command that exits non-zero having
// written nothing fails the run at the benchmark layer (exit 8), and the
// summary says the workload produced no result.
func TestCustomBenchmarkFails(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-custom-fail")
	rec := mockRecipe{Name: name}.String()
	rec = rec[:strings.Index(rec, "benchmark:\n")] + `benchmark:
  type: custom
  command: "false"
`
	r := c.prepare(t, runOpts{name: name, recipe: rec, env: []string{"RESULT_FILENAME=agentic_fail"}}).start()
	if code := r.wait(5 * time.Minute); code != 8 {
		t.Fatalf("exit %d, want 8 (benchmark)\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	if out := r.stdout.String(); !strings.Contains(out, "no aggregated result file") {
		t.Errorf("summary does not say the workload produced nothing:\n%s", out)
	}
	r.removeOnPass()
}
