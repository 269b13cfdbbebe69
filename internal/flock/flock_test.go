package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"
)

func TestSecondHolderWaitsAndTimesOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, err = Acquire(context.Background(), path, Options{Timeout: 150 * time.Millisecond, Waiting: func(time.Duration) { calls++ }})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("second acquire: %v, want ErrTimeout", err)
	}
	if calls == 0 {
		t.Error("Waiting was never called while the lock was busy")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(context.Background(), path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l2.Release()
}

func TestContextEndsTheWait(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	l, err := Acquire(context.Background(), path, Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = Acquire(ctx, path, Options{Timeout: time.Hour})
	// Tolerant bound: the lock's own timeout is an hour; the context's is
	// 100 ms. Only a wait that ignored the context comes near a minute.
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Minute {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
}

// TestBackoffOnFakeClock runs a ten-minute wait on synctest's clock: the
// tries back off from 20 ms to one per second, or per Every when it is
// shorter, and the wait ends exactly at the timeout.
func TestBackoffOnFakeClock(t *testing.T) {
	for _, tt := range []struct {
		every   time.Duration
		maxGap  time.Duration
		minimum int // busy tries at least: 10 min at the largest gap
	}{
		{0, time.Second, 600},
		{250 * time.Millisecond, 250 * time.Millisecond, 2400},
	} {
		t.Run(tt.every.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "x.lock")
				held, err := Acquire(t.Context(), path, Options{Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer held.Release()
				var waits []time.Duration
				start := time.Now()
				_, err = Acquire(t.Context(), path, Options{Timeout: 10 * time.Minute, Every: tt.every,
					Waiting: func(w time.Duration) { waits = append(waits, w) }})
				if !errors.Is(err, ErrTimeout) || time.Since(start) != 10*time.Minute {
					t.Fatalf("got %v after %s, want ErrTimeout after exactly 10m", err, time.Since(start))
				}
				if len(waits) < tt.minimum {
					t.Errorf("%d busy tries, want at least %d", len(waits), tt.minimum)
				}
				if waits[0] != 0 || waits[1] != pollMin {
					t.Errorf("first waits %v, want 0 then %s", waits[:2], pollMin)
				}
				for i := 1; i < len(waits); i++ {
					if gap := waits[i] - waits[i-1]; gap <= 0 || gap > tt.maxGap {
						t.Fatalf("gap %s between tries %d and %d, want (0, %s]", gap, i-1, i, tt.maxGap)
					}
				}
			})
		})
	}
}
