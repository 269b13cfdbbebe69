package mockengine

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDetachBody: what the frontend forwards reads whole after net/http
// has closed the inbound request body (as it does when a streamed answer
// writes the response headers while the body is still being forwarded),
// and carries the body's length.
func TestDetachBody(t *testing.T) {
	const body = `{"model":"m","prompt":"hello","max_tokens":4,"stream":true}`
	r := httptest.NewRequest(http.MethodPost, "/v1/completions", io.NopCloser(strings.NewReader(body)))
	r.ContentLength = -1 // as if chunked: the length comes from the bytes read
	inbound := &closeOnce{Reader: r.Body}
	r.Body = inbound
	out, err := detachBody(httptest.NewRecorder(), r)
	if err != nil {
		t.Fatal(err)
	}
	_ = inbound.Close()
	got, err := io.ReadAll(out.Body)
	if err != nil || string(got) != body || out.ContentLength != int64(len(body)) {
		t.Errorf("forwarded body %q (length %d), %v; want %q", got, out.ContentLength, err, body)
	}
	if out == r || out.URL.Path != "/v1/completions" || out.Method != http.MethodPost {
		t.Errorf("forwarded request %s %s (same as the inbound: %v)", out.Method, out.URL.Path, out == r)
	}

	big := httptest.NewRequest(http.MethodPost, "/v1/completions", strings.NewReader(strings.Repeat("x", maxProxyBody+1)))
	if _, err := detachBody(httptest.NewRecorder(), big); err == nil {
		t.Errorf("a body over %d bytes was forwarded", maxProxyBody)
	}
}

// closeOnce is a request body whose reads fail once closed, as net/http's do.
type closeOnce struct {
	io.Reader
	closed bool
}

func (c *closeOnce) Read(p []byte) (int, error) {
	if c.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return c.Reader.Read(p)
}

func (c *closeOnce) Close() error { c.closed = true; return nil }
