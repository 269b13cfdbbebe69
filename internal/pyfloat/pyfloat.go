// Package pyfloat writes a float64 the way Python does, for files and
// flags that must read exactly as srtctl's or lm-eval's Python writes them:
// the shortest digits that round-trip, always with a '.' or an exponent,
// scientific below 1e-4 and from 1e16.
package pyfloat

import (
	"math"
	"strconv"
	"strings"
)

// Repr is Python's repr(f) (and str(f)): "1.0", "0.85", "1e-05", "inf", "nan".
func Repr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	return finite(f)
}

// JSON is f as Python's json.dumps writes it: Repr, with NaN, Infinity and
// -Infinity for the non-finite values.
func JSON(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case math.IsNaN(f):
		return "NaN"
	}
	return finite(f)
}

func finite(f float64) string {
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	exp, _ := strconv.Atoi(sci[strings.IndexByte(sci, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return sci
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
