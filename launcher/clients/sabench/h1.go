//go:build unix

package sabench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// This file is the client's own HTTP/1.1 streaming transport for plain-HTTP
// endpoints. A token arrives as one small packet per stream; net/http reads
// each through five layers (bufio, chunked reader, body, EOF signal, our
// bufio) and, like every Go reader, reads until EAGAIN: two read syscalls
// and a goroutine wake-up per token. Here the socket is read through its
// syscall.RawConn: one read per wake-up, the bytes decoded in place
// (chunked framing, SSE lines), the stream's timestamps the arrival of
// the bytes (the kernel's stamp on Linux, h1_recv_linux.go; elsewhere the
// moment the read returns). A read that did not fill the buffer drained
// the socket, so the goroutine parks on the poller without a second read:
// edge-triggered readiness reports any byte that arrives after it.

// h1BufSize is each connection's read buffer: many tokens when the client
// is behind, so a late reader catches up in few reads.
const h1BufSize = 16 << 10

// h1MaxHead bounds a response's status line and headers.
const h1MaxHead = 64 << 10

// h1Client sends the streaming requests of one run over kept-alive
// connections to one host:port.
type h1Client struct {
	addr   string // host:port to dial
	head   []byte // the request head up to the Content-Length value
	dialer net.Dialer

	mu   sync.Mutex
	idle []*h1Conn
}

// newH1Client returns the transport for baseURL's host, or nil when the
// URL is not plain HTTP (net/http then carries the requests).
func newH1Client(host, path string, header [][2]string) *h1Client {
	addr := host
	if _, _, err := net.SplitHostPort(host); err != nil {
		addr = net.JoinHostPort(host, "80")
	}
	var b []byte
	b = append(b, "POST "...)
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\nUser-Agent: slurmbench\r\nAccept: */*\r\n"...)
	for _, kv := range header {
		b = append(b, kv[0]...)
		b = append(b, ": "...)
		b = append(b, kv[1]...)
		b = append(b, "\r\n"...)
	}
	b = append(b, "Content-Length: "...)
	return &h1Client{addr: addr, head: b,
		dialer: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}}
}

// request is the whole request: head and body in one write.
func (c *h1Client) request(body []byte) []byte {
	b := make([]byte, 0, len(c.head)+24+len(body))
	b = append(b, c.head...)
	b = strconv.AppendInt(b, int64(len(body)), 10)
	b = append(b, "\r\n\r\n"...)
	return append(b, body...)
}

// closeIdle closes the kept-alive connections.
func (c *h1Client) closeIdle() {
	c.mu.Lock()
	idle := c.idle
	c.idle = nil
	c.mu.Unlock()
	for _, cn := range idle {
		cn.nc.Close()
	}
}

func (c *h1Client) get(ctx context.Context) (*h1Conn, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, nil
	}
	c.mu.Unlock()
	nc, err := c.dialer.DialContext(ctx, "tcp", c.addr)
	if err != nil {
		return nil, err
	}
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		nc.Close()
		return nil, fmt.Errorf("dialing %s: not a TCP connection", c.addr)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		nc.Close()
		return nil, err
	}
	// Arrival stamps are best effort: where the socket option is missing
	// (qemu-user does not emulate it) reads carry their own time, as recv
	// does for any read the kernel left unstamped.
	if err := rc.Control(func(fd uintptr) { _ = enableRXStamps(fd) }); err != nil {
		nc.Close()
		return nil, fmt.Errorf("connection to %s: %w", c.addr, err)
	}
	return &h1Conn{nc: tc, rc: rc, buf: make([]byte, h1BufSize), fresh: true}, nil
}

func (c *h1Client) put(cn *h1Conn) {
	cn.fresh = false
	c.mu.Lock()
	c.idle = append(c.idle, cn)
	c.mu.Unlock()
}

// do sends one request and feeds its stream to sr. A connection that was
// kept alive and turns out closed before any byte of the answer is
// replaced once, as net/http does for a request it can resend.
func (c *h1Client) do(ctx context.Context, req []byte, sr *streamRecorder) {
	sr.start = time.Now()
	for attempt := 0; ; attempt++ {
		cn, err := c.get(ctx)
		if err != nil {
			sr.err = err
			return
		}
		keep, stale, err := cn.roundTrip(ctx, req, sr)
		switch {
		case stale && attempt == 0:
			cn.nc.Close()
			continue
		case err != nil:
			sr.err = err
		}
		if keep {
			c.put(cn)
		} else {
			cn.nc.Close()
		}
		return
	}
}

// h1Conn is one connection and its read buffer; buf[r:w] is unread.
type h1Conn struct {
	nc    *net.TCPConn
	rc    syscall.RawConn
	buf   []byte
	r, w  int
	rx    h1RX
	fresh bool // never used for a request before
}

// Body framings.
const (
	bodyChunked = iota
	bodyLength
	bodyUntilClose
)

// roundTrip writes req and reads the answer. keep says the connection can
// carry another request; stale that it was a kept-alive connection closed
// by the server before answering (resend on a new one).
func (cn *h1Conn) roundTrip(ctx context.Context, req []byte, sr *streamRecorder) (keep, stale bool, err error) {
	// The context's end (its timeout included) interrupts the connection,
	// so a read that fails on the deadline always finds ctx.Err() set.
	_ = cn.nc.SetDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { _ = cn.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := cn.nc.Write(req); err != nil {
		return false, !cn.fresh && ctx.Err() == nil, ctxErr(ctx, err)
	}

	p := h1Parser{sr: sr}
	var readErr error
	got := false // any byte of the answer
	ferr := cn.rc.Read(func(fd uintptr) bool {
		for {
			if cn.w == len(cn.buf) {
				if !cn.compact() {
					readErr = errors.New("response header too long")
					return true
				}
			}
			n, now, err := cn.rx.recv(fd, cn.buf[cn.w:])
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if errors.Is(err, syscall.EAGAIN) {
				return false
			}
			if err != nil {
				readErr = err
				return true
			}
			if n == 0 {
				readErr = io.EOF
				return true
			}
			got = true
			sr.readAt = cn.rx.read
			if now.Before(sr.start) {
				now = sr.start // a clock step between the two readings
			}
			room := len(cn.buf) - cn.w
			cn.w += n
			if !p.feed(cn, now) {
				return true
			}
			if n < room {
				// The socket is drained: wait for the next edge.
				return false
			}
		}
	})
	switch {
	case p.failed != nil:
		return false, false, p.failed
	case p.complete:
		return p.keep && cn.r == cn.w, false, nil
	case sr.rec.err != "":
		return false, false, nil // refused, or a malformed chunk
	case p.stopped:
		return false, false, nil
	}
	if ferr == nil {
		ferr = readErr
	}
	if errors.Is(ferr, io.EOF) && p.framing == bodyUntilClose && p.headDone {
		p.finishBody()
		return false, false, p.failed
	}
	if !got && !cn.fresh && (errors.Is(ferr, io.EOF) || errors.Is(ferr, syscall.ECONNRESET)) && ctx.Err() == nil {
		return false, true, ferr
	}
	if errors.Is(ferr, io.EOF) {
		ferr = io.ErrUnexpectedEOF
	}
	return false, false, ctxErr(ctx, fmt.Errorf("reading stream: %w", ferr))
}

// compact moves the unread bytes to the front; false when the buffer is
// full of one unfinished element and cannot take more.
func (cn *h1Conn) compact() bool {
	if cn.r == 0 {
		if len(cn.buf) >= h1MaxHead {
			return false
		}
		cn.buf = append(cn.buf, make([]byte, len(cn.buf))...)
		return true
	}
	cn.w = copy(cn.buf, cn.buf[cn.r:cn.w])
	cn.r = 0
	return true
}

// ctxErr reports a deadline set by the context as the context's error, so
// runner.fail tells a timeout and a cancellation from a broken connection.
func ctxErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && (errors.Is(err, syscall.ETIMEDOUT) || isTimeout(err)) {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// h1Parser decodes one answer incrementally from a connection's buffer.
type h1Parser struct {
	sr *streamRecorder

	headDone bool
	status   int
	statusLn string
	framing  int
	left     int64 // bytes left in the current chunk, or of a length-framed body
	inData   bool  // inside a chunk's data (chunked)
	trailer  bool  // after the last chunk, reading trailers
	keep     bool  // the server keeps the connection

	line   []byte // an SSE line split across reads or chunks
	errMsg []byte // a refused request's body, up to 512 bytes

	complete bool  // the whole answer was read
	stopped  bool  // the stream failed before its end
	failed   error // a protocol error
}

// feed consumes what cn's buffer holds; false when the answer is over or
// broken (see the flags).
func (p *h1Parser) feed(cn *h1Conn, now time.Time) bool {
	if !p.headDone {
		if !p.parseHead(cn) {
			return p.failed == nil
		}
	}
	for cn.r < cn.w {
		switch {
		case p.framing == bodyLength || p.framing == bodyUntilClose:
			n := cn.w - cn.r
			if p.framing == bodyLength && int64(n) > p.left {
				n = int(p.left)
			}
			if !p.data(cn.buf[cn.r:cn.r+n], now) {
				cn.r += n
				return false
			}
			cn.r += n
			if p.framing == bodyLength {
				if p.left -= int64(n); p.left == 0 {
					p.finishBody()
					return false
				}
			}
		case p.inData:
			n := cn.w - cn.r
			if int64(n) > p.left {
				n = int(p.left)
			}
			chunk := cn.buf[cn.r : cn.r+n]
			cn.r += n
			if p.left -= int64(n); p.left == 0 {
				p.inData = false
			}
			if !p.data(chunk, now) {
				return false
			}
		default: // a chunk-size line, the CRLF after data, or trailers
			i := bytes.IndexByte(cn.buf[cn.r:cn.w], '\n')
			if i < 0 {
				return true
			}
			ln := bytes.TrimRight(cn.buf[cn.r:cn.r+i], "\r")
			cn.r += i + 1
			if p.trailer {
				if len(ln) == 0 {
					p.finishBody()
					return false
				}
				continue
			}
			if len(ln) == 0 {
				continue // the CRLF that ends a chunk's data
			}
			if j := bytes.IndexByte(ln, ';'); j >= 0 {
				ln = ln[:j]
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(ln)), 16, 64)
			if err != nil || size < 0 {
				p.failed = fmt.Errorf("reading stream: bad chunk size %.40q", ln)
				return false
			}
			if size == 0 {
				p.trailer = true
				continue
			}
			p.left, p.inData = size, true
		}
	}
	if cn.r == cn.w {
		cn.r, cn.w = 0, 0
	}
	return true
}

// parseHead parses the status line and headers once they are complete;
// false while they are not (or on an error, in p.failed).
func (p *h1Parser) parseHead(cn *h1Conn) bool {
	buf := cn.buf[cn.r:cn.w]
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return false
	}
	head := buf[:end]
	cn.r += end + 4
	lines := bytes.Split(head, []byte("\r\n"))
	status := lines[0]
	proto, rest, _ := bytes.Cut(status, []byte(" "))
	code, _, _ := bytes.Cut(rest, []byte(" "))
	n, err := strconv.Atoi(string(code))
	if err != nil || !bytes.HasPrefix(proto, []byte("HTTP/1.")) {
		p.failed = fmt.Errorf("malformed HTTP response %.80q", status)
		return false
	}
	if n >= 100 && n < 200 {
		return p.parseHead(cn) // 100 Continue and friends: the real head follows
	}
	p.status, p.statusLn = n, string(rest)
	p.keep = bytes.Equal(proto, []byte("HTTP/1.1"))
	p.framing = bodyUntilClose
	for _, ln := range lines[1:] {
		k, v, ok := bytes.Cut(ln, []byte(":"))
		if !ok {
			continue
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			if bytes.EqualFold(v, []byte("chunked")) {
				p.framing = bodyChunked
			}
		case bytes.EqualFold(k, []byte("Content-Length")):
			if p.framing != bodyChunked {
				l, err := strconv.ParseInt(string(v), 10, 64)
				if err != nil || l < 0 {
					p.failed = fmt.Errorf("malformed Content-Length %q", v)
					return false
				}
				p.framing, p.left = bodyLength, l
			}
		case bytes.EqualFold(k, []byte("Connection")):
			if bytes.EqualFold(v, []byte("close")) {
				p.keep = false
			}
		}
	}
	if p.framing == bodyUntilClose {
		p.keep = false
	}
	p.headDone = true
	if p.framing == bodyLength && p.left == 0 {
		p.finishBody()
		return false
	}
	return true
}

// data takes a piece of the body; false stops reading.
func (p *h1Parser) data(b []byte, now time.Time) bool {
	if p.status != 200 {
		if room := 512 - len(p.errMsg); room > 0 {
			p.errMsg = append(p.errMsg, b[:min(room, len(b))]...)
		}
		return true
	}
	if p.sr.done {
		return true
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		}
		if len(p.line)+i > MaxSSELine {
			p.sr.rec.err = "reading stream: " + errSSELineTooLong.Error()
			p.line = nil
			p.stopped = true
			return false
		}
		if i == len(b) {
			p.line = append(p.line, b...)
			return true
		}
		var ln []byte
		if len(p.line) > 0 {
			p.line = append(p.line, b[:i]...)
			ln = p.line
		} else {
			ln = b[:i]
		}
		b = b[i+1:]
		if p.sr.done {
			p.line = p.line[:0]
			continue // after [DONE]: read to the end of the body, for reuse
		}
		ok := p.sr.line(bytes.TrimSpace(ln), now)
		p.line = p.line[:0]
		if !ok && !p.sr.done {
			p.stopped = true
			return false
		}
	}
	return true
}

// finishBody ends the answer: a refused request records its message, a
// last line without a newline is still a line.
func (p *h1Parser) finishBody() {
	p.complete = true
	if p.status != 200 {
		p.sr.refused(p.statusLn, p.errMsg)
		return
	}
	if len(p.line) > 0 && !p.stopped && !p.sr.done {
		p.sr.line(bytes.TrimSpace(p.line), time.Now())
	}
}
