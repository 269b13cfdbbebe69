package sabench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// probeTokens is how many tokens the probe asks for: two, so that a
// streaming server sends more than one chunk.
const probeTokens = 2

// probeTimeout bounds the probe when Config.RequestTimeout is longer: a
// two-token answer that takes longer would not give a usable benchmark.
const probeTimeout = 2 * time.Minute

// ProbeError says the endpoint cannot be benchmarked, and why.
type ProbeError struct {
	URL    string
	Reason string
}

func (e *ProbeError) Error() string { return fmt.Sprintf("%s: %s", e.URL, e.Reason) }

// Probe sends one short streaming request (the first prompt, two output
// tokens) before anything is timed and returns a *ProbeError naming what
// the benchmark would lack: a refused request (status and the server's
// message, e.g. an unknown model), a reply that does not stream (no
// text/event-stream, no SSE data lines), a stream without a chunk carrying
// choices, or a stream without usage.completion_tokens (the output token
// counts would be unknown). A transport failure is returned as it is.
func Probe(ctx context.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return fmt.Errorf("SA-Bench options: %w", err)
	}
	cfg.NumPrompts = 1
	ds, _, err := newDataset(cfg.datasetOptions())
	if err != nil {
		return fmt.Errorf("SA-Bench dataset: %w", err)
	}
	r := newRunner(cfg, ds)
	ctx, cancel := context.WithTimeout(ctx, min(cfg.RequestTimeout, probeTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.requestBody(0, probeTokens)))
	if err != nil {
		return fmt.Errorf("probing %s: %w", r.url, err)
	}
	req.Header = r.header.Clone()
	resp, err := r.client.Do(req)
	if err != nil {
		return probeTransportError(r.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeReply+1))
	if err != nil {
		return fmt.Errorf("probing %s: reading the reply: %w", r.url, err)
	}
	if len(body) > maxProbeReply {
		return &ProbeError{URL: r.url, Reason: fmt.Sprintf("the reply is larger than the %d MiB a one-token probe may have", maxProbeReply>>20)}
	}
	return judgeProbe(r.url, resp, body)
}

// maxProbeReply bounds the probe's reply: one token's stream.
const maxProbeReply = 1 << 20

func judgeProbe(url string, resp *http.Response, body []byte) error {
	fail := func(format string, args ...any) error {
		return &ProbeError{URL: url, Reason: fmt.Sprintf(format, args...)}
	}
	if resp.StatusCode != http.StatusOK {
		return fail("HTTP %s: %.300s", resp.Status, bytes.TrimSpace(body))
	}
	ctype, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	lines := sseLines{r: bufio.NewReader(bytes.NewReader(body))}
	var data, choices int
	usage := false
	for {
		line, rerr := lines.next()
		if bytes.HasPrefix(line, []byte("data:")) {
			data++
		}
		if payload, ok := ssePayload(line); ok && !bytes.Equal(payload, sseDone) {
			c, perr := parseChunk(payload)
			if perr != nil {
				return fail("the reply is not a completions stream: %v in %.200q", perr, payload)
			}
			if c.choices {
				choices++
			}
			usage = usage || c.usage
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return fail("reading the reply: %v", rerr)
			}
			break
		}
	}
	switch {
	case ctype != "text/event-stream" && data == 0:
		return fail("the endpoint does not stream (Content-Type %q, no SSE data lines; want text/event-stream for \"stream\": true)", ctype)
	case choices == 0:
		return fail("the stream has no chunk with choices, so TTFT cannot be measured")
	case !usage:
		return fail("the stream has no usage.completion_tokens (\"stream_options\": {\"include_usage\": true} was ignored), so output tokens cannot be counted")
	}
	return nil
}

// probeTransportError is a failed probe request. A scheme that does not
// match the server (https:// to plain HTTP) or a certificate this machine
// does not trust is the URL's fault, named as a *ProbeError (exit 2, one
// code for the cause whichever step sends it); any other transport failure
// is returned as it is (the endpoint is down: the engine layer).
func probeTransportError(url string, err error) error {
	var cert *tls.CertificateVerificationError
	switch {
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &ProbeError{URL: url, Reason: "the server answers plain HTTP: give the URL as http://"}
	case errors.As(err, &cert):
		return &ProbeError{URL: url, Reason: "its TLS certificate is not trusted here: " + cert.Err.Error()}
	}
	return fmt.Errorf("probing %s: %w", url, err)
}
