package readlimit

import "bytes"

// Buffer keeps the first Limit bytes written to it and counts the rest: a
// child process's output read up to a bound, where the writer (the process)
// cannot be told to stop, so writes never fail and the caller asks
// Exceeded afterwards instead.
type Buffer struct {
	Limit int64
	buf   bytes.Buffer
	total int64
}

// Write keeps what fits under Limit; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	if room := b.Limit - int64(b.buf.Len()); room > 0 {
		b.buf.Write(p[:min(int64(len(p)), room)])
	}
	b.total += int64(len(p))
	return len(p), nil
}

// Bytes is what was kept: all of it unless Exceeded.
func (b *Buffer) Bytes() []byte { return b.buf.Bytes() }

// Exceeded reports whether more than Limit bytes were written.
func (b *Buffer) Exceeded() bool { return b.total > b.Limit }
