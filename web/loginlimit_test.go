package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestLoginLimiter(t *testing.T) {
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	l := newLoginLimiter(c.now)
	for i := range loginFailBurst {
		if w := l.wait("192.0.2.1"); w != 0 {
			t.Fatalf("failure %d: wait %v within the burst", i, w)
		}
		l.failed("192.0.2.1")
	}
	if w := l.wait("192.0.2.1"); w != loginFailEvery {
		t.Fatalf("after %d failures: wait %v, want %v", loginFailBurst, w, loginFailEvery)
	}
	if w := l.wait("192.0.2.2"); w != 0 {
		t.Fatalf("another address waits %v", w)
	}
	c.add(loginFailEvery / 2)
	if w := l.wait("192.0.2.1"); w != loginFailEvery/2 {
		t.Fatalf("half way: wait %v", w)
	}
	c.add(loginFailEvery / 2)
	if w := l.wait("192.0.2.1"); w != 0 {
		t.Fatalf("after %v: still waits %v", loginFailEvery, w)
	}
	l.failed("192.0.2.1") // the one token that came back
	if w := l.wait("192.0.2.1"); w == 0 {
		t.Fatal("the bucket refilled faster than one token per period")
	}

	// Idle addresses are forgotten (at the next failure after the sweep
	// time), so the map does not grow with every address ever seen.
	c.add(loginIdle + time.Second)
	l.failed("192.0.2.3")
	l.mu.Lock()
	_, kept := l.byIP["192.0.2.1"]
	n := len(l.byIP)
	l.mu.Unlock()
	if kept || n != 1 {
		t.Fatalf("after %v idle: %d addresses kept (192.0.2.1 kept: %t)", loginIdle, n, kept)
	}
}

func TestLoginRateLimited(t *testing.T) {
	const good = "good-token"
	c := &clock{t: time.Unix(1_800_000_000, 0)}
	d, err := New(Config{
		API: http.NotFoundHandler(),
		Authenticate: func(_ context.Context, tok string) (Identity, bool) {
			return Identity{Name: "admin"}, tok == good
		},
		Now: c.now,
	})
	if err != nil {
		t.Fatal(err)
	}
	login := func(remote, tok string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "https://skiff.test/ui/login", strings.NewReader(`{"token":"`+tok+`"}`))
		r.Header.Set("Content-Type", "application/json")
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		d.ServeHTTP(w, r)
		return w
	}
	for i := range loginFailBurst {
		if w := login("192.0.2.7:40000", "guess"); w.Code != http.StatusUnauthorized {
			t.Fatalf("wrong token %d: %d %s", i, w.Code, w.Body)
		}
	}
	for _, tok := range []string{"guess", good} { // a good token too: no oracle
		w := login("192.0.2.7:40001", tok)
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "6" || !strings.Contains(w.Body.String(), "too many wrong tokens") {
			t.Fatalf("token %q after %d wrong ones: %d Retry-After %q %s", tok, loginFailBurst, w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	}
	if w := login("192.0.2.8:40000", good); w.Code != http.StatusOK {
		t.Fatalf("another address: %d %s", w.Code, w.Body)
	}
	c.add(loginFailEvery)
	if w := login("192.0.2.7:40002", good); w.Code != http.StatusOK {
		t.Fatalf("after the wait: %d %s", w.Code, w.Body)
	}
}
