package workqueue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// logRecorder is a slog handler that keeps "LEVEL message" lines.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, rec.Level.String()+" "+rec.Message)
	return nil
}
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecorder) WithGroup(string) slog.Handler      { return r }

func (r *logRecorder) get() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lines)
}

var errBoom = errors.New("boom")

// TestRunResults: what each result of a sync does to the key, timed on
// the fake clock. A sync returns results[i] on its i-th call and nil
// after them.
func TestRunResults(t *testing.T) {
	const base = 10 * time.Millisecond
	tests := []struct {
		name       string
		results    []error
		maxRetries int
		// calls are the instants (since the first Add) of every sync.
		calls    []time.Duration
		failures int // NumRequeues at the end
		log      []string
		onError  []string // "retries dropped" per OnError call
	}{
		{
			name:  "success is synced once",
			calls: []time.Duration{0},
		},
		{
			name:    "errors back off until a success",
			results: []error{errBoom, errBoom, errBoom},
			calls:   []time.Duration{0, base, 3 * base, 7 * base},
			log:     []string{"WARN sync failed, retrying", "WARN sync failed, retrying", "WARN sync failed, retrying"},
			onError: []string{"0 false", "1 false", "2 false"},
		},
		{
			name:       "dropped after MaxRetries",
			results:    []error{errBoom, errBoom, errBoom, errBoom},
			maxRetries: 2,
			calls:      []time.Duration{0, base, 3 * base},
			log:        []string{"WARN sync failed, retrying", "WARN sync failed, retrying", "ERROR sync failed too often, dropping until the next change"},
			onError:    []string{"0 false", "1 false", "2 true"},
		},
		{
			name:    "RequeueAfter looks again later and forgets failures",
			results: []error{errBoom, RequeueAfter(time.Second)},
			calls:   []time.Duration{0, base, base + time.Second},
			log:     []string{"WARN sync failed, retrying"},
			onError: []string{"0 false"},
		},
		{
			name:    "wrapped RequeueAfter",
			results: []error{fmt.Errorf("later: %w", RequeueAfter(time.Minute))},
			calls:   []time.Duration{0, time.Minute},
		},
		{
			name:    "RequeueAfter zero requeues at once",
			results: []error{RequeueAfter(0)},
			calls:   []time.Duration{0, 0},
		},
		{
			name:     "handed off keeps the failures and does not retry",
			results:  []error{errBoom, ErrHandedOff},
			calls:    []time.Duration{0, base},
			failures: 1,
			log:      []string{"WARN sync failed, retrying"},
			onError:  []string{"0 false"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string](base, time.Second)
				logs := &logRecorder{}
				var calls []time.Duration
				var onError []string
				start := time.Now()
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan struct{})
				go func() {
					defer close(done)
					Run(ctx, q, func(_ context.Context, key string) error {
						calls = append(calls, time.Since(start))
						if n := len(calls) - 1; n < len(tc.results) {
							return tc.results[n]
						}
						return nil
					}, Options[string]{
						MaxRetries: tc.maxRetries,
						Log:        slog.New(logs),
						OnError: func(_ context.Context, f Failure[string]) {
							if f.Key != "a" || !errors.Is(f.Err, errBoom) {
								t.Errorf("OnError(%q, %v)", f.Key, f.Err)
							}
							onError = append(onError, fmt.Sprint(f.Retries, " ", f.Dropped))
						},
					})
				}()
				q.Add("a")
				time.Sleep(time.Hour) // every retry and requeue is due by now
				synctest.Wait()
				cancel()
				<-done
				if !slices.Equal(calls, tc.calls) {
					t.Errorf("syncs at %v, want %v", calls, tc.calls)
				}
				if n := q.NumRequeues("a"); n != tc.failures {
					t.Errorf("NumRequeues = %d, want %d", n, tc.failures)
				}
				if got := logs.get(); !slices.Equal(got, tc.log) {
					t.Errorf("log = %q, want %q", got, tc.log)
				}
				if !slices.Equal(onError, tc.onError) {
					t.Errorf("OnError calls = %q, want %q", onError, tc.onError)
				}
			})
		})
	}
}

// TestRunRetryLevel: RetryLevel chooses the level of the retry line.
func TestRunRetryLevel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](time.Millisecond, time.Millisecond)
		logs := &logRecorder{}
		errQuiet := errors.New("expected")
		n := 0
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go Run(ctx, q, func(context.Context, string) error {
			n++
			switch n {
			case 1:
				return errQuiet
			case 2:
				return errBoom
			}
			return nil
		}, Options[string]{Log: slog.New(logs), RetryLevel: func(f Failure[string]) slog.Level {
			if errors.Is(f.Err, errQuiet) {
				return slog.LevelDebug
			}
			return slog.LevelWarn
		}})
		q.Add("a")
		time.Sleep(time.Second)
		synctest.Wait()
		want := []string{"DEBUG sync failed, retrying", "WARN sync failed, retrying"}
		if got := logs.get(); !slices.Equal(got, want) {
			t.Fatalf("log = %q, want %q", got, want)
		}
	})
}

// TestRunCancelledNoRetry: a failure after ctx ended is neither retried,
// logged nor reported.
func TestRunCancelledNoRetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](time.Millisecond, time.Millisecond)
		logs := &logRecorder{}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		calls := 0
		go func() {
			defer close(done)
			Run(ctx, q, func(ctx context.Context, _ string) error {
				calls++
				cancel()
				return ctx.Err()
			}, Options[string]{Log: slog.New(logs), OnError: func(context.Context, Failure[string]) {
				t.Error("OnError called after ctx ended")
			}})
		}()
		q.Add("a")
		<-done
		if calls != 1 || q.NumRequeues("a") != 0 || len(logs.get()) != 0 {
			t.Fatalf("calls %d, requeues %d, log %q; want 1, 0, none", calls, q.NumRequeues("a"), logs.get())
		}
	})
}

// TestRunShutdownWaitsForInFlightSync: when ctx ends, the queue is shut
// down at once (no new key is handed out) and Run returns only after the
// sync in flight has returned.
func TestRunShutdownWaitsForInFlightSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](time.Millisecond, time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		release := make(chan struct{})
		var synced []string
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(ctx, q, func(_ context.Context, k string) error {
				synced = append(synced, k)
				<-release
				return nil
			}, Options[string]{})
		}()
		q.Add("a")
		synctest.Wait() // "a" is in flight
		q.Add("b")
		cancel()
		synctest.Wait()
		select {
		case <-done:
			t.Error("Run returned while a sync was in flight")
		default:
		}
		close(release)
		<-done
		if !slices.Equal(synced, []string{"a"}) {
			t.Fatalf("synced %q, want only the in-flight key", synced)
		}
	})
}

// TestRunReturnsOnShutDown: Run also returns when the queue is shut down
// with ctx still live.
func TestRunReturnsOnShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](time.Millisecond, time.Second)
		done := make(chan struct{})
		go func() {
			defer close(done)
			Run(t.Context(), q, func(context.Context, string) error { return nil }, Options[string]{Workers: 3})
		}()
		synctest.Wait()
		q.ShutDown()
		<-done
	})
}

// TestRunWorkers: Workers syncs run at once, but never two of one key.
func TestRunWorkers(t *testing.T) {
	tests := []struct {
		workers, want int
	}{{0, 1}, {1, 1}, {3, 3}}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := New[string](time.Millisecond, time.Second)
				var mu sync.Mutex
				inFlight := map[string]bool{}
				concurrent := 0
				release := make(chan struct{})
				ctx, cancel := context.WithCancel(t.Context())
				done := make(chan struct{})
				go func() {
					defer close(done)
					Run(ctx, q, func(_ context.Context, k string) error {
						mu.Lock()
						if inFlight[k] {
							t.Errorf("key %s synced by two workers", k)
						}
						inFlight[k] = true
						concurrent++
						mu.Unlock()
						<-release
						mu.Lock()
						delete(inFlight, k)
						mu.Unlock()
						return nil
					}, Options[string]{Workers: tc.workers})
				}()
				for _, k := range []string{"a", "b", "c", "d", "e"} {
					q.Add(k)
				}
				synctest.Wait()
				q.Add("a") // held: waits for Done
				synctest.Wait()
				mu.Lock()
				got := concurrent
				mu.Unlock()
				if got != tc.want {
					t.Errorf("%d syncs in flight, want %d", got, tc.want)
				}
				close(release)
				synctest.Wait()
				cancel()
				<-done
			})
		})
	}
}
