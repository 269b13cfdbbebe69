package gsm8k

// lm-eval writes its files with Python's json module. These helpers produce
// the same text for the values we write, so hashes over prompts match and
// numbers read the same ("1.0", not "1").

import (
	"math"
	"strconv"
	"strings"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
	"github.com/slurmbench/slurmbench/internal/pyjson"
)

// PyFloat is a float64 that marshals like Python's repr(float): shortest
// round-trip digits, fixed notation for exponents in [-4, 16), always with a
// fractional part, scientific otherwise.
type PyFloat float64

// MarshalJSON implements json.Marshaler.
func (f PyFloat) MarshalJSON() ([]byte, error) { return []byte(pyfloat.JSON(float64(f))), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (f *PyFloat) UnmarshalJSON(b []byte) error {
	switch s := string(b); s {
	case "NaN":
		*f = PyFloat(math.NaN())
	case "Infinity":
		*f = PyFloat(math.Inf(1))
	case "-Infinity":
		*f = PyFloat(math.Inf(-1))
	default:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		*f = PyFloat(v)
	}
	return nil
}

// pyJSONString quotes s as json.dumps(..., ensure_ascii=False) does.
func pyJSONString(b *strings.Builder, s string) { b.Write(pyjson.AppendStringUnicode(nil, s)) }

// ChatPrompt is the prompt string lm-eval logs and hashes for a chat request:
// json.dumps(messages, ensure_ascii=False) with Python's default separators.
func ChatPrompt(msgs []Message) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"role": `)
		pyJSONString(&b, m.Role)
		b.WriteString(`, "content": `)
		pyJSONString(&b, m.Content)
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}
