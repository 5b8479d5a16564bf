package workqueue

import (
	"testing"
	"testing/synctest"
	"time"
)

func get(t *testing.T, q *Queue[string]) string {
	t.Helper()
	k, ok := q.Get()
	if !ok {
		t.Fatal("Get: queue shut down")
	}
	return k
}

func TestDedupAndOrder(t *testing.T) {
	q := New[string](time.Millisecond, time.Second)
	for _, k := range []string{"a", "b", "a", "c", "b"} {
		q.Add(k)
	}
	if q.Len() != 3 {
		t.Fatalf("Len = %d, want 3", q.Len())
	}
	for _, want := range []string{"a", "b", "c"} {
		if got := get(t, q); got != want {
			t.Fatalf("Get = %q, want %q", got, want)
		}
	}
}

func TestKeyAddedWhileProcessingWaitsForDone(t *testing.T) {
	q := New[string](time.Millisecond, time.Second)
	q.Add("a")
	k := get(t, q)
	q.Add("a") // while held
	q.Add("a")
	if q.Len() != 0 {
		t.Fatalf("a key held by a worker was queued again (Len %d)", q.Len())
	}
	q.Done(k)
	if q.Len() != 1 {
		t.Fatalf("Done did not re-queue the dirty key (Len %d)", q.Len())
	}
	q.Done(get(t, q))
	if !q.Idle() {
		t.Fatal("queue not idle")
	}
}

func TestBackoff(t *testing.T) {
	q := New[string](10*time.Millisecond, 100*time.Millisecond)
	tests := []struct {
		n    int
		want time.Duration
	}{{0, 10 * time.Millisecond}, {1, 20 * time.Millisecond}, {3, 80 * time.Millisecond}, {4, 100 * time.Millisecond}, {60, 100 * time.Millisecond}}
	for _, tc := range tests {
		if got := q.Backoff(tc.n); got != tc.want {
			t.Errorf("Backoff(%d) = %v, want %v", tc.n, got, tc.want)
		}
	}
}

func TestRateLimitedRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](10*time.Millisecond, time.Second)
		start := time.Now()
		var waits []time.Duration
		for range 3 {
			q.AddRateLimited("a")
			k := get(t, q)
			waits = append(waits, time.Since(start))
			start = time.Now()
			q.Done(k)
		}
		want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}
		for i := range want {
			if waits[i] != want[i] {
				t.Fatalf("waits = %v, want %v", waits, want)
			}
		}
		if q.NumRequeues("a") != 3 {
			t.Fatalf("NumRequeues = %d", q.NumRequeues("a"))
		}
		q.Forget("a")
		if q.NumRequeues("a") != 0 {
			t.Fatal("Forget did not reset the count")
		}
	})
}

func TestAddAfterEarliestWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](time.Millisecond, time.Second)
		start := time.Now()
		q.AddAfter("a", time.Second)
		q.AddAfter("a", 100*time.Millisecond)
		q.AddAfter("a", 500*time.Millisecond)
		get(t, q)
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Fatalf("delayed key arrived after %v, want 100ms", d)
		}
		time.Sleep(2 * time.Second)
		if q.Len() != 0 {
			t.Fatal("a superseded delay fired too")
		}
	})
}

func TestShutDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := New[string](time.Millisecond, time.Second)
		q.AddAfter("late", time.Minute)
		done := make(chan bool)
		go func() {
			_, ok := q.Get()
			done <- ok
		}()
		synctest.Wait() // the worker is blocked in Get
		q.ShutDown()
		if ok := <-done; ok {
			t.Fatal("Get returned a key after ShutDown")
		}
		q.Add("x")
		if q.Len() != 0 {
			t.Fatal("Add after ShutDown queued a key")
		}
		time.Sleep(2 * time.Minute)
		if !q.Idle() {
			t.Fatal("a delayed add fired after ShutDown")
		}
	})
}
