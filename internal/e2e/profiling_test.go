package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProfiledRun: a recipe with a profiling block (torch, a step range per
// phase) runs through `slurmbench run` on the test cluster: every worker
// gets the profiling environment, around the sa-bench run the driver asks
// each worker leader to start and then stop profiling (lib/profiling.sh's
// requests; the mock engine writes a profile on stop), the profiles are
// staged with the logs and the summary lists them.
func TestProfiledRun(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-profile")
	runID := name + "-run"
	rec := mockRecipe{Name: name}.String() + `profiling:
  type: torch
  prefill:
    start_step: 1
    stop_step: 4
  decode:
    start_step: 2
    stop_step: 4
`
	r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID}})
	r.start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	runDir := filepath.Join(c.Root, "runs", runID)
	for _, mode := range []string{"prefill", "decode"} {
		files, _ := filepath.Glob(filepath.Join(runDir, "logs", "profiles", mode, "mock-"+mode+"-*.profile.json"))
		if len(files) == 0 {
			t.Errorf("no %s profile written", mode)
			continue
		}
		b, err := os.ReadFile(files[0])
		var prof struct {
			Start map[string]any `json:"start_request"`
		}
		if err != nil || json.Unmarshal(b, &prof) != nil || prof.Start["output_dir"] != "/logs/profiles/"+mode {
			t.Errorf("%s: %s (%v)", files[0], b, err)
		}
		staged, _ := filepath.Glob(filepath.Join(r.stage, "LOGS", "profiles", mode, "mock-"+mode+"-*.profile.json"))
		if len(staged) != len(files) {
			t.Errorf("%s profiles staged: %v, written: %v", mode, staged, files)
		}
	}
	out := r.stdout.String()
	if !strings.Contains(out, "torch profiles: ") || !strings.Contains(out, ".profile.json (") {
		t.Errorf("summary does not list the profiles:\n%s", out)
	}
	spec, err := os.ReadFile(filepath.Join(runDir, "steps", "prefill_w0.json"))
	if err != nil {
		matches, _ := filepath.Glob(filepath.Join(runDir, "steps", "prefill*.json"))
		if len(matches) == 0 {
			t.Fatal(err)
		}
		spec, _ = os.ReadFile(matches[0])
	}
	for _, want := range []string{`"PROFILE_TYPE": "torch"`, `"PROFILE_PREFILL_START_STEP": "1"`, `"SGLANG_TORCH_PROFILER_DIR"`} {
		if !strings.Contains(string(spec), want) && !strings.Contains(strings.ReplaceAll(string(spec), `":"`, `": "`), want) {
			t.Errorf("prefill step spec lacks %s: %s", want, spec)
		}
	}
	r.removeOnPass()
}

// TestSlowDownRun: benchmark.slow_down_* on the test cluster: the bench
// client turns SGLang's /slow_down on at each point's start on every decode
// leader and off when the point ends (the mock engine logs both), and the
// run succeeds.
func TestSlowDownRun(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-slowdown")
	runID := name + "-run"
	rec := strings.Replace(mockRecipe{Name: name, Conc: "2x3"}.String(), "benchmark:\n", "benchmark:\n  slow_down_sleep_time: 0.001\n  slow_down_wait_time: 600\n", 1)
	r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID}})
	r.start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	runDir := filepath.Join(c.Root, "runs", runID)
	logs, _ := filepath.Glob(filepath.Join(runDir, "logs", "*decode*"))
	if len(logs) == 0 {
		t.Fatalf("no decode worker log in %s", filepath.Join(runDir, "logs"))
	}
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		on, off := strings.Count(string(b), "slow_down: forward_sleep_time=0.001s"), strings.Count(string(b), "slow_down: off")
		if on != 2 || off != 2 {
			t.Errorf("%s: slow_down on %d times, off %d times; want 2 and 2 (one per point)", l, on, off)
		}
	}
	r.removeOnPass()
}
