package profile

import (
	"encoding/json"
	"strings"
	"testing"
)

// Names are checked where they are parsed — a flag (Parse*), TOML or JSON
// (UnmarshalText) — and the empty string stays "not set".
func TestKindsParsedOnce(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
		parse          func(string) (string, error)
	}{
		{"runtime", "enroot", "", func(s string) (string, error) { v, err := ParseRuntime(s); return string(v), err }},
		{"runtime", "oci", "", func(s string) (string, error) { v, err := ParseRuntime(s); return string(v), err }},
		{"runtime", "docker", `"docker" is not one of pyxis, enroot, oci, none`, func(s string) (string, error) { v, err := ParseRuntime(s); return string(v), err }},
		{"bench", "sa-bench", "", func(s string) (string, error) { v, err := ParseBenchClient(s); return string(v), err }},
		{"bench", "aiperf", `"aiperf" is not one of native, sa-bench`, func(s string) (string, error) { v, err := ParseBenchClient(s); return string(v), err }},
		{"eval", "lm-eval", "", func(s string) (string, error) { v, err := ParseEvalClient(s); return string(v), err }},
		{"eval", "harness", `"harness" is not one of native, lm-eval`, func(s string) (string, error) { v, err := ParseEvalClient(s); return string(v), err }},
		{"eval", "", "", func(s string) (string, error) { v, err := ParseEvalClient(s); return string(v), err }},
	} {
		got, err := tt.parse(tt.in)
		switch {
		case tt.want == "" && (err != nil || got != tt.in):
			t.Errorf("%s %q: got %q, %v", tt.name, tt.in, got, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("%s %q: error %v, want %q", tt.name, tt.in, err, tt.want)
		}
	}

	var v struct {
		Runtime Runtime     `json:"runtime"`
		Bench   BenchClient `json:"bench"`
		Eval    EvalClient  `json:"eval"`
	}
	if err := json.Unmarshal([]byte(`{"runtime":"pyxis","bench":"native","eval":"lm-eval"}`), &v); err != nil || v.Eval != EvalLMEval {
		t.Errorf("decoding good names: %+v, %v", v, err)
	}
	for _, doc := range []string{`{"runtime":"docker"}`, `{"bench":"aiperf"}`, `{"eval":"sglang"}`} {
		if err := json.Unmarshal([]byte(doc), &v); err == nil || !strings.Contains(err.Error(), "is not one of") {
			t.Errorf("decoding %s: %v, want a refusal", doc, err)
		}
	}
}
