package fakeapi

import (
	"testing"
	"time"
)

// WaitTimeout is how long Wait waits: far longer than any controller
// needs against the in-memory API, short enough to fail a stuck test fast.
const WaitTimeout = 10 * time.Second

// Wait polls cond every 2 ms until it holds, and fails t (naming what)
// after WaitTimeout. Controllers' fake-API tests wait with it for the
// level their controller should reach.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	wait(t, what, cond, WaitTimeout)
}

func wait(t testing.TB, what string, cond func() bool, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
