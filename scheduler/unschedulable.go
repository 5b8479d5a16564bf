package scheduler

import (
	"sync"
	"time"
)

// unschedulablePods holds the pods that fit nowhere until a cluster change
// (wake) or their back-off (due) sends them back to the queue. Each pod's
// back-off doubles with its consecutive failures, from base up to max, and
// is reset when the pod leaves (bound, deleted, not ours).
type unschedulablePods struct {
	base, max time.Duration

	// mu protects the fields below.
	mu      sync.Mutex
	entries map[string]*unschedEntry
	// wakes counts wakeAll calls, so a decision that raced with a wake is
	// retried at once instead of waiting for its back-off.
	wakes uint64
}

type unschedEntry struct {
	attempts int
	waiting  bool
	due      time.Time
}

func newUnschedulablePods(base, max time.Duration) *unschedulablePods {
	return &unschedulablePods{base: base, max: max, entries: map[string]*unschedEntry{}}
}

// backoff is the wait after the n-th consecutive failure (n from 1).
func (u *unschedulablePods) backoff(n int) time.Duration {
	d := u.base
	for i := 1; i < n && d < u.max; i++ {
		d *= 2
	}
	return min(d, u.max)
}

// generation is the wake count; pass it to add.
func (u *unschedulablePods) generation() uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.wakes
}

// add parks key after a failed attempt made when the wake count was gen.
// It returns false, parking nothing, when a wake happened since gen: the
// caller should retry at once.
func (u *unschedulablePods) add(key string, now time.Time, gen uint64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.entries[key]
	if !ok {
		e = &unschedEntry{}
		u.entries[key] = e
	}
	e.attempts++
	if u.wakes != gen {
		e.waiting = false
		return false
	}
	e.waiting, e.due = true, now.Add(u.backoff(e.attempts))
	return true
}

// has reports whether key is parked.
func (u *unschedulablePods) has(key string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	e, ok := u.entries[key]
	return ok && e.waiting
}

// remove forgets key and its back-off.
func (u *unschedulablePods) remove(key string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	delete(u.entries, key)
}

// takeAll unparks every pod (keeping their back-off counts) and bumps the
// wake count.
func (u *unschedulablePods) takeAll() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.wakes++
	var out []string
	for k, e := range u.entries {
		if e.waiting {
			e.waiting = false
			out = append(out, k)
		}
	}
	return out
}

// takeDue unparks the pods whose back-off has passed at now.
func (u *unschedulablePods) takeDue(now time.Time) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	for k, e := range u.entries {
		if e.waiting && !now.Before(e.due) {
			e.waiting = false
			out = append(out, k)
		}
	}
	return out
}

// waiting is the number of parked pods.
func (u *unschedulablePods) waiting() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, e := range u.entries {
		if e.waiting {
			n++
		}
	}
	return n
}
