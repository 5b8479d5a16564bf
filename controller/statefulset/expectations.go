package statefulset

import (
	"sync"
	"time"
)

// expectations track the creates and deletes the controller has sent and
// not yet seen in its pod cache, per set key, so that a stale cache never
// makes it act twice (create a pod again, delete the next one early).
//
// A create is expected by pod name and observed when a pod of that name
// appears in the cache; a delete is expected by pod uid and observed when
// that pod gets a deletionTimestamp or leaves the cache. An expectation
// older than ttl counts as observed (a lost watch event must not wedge the
// set).
type expectations struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex // protects sets
	sets map[string]*pending
}

type pending struct {
	creates map[string]time.Time // pod name -> when expected
	deletes map[string]time.Time // pod uid -> when expected
}

func newExpectations(ttl time.Duration, now func() time.Time) *expectations {
	return &expectations{ttl: ttl, now: now, sets: map[string]*pending{}}
}

func (e *expectations) entry(key string) *pending {
	p, ok := e.sets[key]
	if !ok {
		p = &pending{creates: map[string]time.Time{}, deletes: map[string]time.Time{}}
		e.sets[key] = p
	}
	return p
}

// expectCreate records a create of pod name for set key, before it is sent.
func (e *expectations) expectCreate(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(key).creates[name] = e.now()
}

// expectDelete records a delete of the pod with uid, before it is sent.
func (e *expectations) expectDelete(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(key).deletes[uid] = e.now()
}

// createObserved clears the create of pod name: seen in the cache, or the
// create failed.
func (e *expectations) createObserved(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.sets[key]; ok {
		delete(p.creates, name)
		e.dropEmpty(key, p)
	}
}

// deleteObserved clears the delete of the pod with uid.
func (e *expectations) deleteObserved(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.sets[key]; ok {
		delete(p.deletes, uid)
		e.dropEmpty(key, p)
	}
}

func (e *expectations) dropEmpty(key string, p *pending) {
	if len(p.creates) == 0 && len(p.deletes) == 0 {
		delete(e.sets, key)
	}
}

// satisfied reports whether set key has nothing in flight. When it has,
// retryIn is when the oldest expectation expires.
func (e *expectations) satisfied(key string) (ok bool, retryIn time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, found := e.sets[key]
	if !found {
		return true, 0
	}
	now := e.now()
	for _, m := range []map[string]time.Time{p.creates, p.deletes} {
		for k, at := range m {
			left := at.Add(e.ttl).Sub(now)
			if left <= 0 {
				delete(m, k)
				continue
			}
			if retryIn == 0 || left < retryIn {
				retryIn = left
			}
		}
	}
	e.dropEmpty(key, p)
	return retryIn == 0, retryIn
}

// forget drops everything about set key (the set is gone).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.sets, key)
}
