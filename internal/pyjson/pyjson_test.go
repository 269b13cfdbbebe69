package pyjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strings"
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

// TestQuoteAgainstPython holds both quoting modes to Python's own json.dumps
// over strings with every class of character it treats apart: quotes and
// backslash, the short escapes, other controls, DEL, Latin-1, the BMP,
// astral planes and the surrogate-pair boundary.
func TestQuoteAgainstPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python comparison needs it")
	}
	inputs := []string{"", "plain", "a\"b\\c", "\n\r\t\b\f", "\x00\x01\x1f", " ~\x7f\u0080", "é€",
		"\uffff\U00010000😀\U0010ffff", "</script>&'", "mixed \x7f é \U0001F600 \x1b"}
	for _, ascii := range []bool{true, false} {
		in, _ := json.Marshal(inputs)
		script := fmt.Sprintf("import json,sys\nfor s in json.loads(sys.stdin.read()): print(json.dumps(s, ensure_ascii=%s))",
			map[bool]string{true: "True", false: "False"}[ascii])
		cmd := exec.Command(py, "-c", script)
		cmd.Stdin = bytes.NewReader(in)
		cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("python3: %v", err)
		}
		want := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
		if len(want) != len(inputs) {
			t.Fatalf("python printed %d lines for %d inputs", len(want), len(inputs))
		}
		for i, s := range inputs {
			quote := AppendString
			if !ascii {
				quote = AppendStringUnicode
			}
			if got := string(quote(nil, s)); got != want[i] {
				t.Errorf("ensure_ascii=%v %q: got %s, Python %s", ascii, s, got, want[i])
			}
		}
	}
}
