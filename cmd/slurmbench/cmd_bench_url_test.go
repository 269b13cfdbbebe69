package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
	"github.com/slurmbench/slurmbench/launcher/endpoint"
	"github.com/slurmbench/slurmbench/launcher/plan"
	"github.com/slurmbench/slurmbench/mockengine"
	"github.com/slurmbench/slurmbench/results"
)

// TestBenchURLMatchesRun: `bench --url` at the demo's point (examples/
// mock-2p1d.yaml: ISL 1024, OSL 128, c8x32, 2P1D on 4-GPU nodes) writes
// the files the in-job step of a run of that recipe writes, under the same
// names, with the same fields in the same order and the same values
// wherever the value is not a measurement; and prints the run's table.
func TestBenchURLMatchesRun(t *testing.T) {
	clearRenderEnv(t)
	out, errOut, code := runRender(t, "-p", filepath.Join(renderData(t), "profile.toml"),
		"-r", filepath.Join(repoRoot(t), "examples", "mock-2p1d.yaml"), "--json")
	if code != 0 {
		t.Fatalf("render: exit %d: %s", code, errOut)
	}
	var pl plan.Plan
	if err := json.Unmarshal([]byte(out), &pl); err != nil {
		t.Fatal(err)
	}
	served := pl.Model.ServedName
	frontend := mockengine.StartTest(t, mockengine.Options{Model: served})

	// The run: the plan's in-job step, its results under a temporary run directory.
	runResults := filepath.Join(t.TempDir(), "results")
	pl.Layout.Results = runResults
	pl.Benchmark.ResultDir = filepath.Join(runResults, filepath.Base(pl.Benchmark.ResultDir))
	pl.PlanFile = filepath.Join(t.TempDir(), "plan.json")
	writePlan(t, &pl)
	if _, errOut, code := runStep(t, "bench", "--plan", pl.PlanFile, "--frontend", frontend); code != 0 {
		t.Fatalf("bench --plan: exit %d: %s", code, errOut)
	}

	urlOut := t.TempDir()
	stdout, errOut, code := runStep(t, "bench", "--url", frontend+"/", "--model", served,
		"--isl", "1024", "--osl", "128", "--conc", "8x32",
		"--gpus", "12", "--prefill-gpus", "8", "--decode-gpus", "4", "--out", urlOut)
	if code != 0 {
		t.Fatalf("bench --url: exit %d: %s", code, errOut)
	}
	runFiles, urlFiles := resultFiles(t, runResults), resultFiles(t, urlOut)
	if len(runFiles) != 2 || !slices.Equal(runFiles, urlFiles) {
		t.Fatalf("result files: run %v, --url %v", runFiles, urlFiles)
	}
	measured := map[string]bool{"date": true, "duration": true, "benchmark_start_time_unix": true,
		"benchmark_end_time_unix": true, "request_throughput": true, "output_throughput": true,
		"total_token_throughput": true,
		// Measured distributions of the client's own latency (#25).
		"slurmbench_added_latency": true, "slurmbench_read_latency": true}
	for _, rel := range runFiles {
		runKeys, runVals := resultFields(t, filepath.Join(runResults, rel))
		urlKeys, urlVals := resultFields(t, filepath.Join(urlOut, rel))
		if !slices.Equal(runKeys, urlKeys) {
			t.Errorf("%s: fields differ:\nrun   %v\n--url %v", rel, runKeys, urlKeys)
		}
		for _, k := range runKeys {
			if measured[k] || strings.HasSuffix(k, "_ms") {
				continue
			}
			if string(runVals[k]) != string(urlVals[k]) {
				t.Errorf("%s: %s = %.80s in the run, %.80s with --url", rel, k, runVals[k], urlVals[k])
			}
		}
	}
	for _, want := range []string{"slurmbench against a URL: succeeded", "ctx8/gen4 c8", "ctx8/gen4 c32", "80/80", "320/320", "Total tok/s/GPU"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(errOut, "point 2/2 c32 benchmark: 100% 320/320 requests, ") {
		t.Errorf("progress lines missing:\n%s", errOut)
	}
}

// resultFiles lists the point result files under dir, relative to it.
func resultFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, perr := results.ParseName(d.Name()); perr == nil {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// resultFields returns a result file's keys in order and their raw values.
func resultFields(t *testing.T, path string) ([]string, map[string]json.RawMessage) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	vals := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		keys = append(keys, tok.(string))
		vals[tok.(string)] = v
	}
	return keys, vals
}

func TestBenchURLStagesAndRefuses(t *testing.T) {
	frontend := mockengine.StartTest(t, mockengine.Options{Model: stepModel})
	out := t.TempDir()
	_, errOut, code := runStep(t, "bench", "--url", frontend, "--model", stepModel, "--isl", "32", "--osl", "8",
		"--conc", "2", "--warmups", "0", "--out", out, "--result-filename", "mine")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	staged := filepath.Join(out, "mine_sa-bench_isl_32_osl_8_conc2_gpus_1.json")
	if _, err := os.Stat(staged); err != nil {
		t.Errorf("not staged under InferenceX's name: %v", err)
	}
	for _, name := range []string{"pareto.svg", "pareto.csv"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s not written beside the results: %v", name, err)
		}
	}
	if strings.Contains(errOut, "warmup:") {
		t.Errorf("--warmups 0 still warmed up:\n%s", errOut)
	}

	for _, tc := range []struct {
		name string
		args []string
		code exitcode.Code
		want string
	}{
		{"no scheme", []string{"--url", strings.TrimPrefix(frontend, "http://")}, exitcode.Config, "no scheme"},
		{"path", []string{"--url", frontend + "/v1"}, exitcode.Config, "without a path"},
		{"unknown model", []string{"--url", frontend, "--model", "other"}, exitcode.Config, "HTTP 404"},
		{"plan too", []string{"--url", frontend, "--plan", "p.json"}, exitcode.Config, "not both"},
		{"bad endpoint", []string{"--url", frontend, "--endpoint", "embeddings"}, exitcode.Config, "want completions or chat"},
		{"gpu split", []string{"--url", frontend, "--gpus", "4", "--prefill-gpus", "2"}, exitcode.Config, "--prefill-gpus 2 + --decode-gpus 0"},
		{"unreachable", []string{"--url", "http://127.0.0.1:1"}, exitcode.Engine, "not reachable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"bench", "--model", stepModel, "--isl", "32", "--osl", "8", "--conc", "2", "--out", t.TempDir()}, tc.args...)
			stdout, errOut, code := runStep(t, args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, errOut, tc.code, tc.want)
			}
			if lines := strings.Count(strings.TrimSpace(errOut), "\n"); lines != 0 || stdout != "" {
				t.Errorf("want one error line and no table; stderr %q, stdout %q", errOut, stdout)
			}
		})
	}
}

// TestEvalURL: `eval --url` writes a run's eval files into <out>/eval/ and
// prints the run's gsm8k line; below the threshold it exits 9.
func TestEvalURL(t *testing.T) {
	frontend, data := answeringFrontend(t, 20)
	t.Setenv("MODEL_PREFIX", "")
	out := t.TempDir()
	stdout, errOut, code := runStep(t, "eval", "--url", frontend, "--model", stepModel, "--data-dir", data, "--limit", "20", "--out", out)
	if code != 0 || !strings.Contains(stdout, "gsm8k: strict-match 0.9000") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	if !strings.Contains(errOut, "gsm8k: 100% 20/20 documents") {
		t.Errorf("no progress line:\n%s", errOut)
	}
	for _, pattern := range []string{"results_*.json", "samples_gsm8k_*.jsonl", "meta_env.json"} {
		if m, _ := filepath.Glob(filepath.Join(out, "eval", pattern)); len(m) != 1 {
			t.Errorf("%s in %s/eval: %v", pattern, out, m)
		}
	}
	_, errOut, code = runStep(t, "eval", "--url", frontend, "--model", stepModel, "--data-dir", data, "--limit", "20",
		"--out", t.TempDir(), "--model-prefix", "dsr1")
	if code != exitcode.Eval || !strings.Contains(errOut, "below threshold") {
		t.Errorf("exit %d, stderr %q; want %d", code, errOut, exitcode.Eval)
	}
	// Row 4 of issue #25: without --data-dir the built-in splits are used
	// (the same questions, so the same score).
	stdout, errOut, code = runStep(t, "eval", "--url", frontend, "--model", stepModel, "--limit", "20", "--out", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "gsm8k: strict-match 0.9000") {
		t.Errorf("eval --url without --data-dir: exit %d, stdout %q, stderr %q", code, stdout, errOut)
	}
	// Row 2: a second eval into the same --out is refused before any request.
	_, errOut, code = runStep(t, "eval", "--url", frontend, "--model", stepModel, "--limit", "20", "--out", out)
	if code != exitcode.Config || !strings.Contains(errOut, "give a new directory, or --overwrite") {
		t.Errorf("eval into a used --out: exit %d, stderr %q", code, errOut)
	}
}

// TestURLOutDir (row 2 of issue #25): without --out a fresh timestamped
// directory; an --out that is a file, or holds files, is refused (exit 2)
// unless --overwrite.
func TestURLOutDir(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 30, 0, 0, time.UTC)
	dir := t.TempDir()
	t.Chdir(dir)
	if got, err := endpoint.OutDir("", "bench", false, now); err != nil || got != "bench-20261203T083000Z" {
		t.Errorf("default out: %q, %v", got, err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := endpoint.OutDir(file, "bench", true, now); exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), "is a file, not a directory") {
		t.Errorf("a file: %v", err)
	}
	if _, err := endpoint.OutDir(dir, "bench", false, now); exitcode.Of(err) != exitcode.Config || !strings.Contains(err.Error(), "already holds 1 entries") {
		t.Errorf("a used dir: %v", err)
	}
	if got, err := endpoint.OutDir(dir, "bench", true, now); err != nil || got != dir {
		t.Errorf("a used dir with --overwrite: %q, %v", got, err)
	}
	empty := t.TempDir()
	if got, err := endpoint.OutDir(empty, "bench", false, now); err != nil || got != empty {
		t.Errorf("an empty dir: %q, %v", got, err)
	}
	// Refused before any request: nothing listens at the URL.
	_, errOut, code := runStep(t, "bench", "--url", "http://127.0.0.1:1", "--model", "m", "--isl", "8", "--osl", "8", "--conc", "1", "--out", file)
	if code != exitcode.Config || !strings.Contains(errOut, "is a file, not a directory") {
		t.Errorf("bench --out FILE: exit %d %s", code, errOut)
	}
}

// answeringFrontend starts a mock engine that answers the first docs gsm8k
// test questions from an answer key (90 % right) and returns its URL and
// the gsm8k data directory (from ../shared, see shareddata.Path).
func answeringFrontend(t *testing.T, docs int) (frontend, dataDir string) {
	t.Helper()
	data := filepath.Dir(shareddata.Path(t, "data", "gsm8k", gsm8k.TestFile))
	test, _, err := gsm8k.LoadDir(data)
	if err != nil {
		t.Fatalf("loading the gsm8k data: %v", err)
	}
	entries, err := gsm8k.MakeAnswerKey(test[:docs], 0.9, 5)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]mockengine.AnswerEntry, len(entries))
	for i, e := range entries {
		key[i] = mockengine.AnswerEntry{Question: e.Question, Completion: e.Completion}
	}
	return mockengine.StartTest(t, mockengine.Options{Model: stepModel, AnswerKey: mockengine.NewAnswerKey(key)}), data
}
