package steps

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/launcher/plan"
)

type recordingTransport struct {
	mu   sync.Mutex
	reqs []string
}

func (rt *recordingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	rt.mu.Lock()
	rt.reqs = append(rt.reqs, r.URL.String()+" "+string(b))
	rt.mu.Unlock()
	code := http.StatusOK
	if strings.Contains(r.URL.Host, "bad") {
		code = http.StatusServiceUnavailable
	}
	return &http.Response{StatusCode: code, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}}, nil
}

func (rt *recordingTransport) got() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return strings.Join(rt.reqs, "\n")
}

// TestSlowDown: each point starts with /slow_down on every decode leader
// and clears it when the wait time is up, or when the point ends first —
// once either way; a refusing leader is a warning.
func TestSlowDown(t *testing.T) {
	pl := &plan.Plan{Benchmark: plan.Benchmark{SlowDown: &plan.SlowDown{SleepTime: 30, WaitTime: 120}}}
	env := func(k string) string {
		if k == plan.EnvSlowDownURLs {
			return "http://10.0.0.1:6100, http://bad:6132"
		}
		return ""
	}
	on := "http://10.0.0.1:6100/slow_down {\"forward_sleep_time\":30}\nhttp://bad:6132/slow_down {\"forward_sleep_time\":30}"
	off := "http://10.0.0.1:6100/slow_down {\"forward_sleep_time\":null}\nhttp://bad:6132/slow_down {\"forward_sleep_time\":null}"

	t.Run("point ends first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &recordingTransport{}
			var log bytes.Buffer
			stop := startSlowDown(context.Background(), pl, BenchOptions{Getenv: env, SlowDownClient: &http.Client{Transport: rt}, Log: &log})
			time.Sleep(10 * time.Second)
			synctest.Wait()
			if rt.got() != on {
				t.Fatalf("after 10 s:\n%s", rt.got())
			}
			stop()
			stop()
			if rt.got() != on+"\n"+off {
				t.Errorf("after the point:\n%s", rt.got())
			}
			if !strings.Contains(log.String(), "Warning: slow_down POST http://bad:6132/slow_down failed: HTTP 503") {
				t.Errorf("log:\n%s", log.String())
			}
		})
	})
	t.Run("wait time first", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			rt := &recordingTransport{}
			stop := startSlowDown(context.Background(), pl, BenchOptions{Getenv: env, SlowDownClient: &http.Client{Transport: rt}})
			time.Sleep(119 * time.Second)
			synctest.Wait()
			if rt.got() != on {
				t.Fatalf("before the wait time:\n%s", rt.got())
			}
			time.Sleep(2 * time.Second)
			synctest.Wait()
			if rt.got() != on+"\n"+off {
				t.Fatalf("after the wait time:\n%s", rt.got())
			}
			stop()
			if rt.got() != on+"\n"+off {
				t.Errorf("cleared twice:\n%s", rt.got())
			}
		})
	})
	t.Run("off", func(t *testing.T) {
		rt := &recordingTransport{}
		startSlowDown(context.Background(), &plan.Plan{}, BenchOptions{Getenv: env, SlowDownClient: &http.Client{Transport: rt}})()
		startSlowDown(context.Background(), pl, BenchOptions{Getenv: func(string) string { return "" }, SlowDownClient: &http.Client{Transport: rt}})()
		if rt.got() != "" {
			t.Errorf("requests without slow_down: %s", rt.got())
		}
	})
}
