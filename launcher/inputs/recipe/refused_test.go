package recipe

import (
	"errors"
	"fmt"
	"testing"
)

// TestRefusedField: the typed refusals name their field, wrapped or not;
// any other error, located or not, is no refusal.
func TestRefusedField(t *testing.T) {
	loc := Error{File: "r.yaml", Line: 3, Field: "benchmark.type", Msg: "m"}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"unsupported", &UnsupportedError{loc}, "benchmark.type"},
		{"srtctl refuses", &SrtctlRefusalError{Error{Field: "engine.prefill_container"}}, "engine.prefill_container"},
		{"duplicate key", &DuplicateKeyError{Err: loc}, "duplicate key"},
		{"wrapped", fmt.Errorf("planning: %w", &UnsupportedError{loc}), "benchmark.type"},
		{"plain recipe error", &loc, ""},
		{"other", errors.New("boom"), ""},
		{"nil", nil, ""},
	} {
		if got := RefusedField(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
