package readlimit

import (
	"strings"
	"testing"
)

// TestBuffer: what fits under the limit is kept whole, one byte more is
// Exceeded with the first Limit bytes kept, and writes never fail.
func TestBuffer(t *testing.T) {
	for _, tc := range []struct {
		limit    int64
		writes   []string
		want     string
		exceeded bool
	}{
		{10, []string{"hello"}, "hello", false},
		{10, []string{"hello", "world"}, "helloworld", false},
		{10, []string{"hello", "world!"}, "helloworld", true},
		{4, []string{"ab", "cdef", "gh"}, "abcd", true},
		{0, []string{"x"}, "", true},
		{0, nil, "", false},
	} {
		b := &Buffer{Limit: tc.limit}
		for _, w := range tc.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if string(b.Bytes()) != tc.want || b.Exceeded() != tc.exceeded {
			t.Errorf("limit %d, writes %s: kept %q exceeded %v, want %q %v", tc.limit, strings.Join(tc.writes, "|"), b.Bytes(), b.Exceeded(), tc.want, tc.exceeded)
		}
	}
}
