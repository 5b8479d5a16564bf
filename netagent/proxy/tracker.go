package proxy

import (
	"sync"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

// changeTracker records which Services changed since the last sync, and
// the EndpointSlice trigger times to measure network programming latency
// against. Informer handlers call it; they never read caches or sync.
type changeTracker struct {
	// start: trigger times before it are not measured (the change happened
	// before this proxy could have programmed it).
	start time.Time

	mu       sync.Mutex // protects the fields below
	services map[string]struct{}
	triggers map[string][]time.Time
}

func newChangeTracker(start time.Time) *changeTracker {
	return &changeTracker{start: start, services: map[string]struct{}{}, triggers: map[string][]time.Time{}}
}

// changes is what the tracker hands to one sync.
type changes struct {
	services map[string]struct{} // "namespace/name"
	triggers map[string][]time.Time
}

// take returns the recorded changes and resets the tracker.
func (t *changeTracker) take() changes {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := changes{services: t.services, triggers: t.triggers}
	t.services = map[string]struct{}{}
	t.triggers = map[string][]time.Time{}
	return c
}

// putBack returns trigger times of a failed sync, so that the retry still
// measures them.
func (t *changeTracker) putBack(c changes) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k := range c.services {
		t.services[k] = struct{}{}
	}
	for k, ts := range c.triggers {
		t.triggers[k] = append(t.triggers[k], ts...)
	}
}

func (t *changeTracker) service(key string) {
	if key == "" {
		return
	}
	t.mu.Lock()
	t.services[key] = struct{}{}
	t.mu.Unlock()
}

func (t *changeTracker) slice(sl *api.EndpointSlice) {
	key := sliceService(sl)
	if key == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.services[key] = struct{}{}
	if tt, ok := triggerTime(sl); ok && !tt.Before(t.start) {
		for _, seen := range t.triggers[key] {
			if seen.Equal(tt) {
				return
			}
		}
		t.triggers[key] = append(t.triggers[key], tt)
	}
}

// serviceHandler records Service changes and calls wake.
func (t *changeTracker) serviceHandler(wake func()) client.EventHandler {
	rec := func(obj api.Object) {
		if svc, ok := obj.(*api.Service); ok {
			t.service(svc.Namespace + "/" + svc.Name)
		}
	}
	return client.HandlerFuncs{
		AddFunc:    func(obj api.Object) { rec(obj); wake() },
		UpdateFunc: func(old, obj api.Object) { rec(old); rec(obj); wake() },
		DeleteFunc: func(obj api.Object) { rec(obj); wake() },
	}
}

// sliceHandler records EndpointSlice changes (as changes of the Service
// named by their label) and calls wake.
func (t *changeTracker) sliceHandler(wake func()) client.EventHandler {
	rec := func(obj api.Object) {
		if sl, ok := obj.(*api.EndpointSlice); ok {
			t.slice(sl)
		}
	}
	return client.HandlerFuncs{
		AddFunc: func(obj api.Object) { rec(obj); wake() },
		UpdateFunc: func(old, obj api.Object) {
			if o, ok := old.(*api.EndpointSlice); ok && sliceService(o) != "" {
				t.service(sliceService(o)) // the label may have changed
			}
			rec(obj)
			wake()
		},
		DeleteFunc: func(obj api.Object) {
			if sl, ok := obj.(*api.EndpointSlice); ok {
				t.service(sliceService(sl))
			}
			wake()
		},
	}
}
