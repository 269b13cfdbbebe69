package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/launcher/rundir"
)

// TestPostEval: a schema-2 recipe's post_eval.command (InferenceX's
// srt_eval.sh contract, testdata/post-eval/srt-eval-mock.sh) runs after the
// benchmark when RUN_EVAL=true: {endpoint} and {infmax_workspace} filled,
// MODEL_NAME and EVAL_CONC set, srtctl's built-in workflow variables and
// post_eval.passthrough_env reaching it from the submitting environment
// (and nothing unlisted), its /logs/eval_results artifacts staged flat into
// the stage directory where the workflow looks, its gsm8k score in the
// summary.
func TestPostEval(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-post-eval")
	runID := name + "-run"
	runDir := filepath.Join(c.Root, "runs", runID)
	ws := filepath.Join(c.Root, "workspaces", name)
	script := filepath.Join(ws, "benchmarks", "multi_node", "srt_eval.sh")
	src, err := os.ReadFile(filepath.Join(c.repo, "testdata", "post-eval", "srt-eval-mock.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(ws, 0o777)
	t.Cleanup(func() {
		if !t.Failed() {
			_ = os.RemoveAll(ws)
		}
	})
	rec := mockRecipe{Name: name}.V2() + `post_eval:
  passthrough_env: [EVAL_SUITE, EVAL_RESULTS_DIR, EVAL_LIMIT]
  command: [bash, ` + script + `, "{endpoint}", "{infmax_workspace}"]
`
	r := c.prepare(t, runOpts{name: name, recipe: rec, args: []string{"--run-id", runID}, env: []string{
		"RUN_EVAL=true", "EVAL_CONC=6", "IS_MULTINODE=true", "PREFILL_TP=4", "PREFILL_EP=1", "PREFILL_DP_ATTN=false",
		"DECODE_DP_ATTN=false", "EVAL_SUITE=gsm8k-standin", "EVAL_LIMIT=5", "EVAL_UNLISTED=leak",
		"EVAL_RESULTS_DIR=" + filepath.Join(runDir, "logs", "eval_results")}})
	r.editProfile("[paths]\n", "[paths]\nworkspace = \""+ws+"\"\n")
	r.start()
	if code := r.wait(5 * time.Minute); code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	if got := stagedResults(t, r.stage); len(got) != 1 {
		t.Errorf("staged benchmark results %v, want the one point", got)
	}
	// Staged flat, as copy_eval_artifacts copies eval_results/*.
	results, _ := filepath.Glob(filepath.Join(r.stage, "results_*.json"))
	if len(results) != 1 {
		t.Errorf("staged eval results %v, want one", results)
	}
	b, err := os.ReadFile(filepath.Join(r.stage, "meta_env.json"))
	if err != nil {
		t.Fatalf("meta_env.json not staged: %v\n%s", err, r.output())
	}
	var meta map[string]string
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"model_name": "mock/DeepSeek-R1", "eval_conc": "6", "eval_suite": "gsm8k-standin",
		"is_multinode": "true", "workspace": "/infmax-workspace", "unlisted": ""}
	for k, v := range want {
		if meta[k] != v {
			t.Errorf("the eval saw %s=%q, want %q (%s)", k, meta[k], v, b)
		}
	}
	st, err := rundir.ReadStatus(rundir.New(runDir).Status)
	if err != nil {
		t.Fatal(err)
	}
	var benchEnd, evalStart time.Time
	for _, p := range st.Processes {
		switch {
		case p.Name == "benchmark" && p.Ended != nil:
			benchEnd = *p.Ended
		case p.Name == "eval" && p.Started != nil:
			evalStart = *p.Started
		}
	}
	if benchEnd.IsZero() || evalStart.Before(benchEnd) {
		t.Errorf("eval started %v, benchmark ended %v: the eval runs after the benchmark", evalStart, benchEnd)
	}
	if out := r.stdout.String(); !strings.Contains(out, "gsm8k: strict-match 1.0000") {
		t.Errorf("summary lacks the eval's score:\n%s", out)
	}
	r.removeOnPass()
}
