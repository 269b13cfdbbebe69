package steps

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/inputs/profile"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

// evalDocs is how many documents the eval tests score (--limit).
const evalDocs = 20

// answeringMock serves an answer key whose first evalDocs answers are
// correct with exactly the given accuracy on both filters.
func answeringMock(t *testing.T, accuracy float64) string {
	t.Helper()
	entries, err := gsm8k.MakeAnswerKey(testSplit(t)[:evalDocs], accuracy, 3)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]mockengine.AnswerEntry, len(entries))
	for i, e := range entries {
		key[i] = mockengine.AnswerEntry{Question: e.Question, Completion: e.Completion}
	}
	return mockengine.StartTest(t, mockengine.Options{Model: testModel, AnswerKey: mockengine.NewAnswerKey(key)})
}

func nativeEvalPlan(t *testing.T) *plan.Plan {
	pl := testPlan(t)
	pl.Eval.DataDir = gsm8kDir(t)
	return pl
}

func scores(t *testing.T, res *results.GSM8KScore) []float64 {
	t.Helper()
	var out []float64
	for _, f := range res.Filters() {
		if f.Score == nil {
			t.Fatalf("no %s score in %+v", f.Name, res)
		}
		out = append(out, *f.Score)
	}
	return out
}

func TestEvalNative(t *testing.T) {
	pl := nativeEvalPlan(t)
	frontend := answeringMock(t, 0.95)
	var out bytes.Buffer
	env := map[string]string{"RUNNER_TYPE": "b200-multinode", "PREFILL_TP": "4", "FRAMEWORK": "dynamo-sglang"}
	er, err := Eval(context.Background(), pl, EvalOptions{
		Frontend: frontend, ModelPrefix: "dsr1", Limit: evalDocs, Out: &out,
		Getenv: func(k string) string { return env[k] },
	})
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	if got := scores(t, er.Score); !slices.Equal(got, []float64{0.95, 0.95}) {
		t.Errorf("scores %v, want the answer key's 0.95 on both filters", got)
	}
	// ISL 32 + OSL 8 + 256 = 296 tokens of context; 296 ≤ 4096 leaves half for the answer.
	if er.ContextLength != 296 || er.MaxTokens != 148 {
		t.Errorf("context length %d, max_tokens %d; want 296 and 148", er.ContextLength, er.MaxTokens)
	}
	back, err := results.ReadGSM8K(er.Files.Results)
	if err != nil {
		t.Fatal(err)
	}
	if got := scores(t, back); !slices.Equal(got, []float64{0.95, 0.95}) || back.Samples != evalDocs {
		t.Errorf("written scores %v over %d docs", got, back.Samples)
	}
	if filepath.Dir(er.Files.Results) != pl.Eval.ResultDir || er.Files.Samples == "" {
		t.Errorf("files %+v, want them in %s", er.Files, pl.Eval.ResultDir)
	}
	meta, err := gsm8k.ReadMetaEnv(er.Files.MetaEnv)
	if err != nil {
		t.Fatal(err)
	}
	if meta.InfmaxModelPrefix != "dsr1" || meta.Conc != 4 || meta.ISL != "32" || meta.OSL != "8" || meta.HW != "b200-multinode" ||
		meta.PrefillTP != 4 || meta.DecodeTP != 1 || meta.Framework != "dynamo-sglang" || meta.Precision != "fp8" || meta.Model != testModel {
		t.Errorf("meta_env.json: %+v", meta)
	}
	if want := "gsm8k: strict-match 0.9500 ± 0.0500, flexible-extract 0.9500 ± 0.0500 (n=20) -> " + filepath.Base(er.Files.Results); !strings.Contains(out.String(), want) {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}

// A score under the threshold fails with both filters named, after the
// files are written.
func TestEvalBelowThreshold(t *testing.T) {
	pl := nativeEvalPlan(t)
	frontend := answeringMock(t, 0.85)
	er, err := Eval(context.Background(), pl, EvalOptions{Frontend: frontend, Limit: evalDocs, Getenv: func(string) string { return "" }})
	var below *gsm8k.ThresholdError
	if !errors.As(err, &below) || len(below.Failures) != 2 {
		t.Fatalf("Eval: %v, want a *gsm8k.ThresholdError for both filters", err)
	}
	want := "eval scores below threshold: gsm8k exact_match,strict-match = 0.8500 (< 0.9 from default); gsm8k exact_match,flexible-extract = 0.8500 (< 0.9 from default)"
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if er == nil || er.Files.Results == "" {
		t.Fatal("no files reported with the threshold failure")
	}
	if _, err := os.Stat(er.Files.Results); err != nil {
		t.Errorf("result file not kept: %v", err)
	}
}

func TestEvalContextLength(t *testing.T) {
	modelDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(modelDir, "config.json"), []byte(`{"max_position_embeddings": 4096}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		isl, osl    int
		source      string
		maxModelLen string
		flag        int
		want        int
	}{
		{"isl+osl+256", 8192, 1024, "hf:org/m", "", 0, 9472},
		{"capped by the model", 8192, 1024, modelDir, "", 0, 4096},
		{"MAX_MODEL_LEN without lengths", 0, 0, "hf:org/m", "10240", 0, 10240},
		{"native max without lengths", 0, 0, modelDir, "", 0, 4096},
		{"nothing known", 0, 0, "hf:org/m", "", 0, gsm8k.FallbackContextLength},
		{"flag wins", 8192, 1024, modelDir, "10240", 2048, 2048},
	}
	for _, tt := range tests {
		pl := &plan.Plan{Benchmark: plan.Benchmark{ISL: tt.isl, OSL: tt.osl}, Model: plan.Model{Source: tt.source}}
		opts := EvalOptions{ContextLength: tt.flag, Getenv: func(k string) string {
			if k == "MAX_MODEL_LEN" {
				return tt.maxModelLen
			}
			return ""
		}}
		if got := evalContextLength(pl, opts); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}
}

// The lm-eval client installs the pinned lm-eval, runs InferenceX's command
// in the workspace with the sitecustomize patch on PYTHONPATH, and stages
// the files lm-eval wrote under <output>/<model>/ flat into the result
// directory.
func TestEvalLMEvalClient(t *testing.T) {
	pl := testPlan(t)
	pl.Eval.Client = profile.EvalLMEval
	workspace := t.TempDir()
	patch := filepath.Join(workspace, lmEvalPatch)
	if err := os.MkdirAll(filepath.Dir(patch), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(patch, []byte("# patch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	frontend := httptest.NewServer(http.NotFoundHandler())
	defer frontend.Close()

	// What lm-eval would have scored: 19 of 20 documents right.
	rep := &gsm8k.Report{Task: gsm8k.InferenceXTask(), Model: testModel, Concurrency: 4, MaxTokens: 148, Original: gsm8k.TestDocs}
	for i := 0; i < evalDocs; i++ {
		s := gsm8k.Sample{DocID: i}
		if i != 7 {
			s.ExactMatch = [2]float64{1, 1}
		}
		rep.Samples = append(rep.Samples, s)
	}
	var ran []Command
	fake := func(_ context.Context, cmd Command) error {
		ran = append(ran, cmd)
		if out := flagValue(cmd.Argv, "--output_path"); out != "" {
			_, err := rep.Write(filepath.Join(out, gsm8k.SanitizeModelName(testModel)), gsm8k.WriteOptions{LogSamples: true})
			return err
		}
		return nil
	}
	er, err := Eval(context.Background(), pl, EvalOptions{
		Frontend: frontend.URL, Limit: evalDocs, Workspace: workspace, InstallLMEval: true, Exec: fake,
		Getenv: func(k string) string { return map[string]string{"PYTHONPATH": "/opt/py"}[k] },
	})
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	if len(ran) != 3 || !slices.Contains(ran[0].Argv, "lm-eval[api]") || !strings.Contains(strings.Join(ran[1].Argv, " "), gsm8k.LMEvalCommit) {
		t.Fatalf("commands: %v", ran)
	}
	lm := ran[2]
	wantArgv, _ := gsm8k.LMEvalStep{Model: testModel, Host: "127.0.0.1", Port: frontend.Listener.Addr().(*net.TCPAddr).Port,
		Concurrency: 4, ContextLength: 296, OutputPath: filepath.Join(pl.Eval.ResultDir, lmEvalOutputDir), Limit: evalDocs}.Argv()
	if !slices.Equal(lm.Argv, wantArgv) || lm.Dir != workspace {
		t.Errorf("lm-eval argv %q in %s\nwant %q", lm.Argv, lm.Dir, wantArgv)
	}
	patchDir := filepath.Join(pl.Eval.ResultDir, lmEvalPatchDir)
	if !slices.Equal(lm.Env, []string{"OPENAI_API_KEY=EMPTY", "PYTHONPATH=" + patchDir + ":/opt/py"}) {
		t.Errorf("lm-eval env %q", lm.Env)
	}
	if data, err := os.ReadFile(filepath.Join(patchDir, "sitecustomize.py")); err != nil || string(data) != "# patch\n" {
		t.Errorf("staged patch: %q, %v", data, err)
	}
	for _, f := range []string{er.Files.Results, er.Files.Samples, er.Files.MetaEnv} {
		if filepath.Dir(f) != pl.Eval.ResultDir {
			t.Errorf("file %q not staged into %s", f, pl.Eval.ResultDir)
		}
	}
	if got := scores(t, er.Score); !slices.Equal(got, []float64{0.95, 0.95}) {
		t.Errorf("scores %v, want 0.95", got)
	}
}

func TestCheckEval(t *testing.T) {
	tests := []struct {
		name string
		edit func(*EvalOptions, *plan.Plan)
		want string
	}{
		{"ok", func(*EvalOptions, *plan.Plan) {}, ""},
		{"disabled", func(_ *EvalOptions, p *plan.Plan) { p.Eval.Enabled = false }, "no eval step"},
		{"built-in data", func(_ *EvalOptions, p *plan.Plan) { p.Eval.DataDir = "" }, ""},
		{"limit", func(o *EvalOptions, _ *plan.Plan) { o.Limit = -1 }, "must not be negative"},
		{"repeated concurrency", func(_ *EvalOptions, p *plan.Plan) { p.Eval.Concurrencies = []int{4, 8, 4} }, "listed once"},
		{"zero concurrency", func(_ *EvalOptions, p *plan.Plan) { p.Eval.Concurrencies = []int{4, 0} }, "must be positive"},
		{"lm-eval without workspace", func(_ *EvalOptions, p *plan.Plan) { p.Eval.Client = profile.EvalLMEval }, "needs the InferenceX workspace"},
		{"lm-eval without port", func(o *EvalOptions, p *plan.Plan) {
			p.Eval.Client, o.Workspace, o.Frontend = profile.EvalLMEval, "/ws", "http://head"
		}, `frontend URL "http://head"`},
	}
	for _, tt := range tests {
		pl := testPlan(t)
		pl.Eval.DataDir = "/data/gsm8k"
		opts := EvalOptions{Frontend: "http://127.0.0.1:8000"}
		tt.edit(&opts, pl)
		err := CheckEval(pl, opts)
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: CheckEval: %v, want %q", tt.name, err, tt.want)
		}
	}
}

// batchConcRE is validate_scores.py's CONC_SUFFIX_RE: how InferenceX reads
// a staged eval result's concurrency back from its name.
var batchConcRE = regexp.MustCompile(`_conc(\d+)(?:_\d+)?\.json$`)

// An EVAL_CONC list runs the eval at every concurrency and stages what
// validate_scores --expected-concs checks: one results*_conc<N>.json per
// concurrency (and its samples), and meta_env.json listing them all.
func TestEvalBatch(t *testing.T) {
	pl := nativeEvalPlan(t)
	pl.Eval.Concurrencies = []int{8, 2, 16}
	pl.Eval.Concurrency = 8
	frontend := answeringMock(t, 0.95)
	var out bytes.Buffer
	er, err := Eval(context.Background(), pl, EvalOptions{Frontend: frontend, ModelPrefix: "dsr1", Limit: evalDocs, Out: &out,
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	if len(er.Batch) != 3 {
		t.Fatalf("batch %+v, want 3 concurrencies", er.Batch)
	}
	ents, err := os.ReadDir(pl.Eval.ResultDir)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	var samples int
	for _, e := range ents {
		name := e.Name()
		switch {
		case e.IsDir():
			t.Errorf("left a directory %s in the result directory", name)
		case name == "meta_env.json":
		case strings.HasPrefix(name, "results") && strings.HasSuffix(name, ".json"):
			m := batchConcRE.FindStringSubmatch(name)
			if m == nil {
				t.Errorf("%s: no _conc<N> suffix validate_scores reads", name)
				continue
			}
			n, _ := strconv.Atoi(m[1])
			got = append(got, n)
			back, err := results.ReadGSM8K(filepath.Join(pl.Eval.ResultDir, name))
			if err != nil || back.Samples != evalDocs {
				t.Errorf("%s: %v, %+v", name, err, back)
			}
		case strings.HasPrefix(name, "samples_gsm8k_") && strings.Contains(name, "_conc") && strings.HasSuffix(name, ".jsonl"):
			samples++
		default:
			t.Errorf("unexpected staged file %s", name)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{2, 8, 16}) || samples != 3 {
		t.Errorf("results for concurrencies %v and %d samples files, want [2 8 16] and 3", got, samples)
	}
	meta, err := gsm8k.ReadMetaEnv(er.Files.MetaEnv)
	if err != nil {
		t.Fatal(err)
	}
	if meta.EvalConcs == nil || !slices.Equal(*meta.EvalConcs, []int{8, 2, 16}) || !slices.Equal(*meta.CompletedEvalConcs, []int{8, 2, 16}) ||
		len(*meta.FailedEvalConcs) != 0 || meta.Conc != 8 || meta.InfmaxModelPrefix != "dsr1" {
		t.Errorf("meta_env.json %+v, want eval_concs [8 2 16] all completed, conc 8", meta)
	}
	for _, c := range []string{"[conc=8] gsm8k:", "[conc=2] gsm8k:", "[conc=16] gsm8k:"} {
		if !strings.Contains(out.String(), c) {
			t.Errorf("stdout %q lacks %q", out.String(), c)
		}
	}
}

// A concurrency that fails is listed in failed_eval_concs, the others still
// run, and the eval fails after writing meta_env.json.
func TestEvalBatchFailure(t *testing.T) {
	pl := nativeEvalPlan(t)
	pl.Eval.Concurrencies = []int{2, 4}
	frontend := answeringMock(t, 0.95)
	// When the second concurrency's last document is scored, a file takes
	// its run directory's place: its results cannot be written and it
	// fails; the first is unaffected.
	if err := os.MkdirAll(pl.Eval.ResultDir, 0o755); err != nil {
		t.Fatal(err)
	}
	calls := 0
	opts := EvalOptions{Frontend: frontend, Limit: evalDocs, Getenv: func(string) string { return "" },
		Progress: func(done, total int) {
			if done == total {
				calls++
				if calls == 2 {
					os.WriteFile(filepath.Join(pl.Eval.ResultDir, ".conc4"), nil, 0o644)
				}
			}
		}}
	er, err := Eval(context.Background(), pl, opts)
	if err == nil || !strings.Contains(err.Error(), "concurrency 4") {
		t.Fatalf("Eval: %v, want concurrency 4's failure", err)
	}
	meta, merr := gsm8k.ReadMetaEnv(filepath.Join(pl.Eval.ResultDir, "meta_env.json"))
	if merr != nil {
		t.Fatal(merr)
	}
	if !slices.Equal(*meta.CompletedEvalConcs, []int{2}) || !slices.Equal(*meta.FailedEvalConcs, []int{4}) {
		t.Errorf("meta_env.json completed %v failed %v, want [2] and [4]", *meta.CompletedEvalConcs, *meta.FailedEvalConcs)
	}
	if er == nil || len(er.Batch) != 2 || er.Batch[0].Err != nil || er.Batch[1].Err == nil {
		t.Errorf("batch %+v", er)
	}
}

func TestBatchName(t *testing.T) {
	taken := map[string]bool{"results_x_conc8.json": true, "results_x_conc8_2.json": true}
	for _, c := range []struct {
		base string
		conc int
		want string
	}{
		{"results_2026-01-02T03-04-05.json", 8, "results_2026-01-02T03-04-05_conc8.json"},
		{"samples_gsm8k_2026-01-02T03-04-05.jsonl", 64, "samples_gsm8k_2026-01-02T03-04-05_conc64.jsonl"},
		{"results_x.json", 8, "results_x_conc8_3.json"},
	} {
		if got := BatchName(c.base, c.conc, func(n string) bool { return taken[n] }); got != c.want {
			t.Errorf("BatchName(%q, %d) = %q, want %q", c.base, c.conc, got, c.want)
		}
	}
}
