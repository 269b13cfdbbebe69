package health

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestWaitEndpoints: every URL must answer 200 in the same pass; each
// case is a script of which worker answers what, by pass.
func TestWaitEndpoints(t *testing.T) {
	cases := []struct {
		name string
		// ready[u] is the first pass (from 1) at which u answers 200; 0 never.
		ready       map[string]int
		urls        []string
		maxAttempts int
		wantPasses  int
		wantErr     string // "" for success
	}{
		{"all up at once", map[string]int{"a": 1, "b": 1}, []string{"http://a/health", "http://b/health"}, 5, 1, ""},
		{"one late", map[string]int{"a": 1, "b": 3}, []string{"http://a/health", "http://b/health"}, 5, 3, ""},
		{"a duplicate asked once", map[string]int{"a": 2}, []string{"http://a/health", "http://a/health"}, 5, 2, ""},
		{"one never", map[string]int{"a": 1, "b": 0}, []string{"http://a/health", "http://b/health"}, 4, 4, "1 of 2 worker health endpoints not answering 200 after 4 passes"},
		{"an earlier 200 does not count for a later pass", map[string]int{"a": -2, "b": 2}, []string{"http://a/health", "http://b/health"}, 3, 3, "http://a/health"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var pass atomic.Int32
				asked := map[string]int{}
				client := inMemory(func(w http.ResponseWriter, r *http.Request) {
					host := r.URL.Host
					asked[host]++
					p := int(pass.Load()) + 1 // the pass being made
					r0 := tc.ready[host]
					switch {
					case r0 > 0 && p >= r0, r0 < 0 && p < -r0:
						w.WriteHeader(http.StatusOK)
					default:
						w.WriteHeader(http.StatusServiceUnavailable)
					}
				})
				passes := 0
				err := WaitEndpoints(t.Context(), EndpointsOptions{
					Client: client, URLs: tc.urls, Interval: time.Second, MaxAttempts: tc.maxAttempts,
					OnPass: func(attempt int, pending []string) { passes = attempt; pass.Store(int32(attempt)) },
				})
				if passes != tc.wantPasses {
					t.Errorf("%d passes, want %d", passes, tc.wantPasses)
				}
				switch {
				case tc.wantErr == "" && err != nil:
					t.Errorf("WaitEndpoints: %v", err)
				case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrDeadline)):
					t.Errorf("WaitEndpoints: %v, want ErrDeadline saying %q", err, tc.wantErr)
				}
				for u, n := range asked {
					if n > passes {
						t.Errorf("%s asked %d times in %d passes", u, n, passes)
					}
				}
			})
		})
	}
}

// TestWaitEndpointsAbort: a step exiting ends the wait at once.
func TestWaitEndpointsAbort(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := inMemory(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
		abort := make(chan error, 1)
		start := time.Now()
		go func() {
			time.Sleep(2500 * time.Millisecond)
			abort <- errors.New("decode_w0 exited with code 1")
		}()
		err := WaitEndpoints(t.Context(), EndpointsOptions{Client: client, URLs: []string{"http://a/health"}, Interval: time.Second, MaxAttempts: 100, Abort: abort})
		if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "decode_w0 exited") {
			t.Errorf("WaitEndpoints: %v, want ErrAborted naming the exit", err)
		}
		if d := time.Since(start); d != 2500*time.Millisecond {
			t.Errorf("returned after %s, want at the abort (2.5s)", d)
		}
	})
}
