package web

import (
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Failed dashboard logins are limited per client address: a burst of
// loginFailBurst wrong tokens, then one more every loginFailEvery. A person
// who mistypes never notices; a script guessing tokens (256-bit, so it
// cannot succeed anyway) is slowed to a crawl and does not flood the log.
// While an address has to wait, every login from it gets 429 with
// Retry-After, a good token too: answering good ones would keep answering
// guesses. The API's bearer tokens and existing sessions are not affected.
const (
	loginFailBurst = 10
	loginFailEvery = 6 * time.Second
	// loginIdle: an address not seen for this long is forgotten.
	loginIdle = 10 * time.Minute
)

// loginLimiter holds a token bucket of failed logins per client address.
type loginLimiter struct {
	mu    sync.Mutex
	now   func() time.Time
	byIP  map[string]*loginBucket
	sweep time.Time // next pass over byIP for idle addresses
}

type loginBucket struct {
	lim  *rate.Limiter
	last time.Time
}

func newLoginLimiter(now func() time.Time) *loginLimiter {
	return &loginLimiter{now: now, byIP: map[string]*loginBucket{}}
}

// clientIP is the address of r's peer without the port.
func clientIP(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// wait is how long the address must wait before its next attempt (0: it
// may try now).
func (l *loginLimiter) wait(ip string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.byIP[ip]
	if b == nil {
		return 0
	}
	now := l.now()
	if t := b.lim.TokensAt(now); t < 1 {
		return time.Duration((1 - t) * float64(loginFailEvery))
	}
	return 0
}

// failed takes one token of the address's bucket.
func (l *loginLimiter) failed(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.After(l.sweep) {
		for k, b := range l.byIP {
			if now.Sub(b.last) > loginIdle {
				delete(l.byIP, k)
			}
		}
		l.sweep = now.Add(loginIdle)
	}
	b := l.byIP[ip]
	if b == nil {
		b = &loginBucket{lim: rate.NewLimiter(rate.Every(loginFailEvery), loginFailBurst)}
		l.byIP[ip] = b
	}
	b.last = now
	b.lim.AllowN(now, 1)
}
