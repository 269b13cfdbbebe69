package flock

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
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
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("got %v after %s", err, time.Since(start))
	}
}
