// Package expectations tracks the creates and deletes a controller has sent
// and not yet seen in its informer's cache, per owner key, so that a stale
// cache never makes it act twice (the skeleton of Kubernetes'
// controller_utils.go ControllerExpectations, keyed by what identifies each
// write). The StatefulSet controller expects a create by pod name, the
// DaemonSet controller by node name; both expect deletes by pod uid. The
// ReplicaSet and Job controllers create pods with generateName, whose
// names are unknown until the answer (which the watch may beat), so they
// expect creates by count (ExpectCreates, as upstream's
// ControllerExpectations); the ReplicaSet controller expects deletes by
// pod name, the Job controller deletes and finalizer removals by uid.
package expectations

import (
	"sync"
	"time"
)

// Tracker holds the expectations of every owner. A create is expected by a
// name the caller chooses (a pod name, a node name) and observed when the
// caller sees it in its cache; a delete is expected by pod uid and observed
// when that pod gets a deletionTimestamp or leaves the cache. An
// expectation older than ttl counts as observed (a lost watch event must
// not wedge the owner). Safe for concurrent use.
type Tracker struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex // protects sets
	sets map[string]*pending
}

type pending struct {
	creates map[string]time.Time // pod name -> when expected
	deletes map[string]time.Time // pod uid -> when expected
	// counted creates (ExpectCreates), expected at countAt.
	count   int
	countAt time.Time
}

// New returns a Tracker whose expectations expire after ttl on the clock now.
func New(ttl time.Duration, now func() time.Time) *Tracker {
	return &Tracker{ttl: ttl, now: now, sets: map[string]*pending{}}
}

func (e *Tracker) entry(key string) *pending {
	p, ok := e.sets[key]
	if !ok {
		p = &pending{creates: map[string]time.Time{}, deletes: map[string]time.Time{}}
		e.sets[key] = p
	}
	return p
}

// ExpectCreate records a create of name for owner key, before it is sent.
func (e *Tracker) ExpectCreate(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(key).creates[name] = e.now()
}

// ExpectDelete records a delete of the pod with uid, before it is sent.
func (e *Tracker) ExpectDelete(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.entry(key).deletes[uid] = e.now()
}

// CreateObserved clears the create of name: seen in the cache, or the
// create failed.
func (e *Tracker) CreateObserved(key, name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.sets[key]; ok {
		delete(p.creates, name)
		e.dropEmpty(key, p)
	}
}

// DeleteObserved clears the delete of the pod with uid.
func (e *Tracker) DeleteObserved(key, uid string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.sets[key]; ok {
		delete(p.deletes, uid)
		e.dropEmpty(key, p)
	}
}

// ExpectCreates records n more creates for owner key whose names are
// not known (generateName), before they are sent; each is cleared by
// CountedCreateObserved. The expectation's age starts again.
func (e *Tracker) ExpectCreates(key string, n int) {
	if n <= 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.entry(key)
	p.count += n
	p.countAt = e.now()
}

// CountedCreateObserved clears one counted create: a new pod of the owner
// appeared in the cache, or a create failed or was not sent.
func (e *Tracker) CountedCreateObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.sets[key]; ok && p.count > 0 {
		p.count--
		e.dropEmpty(key, p)
	}
}

// Pending reports owner key's outstanding creates (named and counted) and
// deletes, expired or not (tests, logs).
func (e *Tracker) Pending(key string) (creates, deletes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p, ok := e.sets[key]; ok {
		return len(p.creates) + p.count, len(p.deletes)
	}
	return 0, 0
}

// TTL is how long an expectation waits to be observed.
func (e *Tracker) TTL() time.Duration { return e.ttl }

func (e *Tracker) dropEmpty(key string, p *pending) {
	if len(p.creates) == 0 && len(p.deletes) == 0 && p.count == 0 {
		delete(e.sets, key)
	}
}

// Satisfied reports whether owner key has nothing in flight. When it has,
// retryIn is when the oldest expectation expires.
func (e *Tracker) Satisfied(key string) (ok bool, retryIn time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, found := e.sets[key]
	if !found {
		return true, 0
	}
	now := e.now()
	if p.count > 0 {
		if left := p.countAt.Add(e.ttl).Sub(now); left <= 0 {
			p.count = 0
		} else {
			retryIn = left
		}
	}
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

// Forget drops everything about owner key (the owner is gone).
func (e *Tracker) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.sets, key)
}
