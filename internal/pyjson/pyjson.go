// Package pyjson writes JSON the way Python's json.dump does (its default
// separators, repr floats, ensure_ascii strings) and reads what it writes
// that JSON does not allow (NaN, Infinity). SA-Bench result files and
// request bodies must be byte-identical to the Python tools' for the
// downstream scripts that diff or hash them.
package pyjson

import (
	"bytes"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/slurmbench/slurmbench/internal/pyfloat"
)

// Object appends members with json.dump's default separators. The zero
// value is an empty object; Bytes closes it.
type Object struct {
	b []byte
	n int
}

func (o *Object) Key(k string) {
	if o.n == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ", "...)
	}
	o.n++
	o.b = AppendString(o.b, k)
	o.b = append(o.b, ": "...)
}

// Write appends raw JSON text: the value after Key.
func (o *Object) Write(p []byte) { o.b = append(o.b, p...) }

// Bytes closes the object and returns its text.
func (o *Object) Bytes() []byte {
	if o.n == 0 {
		return []byte("{}")
	}
	return append(o.b, '}')
}

func (o *Object) Str(k, v string) { o.Key(k); o.b = AppendString(o.b, v) }
func (o *Object) Int(k string, v int) {
	o.Key(k)
	o.b = strconv.AppendInt(o.b, int64(v), 10)
}
func (o *Object) Float(k string, v float64) { o.Key(k); o.b = AppendFloat(o.b, v) }
func (o *Object) Floats(k string, v []float64) {
	o.Key(k)
	o.b = AppendFloats(o.b, v)
}

func (o *Object) Ints(k string, v []int) {
	o.Key(k)
	o.b = append(o.b, '[')
	for i, x := range v {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		o.b = strconv.AppendInt(o.b, int64(x), 10)
	}
	o.b = append(o.b, ']')
}

func (o *Object) Strs(k string, v []string) {
	o.Key(k)
	o.b = append(o.b, '[')
	for i, s := range v {
		if i > 0 {
			o.b = append(o.b, ", "...)
		}
		o.b = AppendString(o.b, s)
	}
	o.b = append(o.b, ']')
}

func AppendFloats(b []byte, v []float64) []byte {
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = AppendFloat(b, x)
	}
	return append(b, ']')
}

// AppendFloat appends f as json.dump writes a Python float (pyfloat.JSON).
// JSON has no NaN or infinity; SA-Bench's writer stores them as 0.
func AppendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		f = 0
	}
	return append(b, pyfloat.JSON(f)...)
}

// AppendString quotes s as json.dumps does with ensure_ascii (its
// default): everything outside ' '..'~' escaped, DEL included, non-ASCII as
// \uXXXX with surrogate pairs above the BMP.
func AppendString(b []byte, s string) []byte { return appendString(b, s, true) }

// AppendStringUnicode quotes s as json.dumps(..., ensure_ascii=False) does:
// only '"', '\\' and control characters below 0x20 are escaped; DEL and
// non-ASCII pass through as UTF-8.
func AppendStringUnicode(b []byte, s string) []byte { return appendString(b, s, false) }

func appendString(b []byte, s string, ascii bool) []byte {
	const hex = "0123456789abcdef"
	u4 := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20:
			b = u4(b, r)
		case r < 0x7f || !ascii:
			b = utf8.AppendRune(b, r)
		case r <= 0xffff:
			b = u4(b, r)
		default:
			r -= 0x10000
			b = u4(b, 0xd800+(r>>10))
			b = u4(b, 0xdc00+(r&0x3ff))
		}
	}
	return append(b, '"')
}

// ToJSON replaces the bare NaN, Infinity and -Infinity tokens that
// Python's json module emits with null, leaving strings untouched.
func ToJSON(b []byte) []byte {
	if !bytes.Contains(b, []byte("NaN")) && !bytes.Contains(b, []byte("Infinity")) {
		return b
	}
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			out = append(out, c)
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString = true
			out = append(out, c)
		case bytes.HasPrefix(b[i:], []byte("NaN")):
			out = append(out, "null"...)
			i += len("NaN") - 1
		case bytes.HasPrefix(b[i:], []byte("-Infinity")):
			out = append(out, "null"...)
			i += len("-Infinity") - 1
		case bytes.HasPrefix(b[i:], []byte("Infinity")):
			out = append(out, "null"...)
			i += len("Infinity") - 1
		default:
			out = append(out, c)
		}
	}
	return out
}
