package pyfloat

import (
	"math"
	"testing"
)

// TestPython: the strings Python 3 prints for repr(f) and json.dumps(f).
func TestPython(t *testing.T) {
	cases := []struct {
		f          float64
		repr, json string
	}{
		{1, "1.0", "1.0"},
		{0.85, "0.85", "0.85"},
		{1e-05, "1e-05", "1e-05"},
		{0.0001, "0.0001", "0.0001"},
		{1e16, "1e+16", "1e+16"},
		{123456789012345.6, "123456789012345.6", "123456789012345.6"},
		{-2.5, "-2.5", "-2.5"},
		{math.Inf(1), "inf", "Infinity"},
		{math.Inf(-1), "-inf", "-Infinity"},
		{math.NaN(), "nan", "NaN"},
	}
	for _, tc := range cases {
		if got := Repr(tc.f); got != tc.repr {
			t.Errorf("Repr(%v) = %q, want %q", tc.f, got, tc.repr)
		}
		if got := JSON(tc.f); got != tc.json {
			t.Errorf("JSON(%v) = %q, want %q", tc.f, got, tc.json)
		}
	}
}
