package diagnose

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "worker.log")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTail(t *testing.T) {
	long := strings.Repeat("x", MaxLineBytes+100)
	longRunes := strings.Repeat("é", MaxLineBytes) // 2 bytes each: the cut falls inside one
	tests := []struct {
		name    string
		content string
		n       int
		want    []string
	}{
		{"empty file", "", 5, nil},
		{"only a newline", "\n", 5, []string{""}},
		{"fewer lines than asked", "a\nb\n", 5, []string{"a", "b"}},
		{"last n", "a\nb\nc\nd\n", 2, []string{"c", "d"}},
		{"no final newline", "a\nb\nc", 2, []string{"b", "c"}},
		{"blank lines kept", "a\n\nb\n", 3, []string{"a", "", "b"}},
		{"n zero", "a\n", 0, nil},
		{"CRLF", "a\r\nb\r\n", 2, []string{"a", "b"}},
		{"progress bar rewrites", "Loading: 10%\rLoading: 50%\rLoading: 100%\r\nnext\n", 2, []string{"Loading: 100%", "next"}},
		{"rewrite then error", "Capturing batches:  0%\rTraceback (most recent call last):\n", 1, []string{"Traceback (most recent call last):"}},
		{"cleared rewrite", "done\r   \r\n", 1, []string{"done"}},
		{"ANSI colours", "\x1b[2m2025-06-10T08:00:00Z\x1b[0m \x1b[31mERROR\x1b[0m dynamo_runtime: lost lease\n", 1, []string{"2025-06-10T08:00:00Z ERROR dynamo_runtime: lost lease"}},
		{"invalid UTF-8", "bad \xff\xfe byte\n", 1, []string{"bad \uFFFD byte"}},
		{"long line cut", long + "\nshort\n", 2, []string{long[:MaxLineBytes] + "…", "short"}},
		{"long line cut on a rune boundary", longRunes + "\n", 1, []string{longRunes[:MaxLineBytes] + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Tail(writeFile(t, tt.content), tt.n)
			if err != nil {
				t.Fatalf("Tail: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Tail = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTailMissingFile(t *testing.T) {
	_, err := Tail(filepath.Join(t.TempDir(), "nope.log"), 10)
	if err == nil || !strings.Contains(err.Error(), "nope.log") {
		t.Fatalf("Tail of a missing file: %v, want an error naming it", err)
	}
}

// TestTailFile crosses several read chunks on a real file.
func TestTailFile(t *testing.T) {
	var b strings.Builder
	for i := range 200_000 { // ~3.5 MB, many 64 KiB chunks
		fmt.Fprintf(&b, "INFO line %d\n", i)
	}
	got, err := Tail(writeFile(t, b.String()), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"INFO line 199997", "INFO line 199998", "INFO line 199999"}
	if !slices.Equal(got, want) {
		t.Errorf("Tail = %q, want %q", got, want)
	}
	// Lines that straddle a chunk boundary come out whole.
	got, err = Tail(writeFile(t, b.String()), 10_000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 10_000 || got[0] != "INFO line 190000" || got[9999] != "INFO line 199999" {
		t.Fatalf("Tail(10000) = %d lines from %q to %q", len(got), got[0], got[len(got)-1])
	}
	for i, l := range got {
		if want := fmt.Sprintf("INFO line %d", 190000+i); l != want {
			t.Fatalf("line %d = %q, want %q", i, l, want)
		}
	}
}

// synthLog is a 10 GB log of fixed-width lines "line 0000000000\n" that
// exists only as offsets; it counts the bytes read.
type synthLog struct{ read atomic.Int64 }

const synthLine = 16

func (s *synthLog) ReadAt(p []byte, off int64) (int, error) {
	for i := range p {
		pos := off + int64(i)
		line, col := pos/synthLine, pos%synthLine
		if col == synthLine-1 {
			p[i] = '\n'
		} else {
			p[i] = fmt.Sprintf("line %010d", line)[col]
		}
	}
	s.read.Add(int64(len(p)))
	return len(p), nil
}

func TestTailReadsOnlyTheEnd(t *testing.T) {
	const size = 10 << 30 / synthLine * synthLine
	r := &synthLog{}
	got, err := tail(r, size, 50)
	if err != nil {
		t.Fatal(err)
	}
	last := size/synthLine - 1
	if len(got) != 50 || got[0] != fmt.Sprintf("line %010d", last-49) || got[49] != fmt.Sprintf("line %010d", last) {
		t.Fatalf("tail = %d lines, %q … %q", len(got), got[0], got[len(got)-1])
	}
	if n := r.read.Load(); n > tailChunk {
		t.Errorf("read %d bytes of a 10 GB log for 50 lines", n)
	}
}

// TestTailOneHugeLine: a log that is one line longer than the read bound
// still gives that line (cut), not nothing, and reads at most the bound.
func TestTailOneHugeLine(t *testing.T) {
	r := readerFunc(func(p []byte, off int64) (int, error) {
		for i := range p {
			p[i] = 'z'
		}
		return len(p), nil
	})
	var read atomic.Int64
	counting := readerFunc(func(p []byte, off int64) (int, error) {
		read.Add(int64(len(p)))
		return r(p, off)
	})
	got, err := tail(counting, 1<<30, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != strings.Repeat("z", MaxLineBytes)+"…" {
		t.Errorf("tail = %d lines", len(got))
	}
	if read.Load() > maxTailBytes {
		t.Errorf("read %d bytes, bound is %d", read.Load(), maxTailBytes)
	}
}

type readerFunc func(p []byte, off int64) (int, error)

func (f readerFunc) ReadAt(p []byte, off int64) (int, error) { return f(p, off) }

var _ io.ReaderAt = readerFunc(nil)

// BenchmarkTail reads the last 500 lines of a 64 MiB log file.
func BenchmarkTail(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.log")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	line := []byte(strings.Repeat("[2025-06-10 08:00:00 TP0] Decode batch. #running-req: 3 ", 2) + "\n")
	for written := 0; written < 64<<20; written += len(line) {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if lines, err := Tail(p, 500); err != nil || len(lines) != 500 {
			b.Fatal(len(lines), err)
		}
	}
}
