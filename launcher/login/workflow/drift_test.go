package workflow

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/slurmbench/slurmbench/internal/exitcode"
)

// TestPassthroughNamesNewest: every name pattern of the newest stored
// WORKLOAD_ENV (submit.py stored id 70212982679) passes a variable that is
// set, and only those: each case sets one variable and names whether the
// eval is passed it.
func TestPassthroughNamesNewest(t *testing.T) {
	for _, tc := range []struct {
		name string
		pass bool
	}{
		{"SWEBENCH_SPLIT", true},
		{"SWEBENCH_", true},
		{"MODAL_TOKEN_ID", true},
		{"MODAL_TOKEN_SECRET", true},
		{"MODAL_TOKEN", false},
		{"MODAL_TOKEN_ID_X", false},
		{"ATTN_DP_SIZE", true},
		{"PREFILL_ATTN_DP_SIZE", true},
		{"DECODE_ATTN_DP_SIZE", true},
		{"ATTN_DP", false},
		{"XSWEBENCH_A", false},
		{"EVAL_TASKS", true},
		{"TP", true},
		{"TP_SIZE", false},
	} {
		got := PassthroughNames(Env{tc.name: "v"})
		if pass := slices.Contains(got, tc.name); pass != tc.pass {
			t.Errorf("%s set: passed %v, want %v", tc.name, pass, tc.pass)
		}
		if empty := PassthroughNames(Env{tc.name: ""}); len(empty) != 0 {
			t.Errorf("%s empty: passed %v, want none", tc.name, empty)
		}
	}
}

// TestAttentionDPOverrides: each attention-DP size the workflow sets
// becomes a string in benchmark.env, in InferenceX's order; unset or empty
// ones add nothing.
func TestAttentionDPOverrides(t *testing.T) {
	for _, tc := range []struct {
		env  Env
		want []string
	}{
		{Env{}, nil},
		{Env{"ATTN_DP_SIZE": ""}, nil},
		{Env{"ATTN_DP_SIZE": "4"}, []string{`--set benchmark.env.ATTN_DP_SIZE="4"`}},
		{Env{"DECODE_ATTN_DP_SIZE": "16", "PREFILL_ATTN_DP_SIZE": "2", "ATTN_DP_SIZE": "8"},
			[]string{`--set benchmark.env.ATTN_DP_SIZE="8"`, `--set benchmark.env.PREFILL_ATTN_DP_SIZE="2"`, `--set benchmark.env.DECODE_ATTN_DP_SIZE="16"`}},
		{Env{"PREFILL_ATTN_DP_SIZE": `a"b`}, []string{`--set benchmark.env.PREFILL_ATTN_DP_SIZE="a\"b"`}},
	} {
		got, err := AttentionDPOverrides(tc.env)
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		var s []string
		for _, o := range got {
			s = append(s, o.String())
			if o.Value.Tag != "!!str" {
				t.Errorf("%v: %s parses as %s, want a string", tc.env, o.String(), o.Value.Tag)
			}
		}
		if !slices.Equal(s, tc.want) {
			t.Errorf("%v:\n got %q\nwant %q", tc.env, s, tc.want)
		}
	}
}

// TestRequestRules: each rule of InferenceX's request models
// (request.py@4b2ffc9c) on cases built for it — which path reads which
// integer, the order variables are named in, the validator that runs only
// on valid fields — and that no refusal echoes a value.
func TestRequestRules(t *testing.T) {
	const secret = "s3cr3t-value"
	for _, tc := range []struct {
		name    string
		env     Env
		ok      bool
		missing []string
		invalid []string
	}{
		{name: "multi-node does not read ISL/OSL/TP", env: with(multinodeEnv(), "ISL", secret, "OSL", secret, "TP", secret), ok: true},
		{name: "single-node reads ISL", env: with(singleNodeEnv(), "ISL", secret), invalid: []string{"ISL: " + intMessage}},
		{name: "CONC on every path", env: with(multinodeEnv(), "CONC", secret), invalid: []string{"CONC: " + intMessage}},
		{name: "SALLOC_TIME_LIMIT on every path", env: with(multinodeEnv(), "SALLOC_TIME_LIMIT", secret), invalid: []string{"SALLOC_TIME_LIMIT: " + intMessage}},
		{name: "ENROOT_IMPORT_TIME_LIMIT on every path", env: with(multinodeEnv(), "ENROOT_IMPORT_TIME_LIMIT", secret), invalid: []string{"ENROOT_IMPORT_TIME_LIMIT: " + intMessage}},
		{name: "ENROOT_IMPORT_TIME_LIMIT optional", env: with(singleNodeEnv(), "ENROOT_IMPORT_TIME_LIMIT", "<unset>"), ok: true},
		{name: "integers allow whitespace and a sign", env: with(singleNodeEnv(), "TP", " 8 ", "SALLOC_TIME_LIMIT", "+480"), ok: true},
		{name: "CONC_LIST word named by index", env: with(multinodeEnv(), "CONC_LIST", "4 "+secret+" 8 x"),
			invalid: []string{"CONC_LIST.1: " + intMessage, "CONC_LIST.3: " + intMessage}},
		{name: "field order: missing and invalid", env: with(singleNodeEnv(), "HF_HUB_CACHE", "", "TP", "", "MODEL", "", "GPU_COUNT", secret, "CONC", secret),
			missing: []string{"MODEL", "TP", "HF_HUB_CACHE"}, invalid: []string{"CONC: " + intMessage, "GPU_COUNT: " + intMessage}},
		{name: "THINKING_MODE rule waits for valid fields", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "mtp", "THINKING_MODE", "", "PRECISION", ""),
			missing: []string{"PRECISION"}, invalid: []string{}},
		{name: "THINKING_MODE rule on valid fields", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "mtp", "THINKING_MODE", ""),
			invalid: []string{"THINKING_MODE is required for speculative AgentX throughput runs"}},
		{name: "non-speculative AgentX needs none", env: with(multinodeEnv(), "IS_AGENTIC", "1", "SPEC_DECODING", "none", "THINKING_MODE", ""), ok: true},
		{name: "EVAL_CONC value not echoed", env: with(multinodeEnv(), "EVAL_CONC", secret), invalid: []string{"EVAL_CONC: each entry must be a positive integer"}},
		{name: "RUNNER_NAME line break not echoed", env: with(multinodeEnv(), "RUNNER_NAME", secret+"\n"), invalid: []string{"RUNNER_NAME: must not hold a line break or NUL"}},
	} {
		r, err := ParseRequest(tc.env)
		if tc.ok {
			if err != nil || r == nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var re *RequestError
		if !errors.As(err, &re) || exitcode.Of(err) != exitcode.Config {
			t.Errorf("%s: err %v, want a RequestError, exit 2", tc.name, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the refusal echoes a value: %v", tc.name, err)
		}
		if tc.missing != nil && !slices.Equal(re.Missing, tc.missing) {
			t.Errorf("%s: missing %v, want %v", tc.name, re.Missing, tc.missing)
		}
		if tc.invalid != nil && !slices.Equal(append([]string{}, re.Invalid...), tc.invalid) {
			t.Errorf("%s: invalid %q, want %q", tc.name, re.Invalid, tc.invalid)
		}
	}
}
