package expectations

import (
	"testing"
	"time"
)

func TestExpectations(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	e := New(time.Minute, func() time.Time { return now })
	if ok, _ := e.Satisfied("ns/web"); !ok {
		t.Fatal("fresh expectations not satisfied")
	}
	e.ExpectCreate("ns/web", "web-0")
	e.ExpectDelete("ns/web", "uid-2")
	if ok, in := e.Satisfied("ns/web"); ok || in != time.Minute {
		t.Fatalf("satisfied=%v retryIn=%v with two in flight, want false 1m", ok, in)
	}
	if ok, _ := e.Satisfied("ns/other"); !ok {
		t.Fatal("another set is blocked")
	}
	e.CreateObserved("ns/web", "web-0")
	if ok, _ := e.Satisfied("ns/web"); ok {
		t.Fatal("satisfied with a delete still in flight")
	}
	e.DeleteObserved("ns/web", "uid-other") // another pod: no effect
	if ok, _ := e.Satisfied("ns/web"); ok {
		t.Fatal("satisfied by the delete of another pod")
	}
	e.DeleteObserved("ns/web", "uid-2")
	if ok, _ := e.Satisfied("ns/web"); !ok {
		t.Fatal("not satisfied after every observation")
	}

	e.ExpectCreate("ns/web", "web-1")
	now = now.Add(30 * time.Second)
	if ok, in := e.Satisfied("ns/web"); ok || in != 30*time.Second {
		t.Fatalf("satisfied=%v retryIn=%v, want false 30s", ok, in)
	}
	now = now.Add(31 * time.Second)
	if ok, _ := e.Satisfied("ns/web"); !ok {
		t.Fatal("expired expectation still blocks")
	}

	e.ExpectCreate("ns/web", "web-1")
	e.Forget("ns/web")
	if ok, _ := e.Satisfied("ns/web"); !ok {
		t.Fatal("forgotten set still blocked")
	}
}

// TestCountedCreates: creates by count (generateName), as the ReplicaSet
// and Job controllers expect them, with named deletes beside them.
func TestCountedCreates(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	e := New(time.Minute, func() time.Time { return now })
	const key = "ns/web"
	e.ExpectCreates(key, 0) // nothing to expect
	if ok, _ := e.Satisfied(key); !ok {
		t.Fatal("zero creates block")
	}
	e.ExpectCreates(key, 2)
	if ok, in := e.Satisfied(key); ok || in != time.Minute {
		t.Fatalf("satisfied=%v retryIn=%v with 2 creates pending", ok, in)
	}
	e.CountedCreateObserved(key)
	if c, _ := e.Pending(key); c != 1 {
		t.Fatalf("pending creates %d, want 1", c)
	}
	e.CountedCreateObserved(key)
	e.CountedCreateObserved(key) // an extra observation does not go negative
	if ok, _ := e.Satisfied(key); !ok {
		t.Fatal("not satisfied after both creates")
	}
	if c, d := e.Pending(key); c != 0 || d != 0 {
		t.Fatalf("pending %d %d", c, d)
	}

	e.ExpectDelete(key, "p1")
	e.ExpectDelete(key, "p2")
	e.DeleteObserved(key, "p1")
	e.DeleteObserved(key, "p1") // seen twice (deletionTimestamp, then gone): counts once
	if _, d := e.Pending(key); d != 1 {
		t.Fatalf("pending deletes %d, want 1", d)
	}
	e.ExpectCreates(key, 3)
	now = now.Add(30 * time.Second)
	e.ExpectCreates(key, 1) // more creates: the count's age starts again
	now = now.Add(45 * time.Second)
	ok, in := e.Satisfied(key)
	if ok || in != 15*time.Second {
		t.Fatalf("satisfied=%v retryIn=%v, want the counted creates blocking 15s more (the delete expired)", ok, in)
	}
	if c, d := e.Pending(key); c != 4 || d != 0 {
		t.Fatalf("pending %d %d, want 4 creates and the expired delete dropped", c, d)
	}
	now = now.Add(16 * time.Second)
	if ok, _ := e.Satisfied(key); !ok {
		t.Fatal("expired counted creates still block")
	}
	e.CountedCreateObserved(key) // no entry: no-op
	if e.TTL() != time.Minute {
		t.Fatalf("TTL %v", e.TTL())
	}
}
