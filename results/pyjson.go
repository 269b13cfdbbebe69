package results

import (
	"bytes"
	"encoding/json"
	"math"
)

// number reads a JSON number; null, strings and the rest are not numbers.
func number(v json.RawMessage) (float64, bool) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// Number is the first member key's value as a number; false when it is
// absent or not a number (null, a string, NaN, infinite).
func (r *SABenchResult) Number(key string) (float64, bool) {
	for _, f := range r.members() {
		if f.key == key {
			return number(f.val)
		}
	}
	return 0, false
}
