package sabench

import (
	"testing"
	"time"
)

// mockChunk is one token's SSE line as the mock engine sends it (vLLM's
// without the stamp).
var mockChunk = []byte(`data: {"id":"cmpl-mock-1","object":"text_completion","created":1764700000,"model":"mock/DeepSeek-R1","choices":[{"index":0,"text":" tok","logprobs":null,"finish_reason":null}],"mock_sent_unix_ns":1764700000123456789}`)

// BenchmarkStreamLine is the client's CPU per token line outside the
// network: SSE framing, the chunk scan and the record update.
func BenchmarkStreamLine(b *testing.B) {
	rec := record{itl: make([]time.Duration, 0, 1024)}
	sr := streamRecorder{rec: &rec, start: time.Now()}
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if i%1024 == 0 {
			rec.itl, rec.chunks = rec.itl[:0], 0
		}
		if !sr.line(mockChunk, now) {
			b.Fatal(rec.err)
		}
	}
}
