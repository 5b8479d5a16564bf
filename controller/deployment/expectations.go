package deployment

import (
	"sync"
	"time"
)

// expectations remembers, per Deployment key, the pod creations and
// deletions the controller has issued but not yet seen in its pod cache,
// as Kubernetes' UIDTrackingControllerExpectations: creations are counted
// (generated names are not known in advance), deletions are tracked by pod
// name so that seeing one pod twice (deletionTimestamp set, then gone)
// counts once. A Deployment with pending expectations is not planned
// again, so a stale cache never causes a second create or delete; pending
// expectations expire after ttl in case an event was missed.
type expectations struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex // protects m
	m  map[string]*expectation
}

type expectation struct {
	adds int
	dels map[string]struct{}
	at   time.Time
}

func newExpectations(ttl time.Duration, now func() time.Time) *expectations {
	return &expectations{ttl: ttl, now: now, m: map[string]*expectation{}}
}

// satisfied reports whether key may be planned: nothing pending, or the
// pending expectations are older than ttl.
func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok || (x.adds <= 0 && len(x.dels) == 0) {
		return true
	}
	return e.now().Sub(x.at) > e.ttl
}

// expect replaces key's expectations with adds creations and the
// deletions of pods.
func (e *expectations) expect(key string, adds int, pods []string) {
	x := &expectation{adds: adds, dels: make(map[string]struct{}, len(pods)), at: e.now()}
	for _, p := range pods {
		x.dels[p] = struct{}{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = x
}

// creationObserved lowers key's pending creations by one (also used when
// a creation failed or was not attempted).
func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok && x.adds > 0 {
		x.adds--
	}
}

// deletionObserved marks pod's deletion as seen (or as failed).
func (e *expectations) deletionObserved(key, pod string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		delete(x.dels, pod)
	}
}

// forget drops key's expectations (its Deployment is gone).
func (e *expectations) forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// pending reports key's outstanding creations and deletions (tests, logs).
func (e *expectations) pending(key string) (adds, dels int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		return max(x.adds, 0), len(x.dels)
	}
	return 0, 0
}
