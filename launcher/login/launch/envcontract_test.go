package launch

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/shareddata"
	"github.com/slurmbench/slurmbench/launcher/plan"
)

// envReads reads the recorded facts of what InferenceX's job-side scripts
// read from the environment (../shared/data/facts/inferencex-env-reads.tsv:
// tree, script, variable; its README says how each row was recorded: the
// August and September trees scanned by name, the inferencex-e2e rows of
// today's scripts read by hand). The scripts themselves are other
// projects' code and are not kept anywhere the tests can run them.
func envReads(t *testing.T) (reads map[string][]string, trees map[string]int) {
	t.Helper()
	p := shareddata.Path(t, "data", "facts", "inferencex-env-reads.tsv")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	reads, trees = map[string][]string{}, map[string]int{}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "tree\tscript\tvariable" {
		t.Fatalf("%s: header %q, want tree, script, variable", p, lines[0])
	}
	for i, line := range lines[1:] {
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[0] == "" || f[1] == "" || !envNameRef.MatchString(f[2]) {
			t.Fatalf("%s:%d: %q is not tree, script, variable", p, i+2, line)
		}
		tree, _, _ := strings.Cut(f[0], "@")
		trees[tree]++
		reads[f[2]] = append(reads[f[2]], f[0]+":"+f[1])
	}
	return reads, trees
}

var envNameRef = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)

// TestEnvContractCoversInferenceXScripts: every variable an InferenceX job
// script reads — the August and September trees and today's
// inferencex-e2e scripts (srt_fixed_sequence.sh, srt_eval.sh,
// srt_agentic.sh) — is passed to the job, provided by the job, or withheld
// with a reason.
func TestEnvContractCoversInferenceXScripts(t *testing.T) {
	reads, trees := envReads(t)
	for _, tree := range []string{"inferencex", "inferencex-v2", "inferencex-e2e"} {
		if trees[tree] == 0 {
			t.Errorf("the facts have no rows of %s: the contract would not cover its scripts", tree)
		}
	}
	var names []string
	for n := range reads {
		names = append(names, n)
	}
	sort.Strings(names)
	passed := map[string]bool{}
	for _, n := range workflowVars {
		passed[n] = true
	}
	for _, n := range names {
		switch {
		case passed[n], hasAnyPrefix(n, workflowPrefixes), jobProvidedVars[n] != "", withheldVars[n] != "":
		default:
			t.Errorf("%s is read by %s but is neither passed to the job (workflowVars, workflowPrefixes), provided by the job (jobProvidedVars) nor withheld with a reason (withheldVars)", n, strings.Join(reads[n], ", "))
		}
	}
	// The names issue #24 found by reading the scripts by hand, and the
	// ones today's scripts added: the facts must hold them, or they are
	// not what the jobs read.
	for _, n := range []string{"PREFILL_PP_SIZE", "DECODE_DCP_SIZE", "RECIPE_FINGERPRINT", "TOTAL_CPU_DRAM_GB",
		"ROUTER_METADATA", "KV_P2P_TRANSFER", "IS_MULTINODE", "EVAL_ONLY", "SYNTHETIC_ACCEPTANCE", "NUM_SPEC_TOKENS", "THINKING_MODE",
		"CONC_LIST", "EVAL_CONC", "SRT_FRONTEND_HOST", "SRT_MEASUREMENT_WINDOW_DIR"} {
		if reads[n] == nil {
			t.Errorf("the facts record no read of %s", n)
		}
	}
	t.Logf("%d variables read by the scripts", len(names))
}

func TestEnvContractListsAreConsistent(t *testing.T) {
	seen := map[string]string{}
	check := func(list, n, reason string) {
		if !envNameRef.MatchString(n) {
			t.Errorf("%s: %q is not an environment variable name", list, n)
		}
		if prev, ok := seen[n]; ok {
			t.Errorf("%s is in both %s and %s", n, prev, list)
		}
		seen[n] = list
		if reason == "" {
			t.Errorf("%s: %s has no reason", list, n)
		}
	}
	for _, n := range workflowVars {
		check("workflowVars", n, "passed")
	}
	for n, r := range jobProvidedVars {
		check("jobProvidedVars", n, r)
	}
	for n, r := range withheldVars {
		check("withheldVars", n, r)
		if hasAnyPrefix(n, workflowPrefixes) {
			t.Errorf("withheld %s matches a passed prefix", n)
		}
	}
}

func TestJobEnvPassesNamesAndPrefixes(t *testing.T) {
	t.Setenv("PREFILL_PP_SIZE", "2")
	t.Setenv("AIPERF_DRAIN_TIMEOUT_SECONDS", "30")
	t.Setenv("MYLAB_KNOB", "on")
	t.Setenv("MODAL_TOKEN_SECRET", "s3cret")
	t.Setenv("OTHER_THING", "x")
	pl := &plan.Plan{EnvPassthroughPrefixes: []string{"MYLAB_"}}
	got := strings.Join(JobEnv(pl), "\n") + "\n"
	for _, want := range []string{"PREFILL_PP_SIZE=2\n", "AIPERF_DRAIN_TIMEOUT_SECONDS=30\n", "MYLAB_KNOB=on\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("job env lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"MODAL_TOKEN_SECRET", "OTHER_THING"} {
		if strings.Contains(got, absent+"=") {
			t.Errorf("job env passes %s:\n%s", absent, got)
		}
	}
	// A secret named in env.passthrough does pass.
	pl.EnvPassthrough = []string{"MODAL_TOKEN_SECRET"}
	if got := strings.Join(JobEnv(pl), "\n"); !strings.Contains(got, "MODAL_TOKEN_SECRET=s3cret") {
		t.Errorf("env.passthrough did not pass the named secret:\n%s", got)
	}
}
