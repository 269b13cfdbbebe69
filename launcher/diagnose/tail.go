package diagnose

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"
)

// MaxLineBytes is the longest line Tail returns; longer lines (a progress
// bar never ended by a newline, a dumped tensor) keep their start, where
// the exception name is, and end in "…".
const MaxLineBytes = 4096

// maxTailBytes bounds how far from the end Tail reads, so n lines of a log
// with megabyte-long lines still cost a bounded read.
const maxTailBytes = 16 << 20

// tailChunk is how much Tail reads per step backwards.
const tailChunk = 64 << 10

// ansiEscape matches terminal colour and cursor sequences (Dynamo's and
// vLLM's loggers colour their level names).
var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]`)

// Tail returns the last n lines of the file at path, reading backwards from
// its end so that a log of many gigabytes costs only what the lines need
// (at most 16 MiB). Lines are cleaned for display and matching:
//   - a trailing "\r" is dropped, and a line rewritten with "\r" (a progress
//     bar) keeps only its last non-empty text, as a terminal shows it;
//   - terminal escape sequences are removed;
//   - invalid UTF-8 becomes U+FFFD;
//   - lines longer than MaxLineBytes are cut.
//
// A last line without a newline counts as a line. An empty file gives no
// lines and no error.
func Tail(path string, n int) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the tail of %s: %w", path, err)
	}
	defer f.Close()
	if n <= 0 {
		return nil, nil
	}
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the tail of %s: %w", path, err)
	}
	lines, err := tail(f, st.Size(), n)
	if err != nil {
		return nil, fmt.Errorf("reading the tail of %s: %w", path, err)
	}
	return lines, nil
}

// tail is Tail on the first size bytes of r.
func tail(r io.ReaderAt, size int64, n int) ([]string, error) {
	data, complete, err := readTail(r, size, n)
	if err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, nil
	}
	data = bytes.TrimSuffix(data, []byte("\n"))
	raw := bytes.Split(data, []byte("\n"))
	if !complete && len(raw) > 1 {
		raw = raw[1:] // the first line started before what was read
	}
	if len(raw) > n {
		raw = raw[len(raw)-n:]
	}
	lines := make([]string, len(raw))
	for i, l := range raw {
		lines[i] = cleanLine(l)
	}
	return lines, nil
}

// readTail reads backwards from size until the data holds more than n
// line breaks (besides a final one), the start of the file, or
// maxTailBytes. complete reports whether it reached the start of the file.
func readTail(r io.ReaderAt, size int64, n int) (data []byte, complete bool, err error) {
	var chunks [][]byte
	pos, total, breaks := size, int64(0), 0
	for pos > 0 && breaks <= n && total < maxTailBytes {
		step := min(int64(tailChunk), pos, maxTailBytes-total)
		pos -= step
		buf := make([]byte, step)
		if _, err := r.ReadAt(buf, pos); err != nil && err != io.EOF {
			return nil, false, err
		}
		breaks += bytes.Count(buf, []byte("\n"))
		if pos+step == size && bytes.HasSuffix(buf, []byte("\n")) {
			breaks-- // the final newline ends the last line, it starts none
		}
		chunks = append(chunks, buf)
		total += step
	}
	data = make([]byte, 0, total)
	for i := len(chunks) - 1; i >= 0; i-- {
		data = append(data, chunks[i]...)
	}
	return data, pos == 0, nil
}

func cleanLine(b []byte) string {
	b = bytes.TrimRight(b, "\r")
	if i := bytes.LastIndexByte(b, '\r'); i >= 0 {
		// A terminal shows the last rewrite; skip rewrites that only
		// cleared the line.
		parts := bytes.Split(b, []byte("\r"))
		b = parts[len(parts)-1]
		for k := len(parts) - 1; k >= 0 && len(bytes.TrimSpace(b)) == 0; k-- {
			b = parts[k]
		}
	}
	if bytes.IndexByte(b, 0x1b) >= 0 {
		b = ansiEscape.ReplaceAll(b, nil)
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) > MaxLineBytes {
		cut := MaxLineBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
