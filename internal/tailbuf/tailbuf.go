// Package tailbuf keeps the last bytes a process wrote, for error messages
// and diagnosis: a bounded io.Writer that any number of goroutines (a
// process's stdout and stderr copiers) may write to at once.
package tailbuf

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer keeps the last Max bytes written to it (DefaultMax when Max is 0).
type Buffer struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

// DefaultMax is the bound of a zero Buffer.
const DefaultMax = 16 << 10

// New returns a Buffer keeping the last max bytes.
func New(max int) *Buffer { return &Buffer{Max: max} }

func (t *Buffer) limit() int {
	if t.Max <= 0 {
		return DefaultMax
	}
	return t.Max
}

// Write keeps the tail of everything written; it never fails.
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.limit()
	t.buf = append(t.buf, p...)
	// Trim only past twice the bound, so a stream of small writes is not
	// copied down on every one of them.
	if len(t.buf) > 2*limit {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-limit:]...)
	}
	return len(p), nil
}

// String is the kept tail as valid UTF-8: at most Max bytes, except just
// after a write, when it may hold up to twice that.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.limit()
	b := t.buf
	if len(b) > limit {
		b = b[len(b)-limit:]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// Lines is the kept tail split into lines, the last n of them (all when n
// <= 0); a trailing newline does not make an empty last line.
func (t *Buffer) Lines(n int) []string {
	return LastLines(t.String(), n)
}

// LastLines is the last n lines of s (all when n <= 0).
func LastLines(s string, n int) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// Last is the last n lines of the kept tail joined by newlines.
func (t *Buffer) Last(n int) string {
	return strings.Join(t.Lines(n), "\n")
}
