package deployment

import (
	"testing"
	"time"
)

func TestExpectations(t *testing.T) {
	now := t0
	e := newExpectations(time.Minute, func() time.Time { return now })
	const key = "ns/web"
	if !e.satisfied(key) {
		t.Fatal("unknown key not satisfied")
	}
	e.expect(key, 2, nil)
	if e.satisfied(key) {
		t.Fatal("satisfied with 2 creations pending")
	}
	e.creationObserved(key)
	if e.satisfied(key) {
		t.Fatal("satisfied with 1 creation pending")
	}
	e.creationObserved(key)
	e.creationObserved(key) // an extra observation does not go negative
	if !e.satisfied(key) {
		t.Fatal("not satisfied after both creations")
	}
	if a, d := e.pending(key); a != 0 || d != 0 {
		t.Fatalf("pending %d %d", a, d)
	}

	e.expect(key, 0, []string{"p1", "p2"})
	e.deletionObserved(key, "p1")
	e.deletionObserved(key, "p1") // seen twice (deletionTimestamp, then gone): counts once
	if e.satisfied(key) {
		t.Fatal("satisfied with p2 pending")
	}
	e.deletionObserved(key, "other")
	if _, d := e.pending(key); d != 1 {
		t.Fatalf("pending deletions %d, want 1", d)
	}
	now = now.Add(2 * time.Minute)
	if !e.satisfied(key) {
		t.Fatal("expired expectations still block")
	}
	e.expect(key, 1, nil)
	e.forget(key)
	if !e.satisfied(key) {
		t.Fatal("forgotten key not satisfied")
	}
	e.creationObserved(key) // no entry: no-op
	e.deletionObserved(key, "p")
}
