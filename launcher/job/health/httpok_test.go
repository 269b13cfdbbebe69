package health

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestProbeHTTPOK: trtllm-serve is ready on a 200 from /health, whatever
// the body, and never asked for /v1/models; any other answer is not ready.
func TestProbeHTTPOK(t *testing.T) {
	tests := []struct {
		name    string
		routes  map[string]route
		want    Seen
		wantErr string
	}{
		// HAPPY PATH
		{"empty body", map[string]route{"/health": {200, ""}}, Seen{Status: 200, Detail: "serving (GET /health: 200)", Kind: HTTPOK}, ""},
		{"any body", map[string]route{"/health": {200, `not json`}}, Seen{Status: 200, Detail: "serving (GET /health: 200)", Kind: HTTPOK}, ""},
		// SAD PATH
		{"loading", map[string]route{"/health": {503, "loading"}, "/v1/models": {200, `{"data":[{"id":"m"}]}`}}, Seen{Status: 503, Detail: "loading", Kind: HTTPOK}, "HTTP 503"},
		{"no /health", map[string]route{"/v1/models": {200, `{"data":[{"id":"m"}]}`}}, Seen{Status: 404, Detail: "404 page not found", Kind: HTTPOK}, "HTTP 404"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Probe(context.Background(), nil, serve(t, tt.routes), HTTPOK)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Probe: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Probe error = %v, want one containing %q", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("Probe = %+v, want %+v", got, tt.want)
			}
			if r := got.Ready(Expect{1, 2}); r != (tt.wantErr == "") {
				t.Errorf("Ready = %v", r)
			}
		})
	}
	if k, err := ParseKind("http-ok"); err != nil || k != HTTPOK {
		t.Errorf("ParseKind(http-ok) = %q, %v", k, err)
	}
}

// TestWaitHTTPOK: the gate passes at the first 200, reports the expected
// counts (it cannot count), and its deadline message claims no counts.
func TestWaitHTTPOK(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var polls atomic.Int32
		client := inMemory(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/health" {
				http.NotFound(w, r)
				return
			}
			if polls.Add(1) < 3 {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "")
		})
		s, err := Wait(t.Context(), WaitOptions{Client: client, BaseURL: "http://worker:8000", Kind: HTTPOK, Expect: Expect{1, 2},
			Interval: 10 * time.Millisecond, MaxAttempts: 10})
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if s.Prefill != 1 || s.Decode != 2 || polls.Load() != 3 {
			t.Errorf("Wait = %+v after %d polls, want the expected counts after 3", s, polls.Load())
		}
		_, err = Wait(t.Context(), WaitOptions{Client: inMemory(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }),
			BaseURL: "http://worker:8000", Kind: HTTPOK, Expect: Expect{0, 1}, Interval: 10 * time.Millisecond, MaxAttempts: 2})
		if err == nil || strings.Contains(err.Error(), "last saw") || !strings.Contains(err.Error(), "HTTP 503") {
			t.Errorf("deadline error %v: want the last status, no counts", err)
		}
	})
}
