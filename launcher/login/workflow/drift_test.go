package workflow

import (
	"slices"
	"testing"
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
