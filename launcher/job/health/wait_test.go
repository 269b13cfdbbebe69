package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/slurmbench/slurmbench/mockengine"
)

// countingDynamo is a Dynamo /health that lists one more worker of
// components (in order) with every poll, so it is ready at poll len(components)+1.
func countingDynamo(t *testing.T, components ...string) (url string, polls *atomic.Int32) {
	t.Helper()
	polls = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(polls.Add(1)) - 1
		fmt.Fprint(w, dynamoBody("healthy", components[:min(n, len(components))]...))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, polls
}

// inMemory is a client whose requests h answers in the calling goroutine:
// no sockets, so a test runs it inside a synctest bubble, where a poll's
// timeout is synctest's clock and not the load of the machine.
func inMemory(h http.HandlerFunc) *http.Client {
	return &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		h(rec, r)
		if err := r.Context().Err(); err != nil {
			return nil, err
		}
		return rec.Result(), nil
	})}
}

func TestWaitReady(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		components := []string{"prefill", "decode", "prefill"}
		var polls atomic.Int32
		client := inMemory(func(w http.ResponseWriter, r *http.Request) {
			n := int(polls.Add(1)) - 1
			fmt.Fprint(w, dynamoBody("healthy", components[:min(n, len(components))]...))
		})
		var attempts []string
		s, err := Wait(t.Context(), WaitOptions{
			Client: client, BaseURL: "http://frontend:8000", Kind: Dynamo, Expect: Expect{2, 1},
			Interval: 10 * time.Millisecond, MaxAttempts: 50,
			OnPoll: func(attempt int, s Seen, err error) {
				attempts = append(attempts, fmt.Sprintf("%d:%dP%dD:%v", attempt, s.Prefill, s.Decode, err))
			},
		})
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if s.Prefill != 2 || s.Decode != 1 {
			t.Errorf("Wait = %+v, want 2 prefill + 1 decode", s)
		}
		want := "1:0P0D:<nil> 2:1P0D:<nil> 3:1P1D:<nil> 4:2P1D:<nil>"
		if got := strings.Join(attempts, " "); got != want {
			t.Errorf("polls = %s, want %s", got, want)
		}
		if got := polls.Load(); got != 4 {
			t.Errorf("server saw %d polls, want 4", got)
		}
	})
}

func TestWaitModelsReportsExpected(t *testing.T) {
	base := serve(t, map[string]route{
		"/health":    {200, ""},
		"/v1/models": {200, `{"data":[{"id":"m"}]}`},
	})
	s, err := Wait(context.Background(), WaitOptions{BaseURL: base, Kind: Models, Expect: Expect{0, 3}, Interval: time.Second, MaxAttempts: 1})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if s.Prefill != 0 || s.Decode != 3 || s.Models != 1 {
		t.Errorf("Wait = %+v, want decode 3 (the expected count) and 1 model", s)
	}
}

// TestWaitDeadline runs on synctest's clock with an in-memory frontend: a
// poll that must succeed may not time out because the machine is loaded.
func TestWaitDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var polls atomic.Int32 // the frontend never gets a decode worker
		client := inMemory(func(w http.ResponseWriter, r *http.Request) {
			n := int(polls.Add(1)) - 1
			fmt.Fprint(w, dynamoBody("healthy", []string{"prefill"}[:min(n, 1)]...))
		})
		start := time.Now()
		s, err := Wait(t.Context(), WaitOptions{
			Client: client, BaseURL: "http://frontend:8000", Kind: Dynamo, Expect: Expect{1, 1},
			Interval: 20 * time.Millisecond, MaxAttempts: 5,
		})
		elapsed := time.Since(start)
		if !errors.Is(err, ErrDeadline) {
			t.Fatalf("Wait error = %v, want ErrDeadline", err)
		}
		var de *DeadlineError
		if !errors.As(err, &de) {
			t.Fatalf("Wait error %T is not a *DeadlineError", err)
		}
		if de.Attempts != 5 || polls.Load() != 5 {
			t.Errorf("Attempts = %d, server saw %d polls; want 5 and 5", de.Attempts, polls.Load())
		}
		if de.Last.Prefill != 1 || de.Last.Decode != 0 || de.LastErr != nil || s != de.Last {
			t.Errorf("Last = %+v (LastErr %v), returned %+v; want 1 prefill, 0 decode, no error", de.Last, de.LastErr, s)
		}
		if de.Expect != (Expect{1, 1}) {
			t.Errorf("Expect = %+v", de.Expect)
		}
		// Five polls 20 ms apart start at 0..80 ms; the wait ends after the fifth,
		// within the MaxAttempts×Interval budget.
		if elapsed != 80*time.Millisecond {
			t.Errorf("gave up after %s, want 80ms: when the fifth poll was due and answered", elapsed)
		}
		for _, part := range []string{"health deadline passed", "5 polls", "want 1 prefill + 1 decode", "last saw 1 prefill + 0 decode"} {
			if !strings.Contains(err.Error(), part) {
				t.Errorf("error %q lacks %q", err, part)
			}
		}
		if errors.Is(err, ErrAborted) || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("deadline error %v matches ErrAborted or context.DeadlineExceeded", err)
		}
	})
}

// TestWaitDeadlineLastErr: when every poll fails, the deadline error names
// the last failure, and a hanging frontend is cut off by the interval, not
// by the 5 s request timeout.
func TestWaitDeadlineLastErr(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		client := inMemory(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		start := time.Now()
		_, err := Wait(t.Context(), WaitOptions{
			Client: client, BaseURL: "http://frontend:8000", Kind: Dynamo, Expect: Expect{1, 1},
			Interval: 30 * time.Millisecond, MaxAttempts: 3,
		})
		var de *DeadlineError
		if !errors.As(err, &de) {
			t.Fatalf("Wait error = %v, want *DeadlineError", err)
		}
		if !errors.Is(de.LastErr, context.DeadlineExceeded) {
			t.Errorf("LastErr = %v, want the poll's timeout", de.LastErr)
		}
		if !strings.Contains(err.Error(), "last error: health check:") {
			t.Errorf("error %q does not carry the last poll's error", err)
		}
		// 3 × 5 s if the request timeout ignored the interval; 90 ms if not
		// (synctest's clock: exact).
		if elapsed := time.Since(start); elapsed != 90*time.Millisecond {
			t.Errorf("Wait took %s, want 90ms: polls outlived their interval", elapsed)
		}
	})
}

// TestWaitAbortDuringPoll: a process dies while a poll hangs; Wait returns
// the process's error at once instead of waiting out the poll.
func TestWaitAbortDuringPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inPoll := make(chan struct{}, 1)
		client := inMemory(func(w http.ResponseWriter, r *http.Request) {
			select {
			case inPoll <- struct{}{}:
			default:
			}
			<-r.Context().Done() // hang until the client gives up
		})
		abort := make(chan error, 1)
		died := errors.New("process prefill-0 exited with code 1")
		go func() {
			<-inPoll
			abort <- died
		}()
		start := time.Now()
		_, err := Wait(t.Context(), WaitOptions{
			Client: client, BaseURL: "http://frontend:8000", Kind: Dynamo, Expect: Expect{1, 1},
			Interval: time.Minute, MaxAttempts: 10, RequestTimeout: time.Minute, Abort: abort,
		})
		if !errors.Is(err, ErrAborted) || !errors.Is(err, died) {
			t.Fatalf("Wait error = %v, want ErrAborted wrapping %v", err, died)
		}
		if !strings.Contains(err.Error(), "prefill-0 exited with code 1") {
			t.Errorf("error %q does not name the dead process", err)
		}
		// The poll hangs for its minute unless the abort cuts it: on
		// synctest's clock the abort arrives with no time passed.
		if elapsed := time.Since(start); elapsed != 0 {
			t.Errorf("abort took %s, want at once", elapsed)
		}
	})
}

// TestWaitAbortBetweenPolls: a process dies while Wait sleeps between polls.
func TestWaitAbortBetweenPolls(t *testing.T) {
	url, polls := countingDynamo(t, "prefill")
	abort := make(chan error) // unbuffered: the send completes only when Wait receives
	died := errors.New("decode-0 exited with code 0")
	polled := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		_, err := Wait(context.Background(), WaitOptions{
			BaseURL: url, Kind: Dynamo, Expect: Expect{1, 1},
			Interval: time.Minute, MaxAttempts: 10, Abort: abort,
			OnPoll: func(int, Seen, error) { polled <- struct{}{} },
		})
		done <- err
	}()
	<-polled // the first poll is over; Wait now sleeps until the second
	select {
	case abort <- died:
	case err := <-done:
		t.Fatalf("Wait returned before the abort: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Wait never received the abort")
	}
	err := <-done
	if !errors.Is(err, ErrAborted) || !errors.Is(err, died) {
		t.Fatalf("Wait error = %v, want ErrAborted wrapping %v", err, died)
	}
	if polls.Load() != 1 || len(polled) != 0 {
		t.Errorf("server saw %d polls, want just the first", polls.Load())
	}
}

// TestWaitAbortBeatsReady: a frontend that still lists a worker which has
// already exited must not pass the gate.
func TestWaitAbortBeatsReady(t *testing.T) {
	base := serve(t, map[string]route{"/health": {200, dynamoBody("healthy", "prefill", "decode")}})
	abort := make(chan error, 1)
	_, err := Wait(context.Background(), WaitOptions{
		BaseURL: base, Kind: Dynamo, Expect: Expect{1, 1}, Interval: time.Second, MaxAttempts: 3, Abort: abort,
		// The death is reported after the poll that saw the worker listed.
		OnPoll: func(int, Seen, error) { abort <- errors.New("decode-0 exited with code 137") },
	})
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("Wait error = %v, want ErrAborted", err)
	}
}

// TestWaitLeavesAbortValue: Wait takes no value from Abort unless it
// returns because of it, so the driver's later watch still sees a death.
func TestWaitLeavesAbortValue(t *testing.T) {
	base := serve(t, map[string]route{"/health": {200, dynamoBody("healthy", "prefill", "decode")}})
	abort := make(chan error, 1)
	if _, err := Wait(context.Background(), WaitOptions{BaseURL: base, Kind: Dynamo, Expect: Expect{1, 1}, Interval: time.Second, MaxAttempts: 1, Abort: abort}); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	died := errors.New("later death")
	abort <- died
	if got := <-abort; !errors.Is(got, died) {
		t.Fatalf("abort channel gave %v", got)
	}
}

func TestWaitAbortClosed(t *testing.T) {
	url, _ := countingDynamo(t, "prefill")
	abort := make(chan error)
	close(abort)
	_, err := Wait(context.Background(), WaitOptions{BaseURL: url, Kind: Dynamo, Expect: Expect{1, 1}, Interval: time.Minute, MaxAttempts: 10, Abort: abort})
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("Wait error = %v, want ErrAborted", err)
	}
}

func TestWaitContextCancelled(t *testing.T) {
	url, _ := countingDynamo(t, "prefill")
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("SIGTERM")
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel(stop)
	}()
	_, err := Wait(ctx, WaitOptions{BaseURL: url, Kind: Dynamo, Expect: Expect{1, 1}, Interval: time.Minute, MaxAttempts: 10})
	if !errors.Is(err, stop) {
		t.Fatalf("Wait error = %v, want the context's cause", err)
	}
	if errors.Is(err, ErrDeadline) || errors.Is(err, ErrAborted) {
		t.Errorf("cancellation %v reads as deadline or abort", err)
	}
}

func TestWaitUnknownKind(t *testing.T) {
	if _, err := Wait(context.Background(), WaitOptions{BaseURL: "http://127.0.0.1:1", Kind: "sglang"}); err == nil {
		t.Fatal("Wait with an unknown kind succeeded")
	}
}

// TestWaitMockEngine runs the gate against the mock engine's Dynamo-like
// frontend with 2 prefill and 1 decode workers registering, as the driver
// does on the test cluster.
func TestWaitMockEngine(t *testing.T) {
	frontend := mockengine.StartTest(t, mockengine.Options{Mode: mockengine.ModeFrontend, WorkerTTL: 5 * time.Second})
	for _, mode := range []mockengine.Mode{mockengine.ModePrefill, mockengine.ModePrefill, mockengine.ModeDecode} {
		mockengine.StartTest(t, mockengine.Options{Mode: mode, FrontendURL: frontend, HeartbeatInterval: 50 * time.Millisecond})
	}
	s, err := Wait(context.Background(), WaitOptions{
		BaseURL: frontend, Kind: Dynamo, Expect: Expect{2, 1},
		Interval: 50 * time.Millisecond, MaxAttempts: 200,
	})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if s.Prefill != 2 || s.Decode != 1 || !s.Ready(Expect{2, 1}) {
		t.Errorf("Wait = %+v, want exactly 2 prefill + 1 decode", s)
	}
	// The router view of the same frontend agrees.
	rs, err := Probe(context.Background(), nil, frontend, SGLangRouter)
	if err != nil || rs.Prefill != 2 || rs.Decode != 1 {
		t.Errorf("router probe = %+v, %v; want 2 prefill + 1 decode", rs, err)
	}
	// One more decode worker never comes: the gate for 2P2D times out
	// having seen 2P1D. A poll may take no longer than the interval, so the
	// interval is wide enough for a loaded CI machine to answer within it
	// (10 ms was not: every poll timed out and Last stayed empty).
	_, err = Wait(context.Background(), WaitOptions{
		BaseURL: frontend, Kind: Dynamo, Expect: Expect{2, 2},
		Interval: 300 * time.Millisecond, MaxAttempts: 3,
	})
	var de *DeadlineError
	if !errors.As(err, &de) || de.Last.Prefill != 2 || de.Last.Decode != 1 {
		t.Errorf("Wait for 2P2D = %v, want a deadline having seen 2P1D", err)
	}
}

// roundTrip answers every request in memory (no network, so it runs inside
// a synctest bubble).
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestWaitDeadlineOnFakeClock runs srtctl's own schedule — 180 polls ten
// seconds apart, half an hour — on synctest's clock: every poll is made,
// none early, and the deadline comes when the last one has failed.
func TestWaitDeadlineOnFakeClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var polls []time.Duration
		start := time.Now()
		client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
			polls = append(polls, time.Since(start))
			body := `{"status":"healthy","instances":[{"component":"prefill","endpoint":"generate"}]}`
			return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(body)), Header: http.Header{}, Request: r}, nil
		})}
		_, err := Wait(t.Context(), WaitOptions{Client: client, BaseURL: "http://frontend:8000", Kind: Dynamo,
			Expect: Expect{1, 1}, Interval: 10 * time.Second, MaxAttempts: 180})
		if !errors.Is(err, ErrDeadline) {
			t.Fatalf("Wait = %v, want ErrDeadline", err)
		}
		if len(polls) != 180 {
			t.Fatalf("%d polls, want 180", len(polls))
		}
		for i, at := range polls {
			if want := time.Duration(i) * 10 * time.Second; at != want {
				t.Fatalf("poll %d at %s, want %s", i+1, at, want)
			}
		}
		if elapsed := time.Since(start); elapsed < 179*10*time.Second || elapsed > 180*10*time.Second {
			t.Errorf("deadline after %s, want between the last poll (29m50s) and 30m", elapsed)
		}
	})
}
