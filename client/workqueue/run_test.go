package workqueue

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestRun: a failing key is retried with back-off until it succeeds, then
// its failures are forgotten; Run returns after ShutDown.
func TestRun(t *testing.T) {
	q := New[string](time.Millisecond, 10*time.Millisecond)
	calls := map[string]int{}
	done := make(chan struct{})
	succeeded := make(chan struct{})
	go func() {
		defer close(done)
		Run(context.Background(), q, func(_ context.Context, k string) error {
			calls[k]++
			if calls[k] < 3 {
				return errors.New("not yet")
			}
			close(succeeded)
			return nil
		}, slog.New(slog.DiscardHandler), "key")
	}()
	q.Add("a")
	select {
	case <-succeeded:
	case <-time.After(5 * time.Second):
		t.Fatal("the key was not retried to success")
	}
	q.ShutDown()
	<-done
	if calls["a"] != 3 {
		t.Fatalf("sync called %d times, want 3", calls["a"])
	}
	if n := q.NumRequeues("a"); n != 0 {
		t.Fatalf("failures after success: %d, want 0 (forgotten)", n)
	}
}

// TestRunCancelledNoRetry: a failure after ctx ended is not re-added.
func TestRunCancelledNoRetry(t *testing.T) {
	q := New[string](time.Millisecond, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	synced := make(chan struct{}, 1)
	go func() {
		defer close(done)
		Run(ctx, q, func(ctx context.Context, _ string) error {
			cancel()
			synced <- struct{}{}
			return ctx.Err()
		}, slog.New(slog.DiscardHandler), "key")
	}()
	q.Add("a")
	<-synced
	time.Sleep(20 * time.Millisecond) // a back-off re-add would have landed
	if n := q.Len(); n != 0 {
		t.Fatalf("queue length %d after a cancelled sync, want 0", n)
	}
	q.ShutDown()
	<-done
}
