//go:build unix

package sabench

import (
	"testing"
	"time"
)

// BenchmarkH1Feed is the transport's CPU per token outside the socket:
// one HTTP chunk holding one SSE event, decoded and recorded.
func BenchmarkH1Feed(b *testing.B) {
	frame := []byte(httpChunk(string(mockChunk) + "\n\n"))
	rec := record{itl: make([]time.Duration, 0, 1024)}
	sr := streamRecorder{rec: &rec, start: time.Now()}
	p := h1Parser{sr: &sr, headDone: true, status: 200, framing: bodyChunked}
	cn := &h1Conn{buf: make([]byte, h1BufSize)}
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 {
			rec.itl, rec.chunks = rec.itl[:0], 0
		}
		cn.w = copy(cn.buf, frame)
		cn.r = 0
		if !p.feed(cn, now) {
			b.Fatal(rec.err, p.failed)
		}
	}
}
