//go:build unix

package sabench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slurmbench/slurmbench/internal/budget"
)

// scriptServer answers each request on a raw TCP connection with the
// pieces of answer(n) (n counts requests from 0), each written separately
// with a short pause, so framing is split across reads; after the answer
// it closes the connection when closeAfter says so.
type scriptServer struct {
	answer     func(n int) []string
	closeAfter func(n int) bool
	requests   atomic.Int64
	conns      atomic.Int64
}

func (s *scriptServer) start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			go s.serve(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

func (s *scriptServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		n := int(s.requests.Add(1)) - 1
		for _, piece := range s.answer(n) {
			if _, err := io.WriteString(c, piece); err != nil {
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		if s.closeAfter != nil && s.closeAfter(n) {
			return
		}
	}
}

const (
	tok1  = `data: {"choices":[{"index":0,"text":" a"}]}` + "\n\n"
	tok2  = `data: {"choices":[{"index":0,"text":" b"}]}` + "\n\n"
	usage = `data: {"choices":[],"usage":{"completion_tokens":2}}` + "\n\n"
	done  = "data: [DONE]\n\n"
)

func httpChunk(s string) string { return strconv.FormatInt(int64(len(s)), 16) + "\r\n" + s + "\r\n" }

// runOne sends one request through a runner's h1 transport.
func runOne(t *testing.T, url string) (*record, *runner) {
	t.Helper()
	cfg, err := NewConfig(url, "m", 8, 2, 1).withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	ds, _ := NewDataset(cfg.datasetOptions())
	r := newRunner(cfg, ds)
	if r.h1 == nil {
		t.Fatal("plain-HTTP URL without the h1 transport")
	}
	t.Cleanup(r.close)
	rec := &record{}
	r.do(context.Background(), r.requestBody(0, 2), 2, rec)
	return rec, r
}

func TestH1Framing(t *testing.T) {
	const okHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	stream := tok1 + tok2 + usage + done
	for _, tc := range []struct {
		name   string
		pieces []string
		tokens int    // chunks with choices; -1: the request fails
		err    string // substring of rec.err
	}{
		{"one chunk per event", []string{okHead, httpChunk(tok1), httpChunk(tok2), httpChunk(usage), httpChunk(done), "0\r\n\r\n"}, 2, ""},
		{"head and size lines split", []string{"HTTP/1.1 200 OK\r\nTransfer-Enc", "oding: chunked\r\n\r", "\n" + httpChunk(tok1)[:2], httpChunk(tok1)[2:] + httpChunk(tok2), httpChunk(usage+done) + "0\r\n", "\r\n"}, 2, ""},
		{"lines split across chunks", []string{okHead, httpChunk(tok1[:10]), httpChunk(tok1[10:] + tok2[:5]), httpChunk(tok2[5:] + usage + done), "0\r\n\r\n"}, 2, ""},
		{"chunk extension and trailer", []string{okHead, "2d;x=y\r\n" + tok1 + "\r\n", httpChunk(tok2 + usage + done), "0\r\nX-Trailer: 1\r\n\r\n"}, 2, ""},
		{"100 continue first", []string{"HTTP/1.1 100 Continue\r\n\r\n", okHead, httpChunk(stream), "0\r\n\r\n"}, 2, ""},
		{"content length", []string{"HTTP/1.1 200 OK\r\nContent-Length: " + strconv.Itoa(len(stream)) + "\r\n\r\n", stream[:30], stream[30:]}, 2, ""},
		{"until close", []string{"HTTP/1.0 200 OK\r\n\r\n", tok1, tok2 + usage + strings.TrimSuffix(done, "\n\n")}, 2, ""},
		{"refused", []string{"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 9\r\n\r\n", "busy now\n"}, -1, "HTTP 503 Service Unavailable: busy now"},
		{"bad chunk size", []string{okHead, "zz\r\n"}, -1, "bad chunk size"},
		{"cut mid-stream", []string{okHead, httpChunk(tok1)}, -1, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptServer{answer: func(int) []string { return tc.pieces }, closeAfter: func(int) bool { return true }}
			rec, _ := runOne(t, s.start(t))
			if tc.tokens < 0 {
				if rec.success || !strings.Contains(rec.err, tc.err) {
					t.Fatalf("success %v, err %q; want a failure naming %q", rec.success, rec.err, tc.err)
				}
				return
			}
			if !rec.success || rec.chunks != tc.tokens || rec.outputTokens != 2 || len(rec.itl) != tc.tokens-1 {
				t.Fatalf("success %v (%s), %d chunks, %d output tokens, %d gaps", rec.success, rec.err, rec.chunks, rec.outputTokens, len(rec.itl))
			}
			if rec.ttft <= 0 || rec.latency < rec.ttft {
				t.Errorf("ttft %v, latency %v", rec.ttft, rec.latency)
			}
		})
	}
}

// TestH1KeepAliveAndStaleRetry: requests reuse one connection; when the
// server closes a kept-alive connection after an answer, the next request
// is resent once on a new connection instead of failing.
func TestH1KeepAliveAndStaleRetry(t *testing.T) {
	pieces := []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", httpChunk(tok1 + tok2 + usage + done), "0\r\n\r\n"}
	for _, tc := range []struct {
		name      string
		closeEach bool
		wantConns int64
	}{
		{"kept alive", false, 1},
		{"closed by the server", true, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &scriptServer{answer: func(int) []string { return pieces }, closeAfter: func(int) bool { return tc.closeEach }}
			url := s.start(t)
			cfg := NewConfig(url, "m", 8, 2, 1)
			cfg.NumPrompts, cfg.WarmupPrompts = 5, -1
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Completed != 5 {
				t.Fatalf("completed %d of 5: %+v", res.Completed, res.Errors)
			}
			if got := s.conns.Load(); got != tc.wantConns {
				t.Errorf("%d connections, want %d", got, tc.wantConns)
			}
		})
	}
}

// TestH1TimeoutAndCancel: the per-request timeout and the run's
// cancellation end a stream that stalls.
func TestH1TimeoutAndCancel(t *testing.T) {
	s := &scriptServer{answer: func(int) []string {
		return []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", httpChunk(tok1), func() string { time.Sleep(3 * time.Second); return "" }()}
	}}
	url := s.start(t)
	cfg := NewConfig(url, "m", 8, 2, 1)
	cfg.NumPrompts, cfg.WarmupPrompts, cfg.RequestTimeout = 1, -1, 200*time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err != nil || len(res.Errors) != 1 || !strings.Contains(res.Errors[0].Error, "request timed out after 200ms") {
		t.Fatalf("errors %+v, %v; want a timeout", res.Errors, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cfg.RequestTimeout = 0
	res, err = Run(ctx, cfg)
	if err == nil || !res.Partial || !strings.Contains(fmt.Sprint(res.Errors), "interrupted") {
		t.Fatalf("errors %+v, %v; want an interrupted partial result", res.Errors, err)
	}
}

// TestH1FeedNoAlloc: decoding a token's HTTP chunk and SSE event and
// recording it, its client-added latency included, allocates nothing
// (docs/performance.md).
func TestH1FeedNoAlloc(t *testing.T) {
	frame := []byte(httpChunk(string(mockChunk) + "\n\n"))
	rec := record{itl: make([]time.Duration, 0, 1024)}
	var stamps stampHists
	sr := streamRecorder{rec: &rec, start: time.Now(), stamps: &stamps}
	p := h1Parser{sr: &sr, headDone: true, status: 200, framing: bodyChunked}
	cn := &h1Conn{buf: make([]byte, h1BufSize)}
	now := time.Now()
	allocs := testing.AllocsPerRun(500, func() {
		cn.w = copy(cn.buf, frame)
		cn.r = 0
		if !p.feed(cn, now) {
			t.Fatal(rec.err, p.failed)
		}
	})
	if allocs != 0 || rec.chunks == 0 || stamps.added.n.Load() != int64(rec.chunks) {
		t.Errorf("%v allocations per token (%d tokens recorded, %d stamped), want 0", allocs, rec.chunks, stamps.added.n.Load())
	}
}

// TestH1LineIsBounded: the h1 transport fails a stream whose line passes
// MaxSSELine, naming the limit, instead of buffering it.
func TestH1LineIsBounded(t *testing.T) {
	const okHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	piece := httpChunk("data: " + strings.Repeat("x", 256<<10))
	srv := &scriptServer{answer: func(int) []string {
		out := []string{okHead}
		for range 6 { // 1.5 MiB, no newline
			out = append(out, piece)
		}
		return append(out, "0\r\n\r\n")
	}}
	rec, _ := runOne(t, srv.start(t))
	if !strings.Contains(rec.err, "1 MiB") {
		t.Fatalf("err %q; want the stream failed at the 1 MiB line limit", rec.err)
	}
}

// TestStreamEventsAreBounded: a stream of more than MaxSSEEvents events
// fails, naming the limit.
func TestStreamEventsAreBounded(t *testing.T) {
	rec := record{}
	sr := streamRecorder{rec: &rec, start: time.Now(), events: MaxSSEEvents}
	if sr.line([]byte(tok1[:len(tok1)-2]), time.Now()) || !strings.Contains(rec.err, "events a stream may have") {
		t.Fatalf("event past the limit: err %q", rec.err)
	}
}

// TestStreamBytesAreBounded: what a stream makes the client hold (its ITL
// gaps and, with SaveDetailed, its text) is bounded by its max_tokens, and
// what the point's streams hold together by MaxPointBytes; past either the
// request fails naming the limit and lets go of what it held (audit #33
// row 12: 14 MB a stream under the 1M-event cap, 463 MiB at c32).
func TestStreamBytesAreBounded(t *testing.T) {
	const okHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
	t.Run("an engine ignoring max_tokens", func(t *testing.T) {
		srv := &scriptServer{answer: func(int) []string {
			// One write: max_tokens is 2, and at most 8,192 gaps fit 64 KiB.
			return []string{okHead + strings.Repeat(httpChunk(tok1), 10000) + httpChunk(usage) + httpChunk(done) + "0\r\n\r\n"}
		}}
		rec, _ := runOne(t, srv.start(t))
		if !strings.Contains(rec.err, "max_tokens 2: it would hold more than the 64 KiB one may hold") {
			t.Fatalf("err %q, want the stream's limit named", rec.err)
		}
		if rec.itl != nil || rec.success {
			t.Errorf("the failed stream keeps %d gaps (success %v)", len(rec.itl), rec.success)
		}
	})
	line := []byte(tok1[:len(tok1)-2])
	for _, tt := range []struct {
		name      string
		maxTokens int
		save      bool
		text      []byte // a line with long text, fed after line
		pointHeld int64
		want      string
		fed       int // lines accepted before the failure
	}{
		{"gaps", 2048, false, nil, 0, "max_tokens 2048: it would hold more than the 128 KiB one may hold", 16385},
		{"saved text", 16, true, []byte(`data: {"choices":[{"index":0,"text":"` + strings.Repeat("x", 70<<10) + `"}]}`), 0, "max_tokens 16: it would hold more than the 64 KiB one may hold", 1},
		{"the point", 16, false, nil, MaxPointBytes - 80, "more than the 2048 MiB all together may hold", 11},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := record{}
			point := &budget.Pool{Max: MaxPointBytes}
			other := budget.Holder{Pool: point} // the point's other streams
			if err := other.Charge(int(tt.pointHeld)); err != nil {
				t.Fatal(err)
			}
			sr := streamRecorder{rec: &rec, start: time.Now(), saveText: tt.save, maxTokens: tt.maxTokens,
				held: budget.Holder{Limit: max(MinStreamBytes, int64(tt.maxTokens)*StreamBytesPerToken), Pool: point}}
			fed := 0
			for ; fed < 1<<20; fed++ {
				l := line
				if tt.text != nil && fed > 0 {
					l = tt.text
				}
				if !sr.line(l, time.Now()) {
					break
				}
			}
			if !strings.Contains(rec.err, tt.want) || fed != tt.fed {
				t.Fatalf("after %d lines: err %q, want %q after %d", fed, rec.err, tt.want, tt.fed)
			}
			if got := point.Held(); got != tt.pointHeld {
				t.Errorf("the point holds %d bytes after the failure, want %d (the stream's released)", got, tt.pointHeld)
			}
		})
	}
}
