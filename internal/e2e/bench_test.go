package e2e

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// restLog is a pass-through proxy to slurmrestd that records when each
// request arrived and when its answer was sent.
type restLog struct {
	URL string
	mu  sync.Mutex
	log []restCall
}

func newRESTLog(t testing.TB, upstream string) *restLog {
	t.Helper()
	l := &restLog{}
	l.URL = forwardProxy(t, upstream, nil, func(c restCall) {
		l.mu.Lock()
		l.log = append(l.log, c)
		l.mu.Unlock()
	})
	return l
}

func (l *restLog) calls() []restCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]restCall(nil), l.log...)
}

// BenchmarkTimeToSubmit: from starting `slurmbench run` (cached image) to
// the job submission leaving it, without the time spent waiting on
// slurmrestd before that (the API version probe): plan, image check,
// run directory (binary copy, plan, script), job description.
//
//	go test -run '^$' -bench TimeToSubmit -benchtime 5x ./internal/e2e
func BenchmarkTimeToSubmit(b *testing.B) {
	c := setup(b)
	var local, rest time.Duration
	var n int
	for i := 0; i < b.N; i++ {
		l := newRESTLog(b, c.Cluster.RestURL)
		name := uniqueName("e2e-bench")
		r := c.prepare(b, runOpts{name: name, restURL: l.URL, recipe: mockRecipe{Name: name}.String()}).start()
		if code := r.wait(5 * time.Minute); code != 0 {
			b.Fatalf("exit %d\n%s", code, r.output())
		}
		var before time.Duration
		var submit time.Time
		k := 0
		for _, call := range l.calls() {
			if call.method == http.MethodPost && strings.HasSuffix(call.path, "/job/submit") {
				submit = call.start
				break
			}
			before += call.end.Sub(call.start)
			k++
		}
		if submit.IsZero() {
			b.Fatal("no submit seen")
		}
		local += submit.Sub(r.started) - before
		rest += before
		n += k
	}
	b.ReportMetric(float64(local.Milliseconds())/float64(b.N), "ms-to-submit")
	b.ReportMetric(float64(rest.Milliseconds())/float64(b.N), "ms-REST-before-submit")
	b.ReportMetric(float64(n)/float64(b.N), "REST-calls-before-submit")
}

// BenchmarkRESTCallsPerMinute: slurmrestd calls per minute while a job
// runs for about a minute (a long benchmark on the mock 2P1D).
//
//	go test -run '^$' -bench RESTCallsPerMinute -benchtime 1x ./internal/e2e
func BenchmarkRESTCallsPerMinute(b *testing.B) {
	c := setup(b)
	for i := 0; i < b.N; i++ {
		l := newRESTLog(b, c.Cluster.RestURL)
		name := uniqueName("e2e-bench")
		// 8 requests at c4, 6000 tokens at 5 ms: two rounds of 30 s.
		r := c.prepare(b, runOpts{name: name, restURL: l.URL, recipe: mockRecipe{Name: name, OSL: 6000, ITL: "5ms"}.String()}).start()
		if code := r.wait(10 * time.Minute); code != 0 {
			b.Fatalf("exit %d\n%s", code, r.output())
		}
		var submit, last time.Time
		after := 0
		for _, call := range l.calls() {
			if submit.IsZero() {
				if call.method == http.MethodPost && strings.HasSuffix(call.path, "/job/submit") {
					submit = call.end
				}
				continue
			}
			after++
			last = call.end
		}
		span := last.Sub(submit)
		b.ReportMetric(float64(after)/span.Minutes(), "REST-calls/min")
		b.ReportMetric(span.Seconds(), "s-followed")
		b.ReportMetric(float64(after), "REST-calls-after-submit")
	}
}
