package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// evalConcRE is InferenceX's validate_scores.py CONC_SUFFIX_RE: how the
// workflow's score check reads a staged result's concurrency.
var evalConcRE = regexp.MustCompile(`_conc(\d+)(?:_\d+)?\.json$`)

// TestEvalListEvalOnly: InferenceX's eval-only job with an eval-conc list
// and an EVAL_CONFIG_FILE, on the test cluster. The eval recipe (not
// CONFIG_FILE's) is served, the eval runs at every listed concurrency
// against that one deployment, and the stage directory holds what
// validate_scores --expected-concs "16 4" accepts: one results*_conc<N>.json
// per concurrency, their samples, and meta_env.json listing them all as
// completed.
//
// The same run checks the staged manifest's provenance: every step that
// ran left its fingerprint (argv, environment names), the mock image's
// probe says it found no nvidia-smi and no packages, and no environment
// value is in the manifest.
func TestEvalListEvalOnly(t *testing.T) {
	t.Parallel()
	c := setup(t)
	name := uniqueName("e2e-evallist")
	key := filepath.Join(c.Root, "workspaces", name+"-answer-key.jsonl")
	if err := os.MkdirAll(filepath.Dir(key), 0o777); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(c.Binary, "mock-answer-key", "--accuracy", "1", "--out", key).CombinedOutput(); err != nil {
		t.Fatalf("mock-answer-key: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = os.Remove(key) })
	b, err := os.ReadFile(filepath.Join(c.repo, "examples", "mock-2p1d.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rec := strings.Replace(string(b), "/model/gsm8k-answer-key.jsonl", key, 1)
	// The demo's 10 ms per token makes the eval's answers take seconds
	// each; this test is about what is staged, not about timing.
	rec = strings.Replace(rec, "itl: 10ms", "itl: 1ms", 1)
	evalRec := strings.Replace(rec, "\nname: mock-2p1d\n", "\nname: "+name+"\n", 1)
	// CONFIG_FILE's recipe would name the job differently: the job found
	// under name proves the eval recipe was planned.
	benchRec := strings.Replace(rec, "\nname: mock-2p1d\n", "\nname: "+name+"-bench\n", 1)
	r := c.prepare(t, runOpts{name: name, recipe: evalRec,
		env: []string{"EVAL_ONLY=true", "EVAL_CONC=16 4", "EVAL_LIMIT=200", "RUNNER_TYPE=" + secretish}})
	benchPath := filepath.Join(r.dir, "bench.yaml")
	if err := os.WriteFile(benchPath, []byte(benchRec), 0o644); err != nil {
		t.Fatal(err)
	}
	r.opts.args = []string{"--config-file", benchPath, "--eval-config-file", r.recipe}
	r.recipe = ""
	r.start()
	if code := r.wait(8 * time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.output())
	}
	r.assertNoLiveJobs(time.Now().Add(30 * time.Second))
	if len(r.jobs()) == 0 {
		t.Errorf("no job named %s: the eval recipe was not the one planned", name)
	}
	ents, err := os.ReadDir(r.stage)
	if err != nil {
		t.Fatal(err)
	}
	var concs []int
	samples := 0
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, "results") && strings.HasSuffix(n, ".json"):
			m := evalConcRE.FindStringSubmatch(n)
			if m == nil {
				t.Errorf("staged %s without the _conc<N> suffix validate_scores reads", n)
				continue
			}
			v, _ := strconv.Atoi(m[1])
			concs = append(concs, v)
		case strings.HasPrefix(n, "samples") && strings.HasSuffix(n, ".jsonl"):
			samples++
		}
	}
	slices.Sort(concs)
	if !slices.Equal(concs, []int{4, 16}) || samples != 2 {
		t.Errorf("staged results for %v and %d samples files, want [4 16] and 2", concs, samples)
	}
	b, err = os.ReadFile(filepath.Join(r.stage, "meta_env.json"))
	if err != nil {
		t.Fatalf("meta_env.json not staged: %v", err)
	}
	var meta struct {
		Conc      int   `json:"conc"`
		EvalConcs []int `json:"eval_concs"`
		Completed []int `json:"completed_eval_concs"`
		Failed    []int `json:"failed_eval_concs"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(meta.EvalConcs, []int{16, 4}) || !slices.Equal(meta.Completed, []int{16, 4}) || len(meta.Failed) != 0 || meta.Conc != 16 {
		t.Errorf("meta_env.json %s, want eval_concs [16, 4] all completed, conc 16", b)
	}
	if got := stagedResults(t, r.stage); slices.ContainsFunc(got, func(n string) bool { return strings.HasPrefix(n, "results_concurrency_") }) {
		t.Errorf("eval-only run staged benchmark results %v", got)
	}
	// The summary gives each concurrency's scores.
	if out := r.stdout.String(); !regexp.MustCompile(`c16 strict-match 1\.0000.*; c4 strict-match 1\.0000`).MatchString(out) {
		t.Errorf("summary lacks both concurrencies' scores:\n%s", out)
	}
	checkRuntimeProvenance(t, filepath.Join(r.stage, "manifest.json"))
	t.Logf("eval-only at 2 concurrencies ran in %s", r.ended.Sub(r.started).Round(time.Second))
	r.removeOnPass()
}

// secretish is a value the run's environment carries (RUNNER_TYPE, passed
// to the job) that the manifest must never hold: names only.
const secretish = "value-never-in-the-manifest-7f3a"

func checkRuntimeProvenance(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("staged manifest: %v", err)
	}
	if strings.Contains(string(b), secretish) {
		t.Errorf("the manifest holds an environment value (RUNNER_TYPE's)")
	}
	var m struct {
		SchemaVersion int `json:"schema_version"`
		Provenance    struct {
			Runtime *struct {
				Processes []struct {
					Step     string   `json:"step"`
					Host     string   `json:"host"`
					Argv     []string `json:"argv"`
					EnvNames []string `json:"env_names"`
					Notes    []string `json:"notes"`
				} `json:"processes"`
				Missing []string `json:"missing"`
			} `json:"runtime"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	rt := m.Provenance.Runtime
	if m.SchemaVersion != 2 || rt == nil {
		t.Fatalf("manifest schema %d without runtime:\n%s", m.SchemaVersion, b)
	}
	steps := map[string]bool{}
	for _, p := range rt.Processes {
		t.Logf("fingerprint %s on %s: %d env names, notes %q", p.Step, p.Host, len(p.EnvNames), p.Notes)
		steps[p.Step] = true
		if p.Host == "" || len(p.Argv) == 0 || !slices.Contains(p.EnvNames, "PATH") {
			t.Errorf("step %s: host %q, argv %q, env names %v", p.Step, p.Host, p.Argv, p.EnvNames)
		}
		if !slices.Contains(p.Notes, "nvidia-smi not found in PATH: GPU model and driver unknown") ||
			!slices.Contains(p.Notes, "no Python site-packages found: engine and library versions unknown") {
			t.Errorf("step %s on the mock cluster: notes %q, want nvidia-smi's and site-packages' absence said", p.Step, p.Notes)
		}
		if p.Step == "eval" && (!slices.Contains(p.Argv, "eval") || !slices.Contains(p.EnvNames, "RUNNER_TYPE")) {
			t.Errorf("eval step: argv %q env names %v, want the eval command and RUNNER_TYPE's name", p.Argv, p.EnvNames)
		}
	}
	if !steps["eval"] || len(steps) < 3 || len(rt.Missing) != 0 {
		t.Errorf("fingerprinted steps %v, missing %v: want every step (workers, frontend, eval)", steps, rt.Missing)
	}
}

// runtimeMissing is the staged manifest's list of steps without a
// fingerprint; a manifest without a runtime fails the test.
func runtimeMissing(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("staged manifest: %v", err)
	}
	var m struct {
		Provenance struct {
			Runtime *struct {
				Processes []json.RawMessage `json:"processes"`
				Missing   []string          `json:"missing"`
			} `json:"runtime"`
		} `json:"provenance"`
	}
	if err := json.Unmarshal(b, &m); err != nil || m.Provenance.Runtime == nil || len(m.Provenance.Runtime.Processes) == 0 {
		t.Fatalf("manifest %s: %v, no runtime processes", path, err)
	}
	return m.Provenance.Runtime.Missing
}
