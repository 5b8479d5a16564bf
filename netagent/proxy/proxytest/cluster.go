package proxytest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/client"
)

var (
	resources = api.Resources()
	// ServicesInfo and SlicesInfo are the resource table entries the
	// informers use.
	ServicesInfo = api.Lookup(resources, "v1", "services")
	SlicesInfo   = api.Lookup(resources, "discovery.k8s.io/v1", "endpointslices")
)

// Cluster is an in-memory API for one resource pair (Services and
// EndpointSlices) behind real client.Informers: objects set with Apply and
// Delete reach the informers as list items or watch events, with
// increasing resourceVersions.
type Cluster struct {
	Services *client.Informer
	Slices   *client.Informer

	svc   *source
	slice *source
}

// NewCluster returns a Cluster holding objs; Start runs its informers.
func NewCluster(objs ...api.Object) *Cluster {
	c := &Cluster{svc: newSource(), slice: newSource()}
	for _, o := range objs {
		c.src(o).put(o)
	}
	c.Services = client.NewInformerFor(c.svc, ServicesInfo, client.InformerOptions{})
	c.Slices = client.NewInformerFor(c.slice, SlicesInfo, client.InformerOptions{})
	return c
}

// HoldSliceList makes the EndpointSlice informer's first list wait until
// ReleaseSliceList, to test that nothing syncs on a partial cache.
func (c *Cluster) HoldSliceList() { c.slice.hold() }

// ReleaseSliceList lets the held list through.
func (c *Cluster) ReleaseSliceList() { c.slice.release() }

// Start runs both informers until the test ends.
func (c *Cluster) Start(t testing.TB) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Services.Run(ctx) })
	wg.Go(func() { _ = c.Slices.Run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}

// Apply creates or replaces obj (a *api.Service or *api.EndpointSlice).
func (c *Cluster) Apply(obj api.Object) { c.src(obj).put(obj) }

// Delete removes obj.
func (c *Cluster) Delete(obj api.Object) { c.src(obj).del(obj) }

func (c *Cluster) src(obj api.Object) *source {
	switch obj.(type) {
	case *api.Service:
		return c.svc
	case *api.EndpointSlice:
		return c.slice
	}
	panic(fmt.Sprintf("proxytest: unsupported object %T", obj))
}

// source is a ListWatcher over a map. Every change is kept in a history,
// so a watch from a resourceVersion replays what came after it.
type source struct {
	mu       sync.Mutex
	rv       int
	items    map[string][]byte
	history  []histEvent
	watchers map[*watcher]struct{}
	gate     chan struct{}
}

type histEvent struct {
	rv int
	ev client.Event
}

// watcher is one open watch: an unbounded queue, so that a change never
// waits for a slow reader.
type watcher struct {
	mu     sync.Mutex
	queue  []client.Event
	signal chan struct{}
}

func (w *watcher) push(ev client.Event) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.signal <- struct{}{}:
	default:
	}
}

func (w *watcher) pop() []client.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

func newSource() *source {
	return &source{items: map[string][]byte{}, watchers: map[*watcher]struct{}{}}
}

func (s *source) hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gate = make(chan struct{})
}

func (s *source) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
}

func (s *source) put(obj api.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rv++
	m := obj.GetObjectMeta()
	m.ResourceVersion = strconv.Itoa(s.rv)
	key := m.Namespace + "/" + m.Name
	_, existed := s.items[key]
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	s.items[key] = raw
	typ := client.EventAdded
	if existed {
		typ = client.EventModified
	}
	s.recordLocked(client.Event{Type: typ, Object: raw})
}

func (s *source) del(obj api.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := obj.GetObjectMeta()
	key := m.Namespace + "/" + m.Name
	if _, ok := s.items[key]; !ok {
		return
	}
	s.rv++
	delete(s.items, key)
	m.ResourceVersion = strconv.Itoa(s.rv)
	raw, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	s.recordLocked(client.Event{Type: client.EventDeleted, Object: raw})
}

func (s *source) recordLocked(ev client.Event) {
	s.history = append(s.history, histEvent{rv: s.rv, ev: ev})
	for w := range s.watchers {
		w.push(ev)
	}
}

func (s *source) List(ctx context.Context, _ *api.ResourceInfo, _ string, _ client.ListOptions, into any) error {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	l, ok := into.(*client.RawList)
	if !ok {
		return fmt.Errorf("proxytest: list into %T", into)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, raw := range s.items {
		l.Items = append(l.Items, raw)
	}
	l.Metadata.ResourceVersion = strconv.Itoa(s.rv)
	return nil
}

func (s *source) Watch(ctx context.Context, _ *api.ResourceInfo, _ string, opts client.ListOptions) (*client.Watcher, error) {
	from, err := strconv.Atoi(opts.ResourceVersion)
	if err != nil {
		from = 0
	}
	w := &watcher{signal: make(chan struct{}, 1)}
	s.mu.Lock()
	for _, h := range s.history {
		if h.rv > from {
			w.queue = append(w.queue, h.ev)
		}
	}
	s.watchers[w] = struct{}{}
	s.mu.Unlock()
	w.signal <- struct{}{}
	return client.NewWatcher(ctx, func(ctx context.Context, send func(client.Event) bool) error {
		defer func() {
			s.mu.Lock()
			delete(s.watchers, w)
			s.mu.Unlock()
		}()
		for {
			select {
			case <-w.signal:
				for _, ev := range w.pop() {
					if !send(ev) {
						return nil
					}
				}
			case <-ctx.Done():
				return nil
			}
		}
	}), nil
}
