package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/results"
)

// workspaceScript copies testdata/custom-bench/<src> into a fresh
// workspace on the shared filesystem as benchmarks/multi_node/<as> (the
// stand-in enroot cannot mount, so nodes run it by that path).
func (c *cluster) workspaceScript(t *testing.T, name, src, as string) (ws, script string) {
	t.Helper()
	ws = filepath.Join(c.Root, "workspaces", name)
	script = filepath.Join(ws, "benchmarks", "multi_node", as)
	b, err := os.ReadFile(filepath.Join(c.repo, "testdata", "custom-bench", src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, b, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(ws, 0o777)
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(ws)
		}
	})
	return ws, script
}

// v2Custom is the schema-2 mock recipe with its benchmark block replaced.
func v2Custom(name, benchmark string) string {
	rec := mockRecipe{Name: name}.V2()
	return rec[:strings.Index(rec, "benchmark:\n")] + benchmark
}

// TestCustomPointsV2: InferenceX's two kinds of schema-2 custom points run
// and stage as before. A fixed-sequence point (srt_fixed_sequence.sh's
// contract) leaves SA-Bench results under /logs/sa-bench_isl_*_osl_*,
// which are checked, copied into the run's results (so the manifest lists
// them) and staged under InferenceX's names; an agentic point
// (agentic_srt.sh's) leaves <RESULT_FILENAME>_conc<C>.json, staged as is.
func TestCustomPointsV2(t *testing.T) {
	t.Parallel()
	c := setup(t)
	t.Run("srt_fixed_sequence.sh", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-fixed-seq")
		runID := name + "-run"
		runDir := filepath.Join(c.Root, "runs", runID)
		ws, script := c.workspaceScript(t, name, "fixed-sequence-mock.sh", "srt_fixed_sequence.sh")
		rec := v2Custom(name, `benchmark:
  type: custom
  command: bash `+script+`
  env:
    ISL: '64'
    OSL: '16'
    TOKENIZER: /model
    SRT_LOGS_DIR: `+filepath.Join(runDir, "logs")+`
    SLURMBENCH: `+filepath.Join(runDir, "bin", "slurmbench")+`
`)
		r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID}, env: []string{
			"RESULT_FILENAME=" + name, "MODEL=mock/DeepSeek-R1", "CONC_LIST=2 4", "PREFILL_NUM_WORKERS=2", "PREFILL_TP=4",
			"DECODE_NUM_WORKERS=1", "DECODE_TP=4"}})
		r.editProfile("[paths]\n", "[paths]\nworkspace = \""+ws+"\"\n")
		r.start()
		if code := r.wait(5 * time.Minute); code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, r.output())
		}
		r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
		got := stagedResults(t, r.stage)
		sort.Strings(got)
		want := []string{name + "_sa-bench_isl_64_osl_16_conc2_gpus_12_ctx_8_gen_4.json", name + "_sa-bench_isl_64_osl_16_conc4_gpus_12_ctx_8_gen_4.json"}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("staged %v, want %v\n%s", got, want, r.output())
		}
		man := readManifest(t, filepath.Join(runDir, "results", "manifest.json"))
		listed := 0
		for _, a := range man.Artifacts {
			if strings.HasPrefix(a.Path, "sa-bench_isl_64_osl_16/results_concurrency_") {
				listed++
			}
		}
		if listed != 2 || man.Provenance.Extra["benchmark_type"] != "custom" {
			t.Errorf("manifest lists %d fixed-sequence results (want 2), benchmark_type %q", listed, man.Provenance.Extra["benchmark_type"])
		}
		if out := r.stdout.String(); !strings.Contains(out, "c2 ") || !strings.Contains(out, "c4 ") {
			t.Errorf("the summary table lacks the points:\n%s", out)
		}
		r.removeOnPass()
	})
	t.Run("agentic_srt.sh", func(t *testing.T) {
		t.Parallel()
		name := uniqueName("e2e-agentic-v2")
		runID := name + "-run"
		runDir := filepath.Join(c.Root, "runs", runID)
		ws, script := c.workspaceScript(t, name, "agentic-mock.sh", "agentic_srt.sh")
		rec := v2Custom(name, `benchmark:
  type: custom
  placement:
    node: last_decode
  command: bash `+script+`
  env:
    MODEL: mock/DeepSeek-R1
    INFMAX_CONTAINER_WORKSPACE: `+ws+`
    RESULT_DIR: `+filepath.Join(runDir, "logs", "agentic")+`
    PORT: '8000'
    IS_MULTINODE: 'true'
`)
		r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID},
			env: []string{"RESULT_FILENAME=" + name, "CONC_LIST=1 3"}})
		r.editProfile("[paths]\n", "[paths]\nworkspace = \""+ws+"\"\n")
		r.start()
		if code := r.wait(5 * time.Minute); code != 0 {
			t.Fatalf("exit %d, want 0\n%s", code, r.output())
		}
		r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
		for _, conc := range []string{"1", "3"} {
			b, err := os.ReadFile(filepath.Join(r.stage, name+"_conc"+conc+".json"))
			var res struct {
				OK int `json:"num_requests_successful"`
			}
			if err != nil || json.Unmarshal(b, &res) != nil || itoa(res.OK) != conc {
				t.Errorf("staged c%s: %s %v", conc, b, err)
			}
		}
		if out := r.stdout.String(); !strings.Contains(out, "(conc_1, conc_3)") {
			t.Errorf("summary lacks the workload's points:\n%s", out)
		}
		r.removeOnPass()
	})
}

func readManifest(t *testing.T, path string) results.Manifest {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m results.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
