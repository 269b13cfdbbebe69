package pyjson

import (
	"math"
	"testing"
)

func TestAppendFloat(t *testing.T) {
	// Each right-hand side is Python's json.dumps(value).
	for _, c := range []struct {
		v    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {0.0001, "0.0001"}, {1e-05, "1e-05"},
		{123456789, "123456789.0"}, {1e16, "1e+16"}, {1234567890123456, "1234567890123456.0"},
		{0.1, "0.1"}, {2.5e-7, "2.5e-07"}, {1.5e300, "1.5e+300"}, {26.050100451354066, "26.050100451354066"},
		{1e15, "1000000000000000.0"}, {9999999999999998, "9999999999999998.0"}, {12345.678, "12345.678"},
		{math.NaN(), "0.0"}, {math.Inf(1), "0.0"},
	} {
		if got := string(AppendFloat(nil, c.v)); got != c.want {
			t.Errorf("AppendFloat(%v) = %s, want %s", c.v, got, c.want)
		}
	}
}

func TestAppendString(t *testing.T) {
	// json.dumps("a\"b\\c\n\t\x01é€😀/<>&\x7f")
	want := `"a\"b\\c\n\t\u0001\u00e9\u20ac\ud83d\ude00/<>&\u007f"`
	if got := string(AppendString(nil, "a\"b\\c\n\t\x01é€😀/<>&\x7f")); got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestToJSON(t *testing.T) {
	in := `{"a": NaN, "b": [Infinity, -Infinity], "c": "NaN Infinity", "d": "\"NaN"}`
	want := `{"a": null, "b": [null, null], "c": "NaN Infinity", "d": "\"NaN"}`
	if got := string(ToJSON([]byte(in))); got != want {
		t.Errorf("ToJSON = %s, want %s", got, want)
	}
}
