package workqueue

import (
	"testing"
	"time"
)

func TestPriorityOrder(t *testing.T) {
	prio := map[string]int64{"low1": 0, "low2": 0, "high": 1000, "mid": 10, "low3": 0, "neg": -5}
	q := NewPriority[string](time.Millisecond, time.Second, func(k string) int64 { return prio[k] })
	for _, k := range []string{"low1", "neg", "low2", "high", "low1", "mid", "low3"} {
		q.Add(k)
	}
	if q.Len() != 6 {
		t.Fatalf("Len = %d, want 6", q.Len())
	}
	for _, want := range []string{"high", "mid", "low1", "low2", "low3", "neg"} {
		got := get(t, q)
		if got != want {
			t.Fatalf("Get = %q, want %q", got, want)
		}
		q.Done(got)
	}
	if !q.Idle() {
		t.Fatal("queue not idle")
	}
}

func TestPriorityReaddedWhileProcessing(t *testing.T) {
	prio := map[string]int64{"a": 0, "b": 5}
	q := NewPriority[string](time.Millisecond, time.Second, func(k string) int64 { return prio[k] })
	q.Add("a")
	if got := get(t, q); got != "a" {
		t.Fatalf("Get = %q", got)
	}
	prio["a"] = 9 // raised while held: Done re-queues it with the new priority
	q.Add("a")
	q.Add("b")
	q.Done("a")
	for _, want := range []string{"a", "b"} {
		got := get(t, q)
		if got != want {
			t.Fatalf("Get = %q, want %q", got, want)
		}
		q.Done(got)
	}
	if len(q.prios) != 0 {
		t.Fatalf("priorities left behind: %v", q.prios)
	}
}
