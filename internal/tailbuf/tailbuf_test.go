package tailbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestKeepsTheTail(t *testing.T) {
	b := New(64)
	for i := range 1000 {
		fmt.Fprintf(b, "line %04d\n", i)
	}
	if got := b.Last(2); got != "line 0998\nline 0999" {
		t.Errorf("Last(2) = %q", got)
	}
	if n := len(b.String()); n > 64 {
		t.Errorf("String() is %d bytes, want at most 64", n)
	}
	if cap(b.buf) > 4*64 {
		t.Errorf("buffer grew to %d bytes for a 64-byte bound", cap(b.buf))
	}
}

func TestLines(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"\n\n", 3, nil},
		{"a\nb\nc\n", 2, []string{"b", "c"}},
		{"a\nb\nc", 0, []string{"a", "b", "c"}},
		{"a\n\nb\n", 5, []string{"a", "", "b"}},
	} {
		var b Buffer
		b.Write([]byte(tc.in))
		if got := b.Lines(tc.n); strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("Lines(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestZeroValueBound(t *testing.T) {
	var b Buffer
	b.Write([]byte(strings.Repeat("x", 3*DefaultMax) + "\nend\n"))
	if got := b.Last(1); got != "end" {
		t.Errorf("Last(1) = %q", got)
	}
	if n := len(b.String()); n > DefaultMax {
		t.Errorf("String() is %d bytes, want at most %d", n, DefaultMax)
	}
}

func TestInvalidUTF8IsReplaced(t *testing.T) {
	var b Buffer
	b.Write([]byte("ok \xff\xfe bad\n"))
	if got := b.Last(1); got != "ok ? bad" {
		t.Errorf("Last(1) = %q", got)
	}
}

// TestConcurrentWriters: a process's stdout and stderr copiers write at once.
func TestConcurrentWriters(t *testing.T) {
	b := New(1 << 10)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 500 {
				fmt.Fprintf(b, "w%d %d\n", w, i)
			}
		})
	}
	wg.Wait()
	lines := b.Lines(0)
	if len(lines) == 0 {
		t.Fatal("nothing kept")
	}
	for _, l := range lines[1:] { // the first may be cut
		if !strings.HasPrefix(l, "w") {
			t.Errorf("torn line %q", l)
		}
	}
}
