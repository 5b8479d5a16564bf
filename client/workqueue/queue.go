package workqueue

import (
	"sync"
	"time"
)

// Queue is a keyed work queue. The zero value is not usable; call New.
type Queue[K comparable] struct {
	base, max time.Duration

	// mu protects every field below; cond signals Get on adds and shutdown.
	mu         sync.Mutex
	cond       *sync.Cond
	queue      []K
	dirty      map[K]struct{} // keys waiting to be processed
	processing map[K]struct{} // keys held by a worker
	failures   map[K]int
	timers     map[K]*delayed
	shutdown   bool

	// Priority order (priority.go); nil for first in, first out.
	prio  func(K) int64
	prios map[K]int64
	heap  *prioHeap[K]
	seq   uint64
}

type delayed struct {
	timer *time.Timer
	at    time.Time
}

// New returns a queue whose retries back off from base up to max.
func New[K comparable](base, max time.Duration) *Queue[K] {
	q := &Queue[K]{
		base:       base,
		max:        max,
		dirty:      map[K]struct{}{},
		processing: map[K]struct{}{},
		failures:   map[K]int{},
		timers:     map[K]*delayed{},
	}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Add queues key unless it is already waiting.
func (q *Queue[K]) Add(key K) {
	p, hasPrio := q.priorityOf(key)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.addLocked(key, p, hasPrio)
}

func (q *Queue[K]) addLocked(key K, prio int64, hasPrio bool) {
	if q.shutdown {
		return
	}
	if _, ok := q.dirty[key]; ok {
		return
	}
	q.dirty[key] = struct{}{}
	if hasPrio {
		q.prios[key] = prio
	}
	if _, ok := q.processing[key]; ok {
		return // Done re-queues it
	}
	q.push(key)
	q.cond.Signal()
}

// AddAfter queues key after d; of several pending delays for one key the
// earliest wins.
func (q *Queue[K]) AddAfter(key K, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shutdown {
		return
	}
	at := time.Now().Add(d)
	if t, ok := q.timers[key]; ok {
		if !t.at.After(at) {
			return
		}
		t.timer.Stop()
	}
	var t *delayed
	t = &delayed{at: at, timer: time.AfterFunc(d, func() {
		p, hasPrio := q.priorityOf(key)
		q.mu.Lock()
		defer q.mu.Unlock()
		if q.timers[key] == t {
			delete(q.timers, key)
		}
		q.addLocked(key, p, hasPrio)
	})}
	q.timers[key] = t
}

// Backoff is the delay AddRateLimited uses for a key's n-th failure (n from 0).
func (q *Queue[K]) Backoff(n int) time.Duration {
	d := q.base
	for i := 0; i < n && d < q.max; i++ {
		d *= 2
	}
	return min(d, q.max)
}

// AddRateLimited queues key after its back-off and counts a failure.
func (q *Queue[K]) AddRateLimited(key K) {
	q.mu.Lock()
	n := q.failures[key]
	q.failures[key] = n + 1
	q.mu.Unlock()
	q.AddAfter(key, q.Backoff(n))
}

// NumRequeues is the number of consecutive failures of key.
func (q *Queue[K]) NumRequeues(key K) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failures[key]
}

// Forget resets key's failure count (call it after a successful sync).
func (q *Queue[K]) Forget(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.failures, key)
}

// Get blocks until a key is ready and hands it to the caller, who must call
// Done with it. It returns false once the queue is shut down.
func (q *Queue[K]) Get() (K, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.size() == 0 && !q.shutdown {
		q.cond.Wait()
	}
	var zero K
	if q.shutdown {
		return zero, false
	}
	key := q.pop()
	delete(q.dirty, key)
	q.processing[key] = struct{}{}
	return key, true
}

// Done releases key; if it was added while held, it is queued again.
func (q *Queue[K]) Done(key K) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if _, ok := q.dirty[key]; ok && !q.shutdown {
		q.push(key)
		q.cond.Signal()
	} else if q.prios != nil {
		delete(q.prios, key)
	}
}

// Len is the number of keys waiting (not counting delayed ones).
func (q *Queue[K]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size()
}

// Idle reports whether nothing is queued, held or delayed.
func (q *Queue[K]) Idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size() == 0 && len(q.processing) == 0 && len(q.timers) == 0
}

// ShutDown stops the queue: pending delays are cancelled, later adds are
// ignored and every Get returns false.
func (q *Queue[K]) ShutDown() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.shutdown = true
	for key, t := range q.timers {
		t.timer.Stop()
		delete(q.timers, key)
	}
	q.cond.Broadcast()
}
