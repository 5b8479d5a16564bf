package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skiff-dev/skiff/api"
)

// EventHandler receives cache changes. Objects are shared with the cache:
// never mutate them (copy first, e.g. with api.DeepCopy or by building a new
// object).
type EventHandler interface {
	OnAdd(obj api.Object)
	OnUpdate(oldObj, newObj api.Object)
	OnDelete(obj api.Object) // the last known state
}

// HandlerFuncs adapts funcs to an EventHandler; nil funcs are skipped.
type HandlerFuncs struct {
	AddFunc    func(obj api.Object)
	UpdateFunc func(oldObj, newObj api.Object)
	DeleteFunc func(obj api.Object)
}

var _ EventHandler = HandlerFuncs{}

// OnAdd calls AddFunc when set.
func (h HandlerFuncs) OnAdd(obj api.Object) {
	if h.AddFunc != nil {
		h.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc when set.
func (h HandlerFuncs) OnUpdate(oldObj, newObj api.Object) {
	if h.UpdateFunc != nil {
		h.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc when set.
func (h HandlerFuncs) OnDelete(obj api.Object) {
	if h.DeleteFunc != nil {
		h.DeleteFunc(obj)
	}
}

// InformerOptions select what an Informer caches and how.
type InformerOptions struct {
	Namespace     string // "" = all namespaces
	LabelSelector string
	FieldSelector string
	// ResyncPeriod: 0 = never; else OnUpdate(obj, obj) for every cached
	// object each period.
	ResyncPeriod time.Duration
	// Logger receives the informer's logs (list and watch failures,
	// relists); nil discards them.
	Logger *slog.Logger
}

// NamespaceIndex is the built-in index of every Informer: metadata.namespace
// ("" for cluster-scoped objects).
const NamespaceIndex = "namespace"

// ListWatcher is what an Informer needs of the API: *Client, or an
// in-process or fake implementation with the same semantics.
type ListWatcher interface {
	List(ctx context.Context, info *api.ResourceInfo, ns string, opts ListOptions, into any) error
	Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts ListOptions) (*Watcher, error)
}

// Defaults of the informer's list and watch loop.
const (
	informerPageSize    = 500
	informerBackoffBase = 200 * time.Millisecond
	informerBackoffMax  = 30 * time.Second
	// minWatchTimeout is the lower bound of the timeoutSeconds asked for
	// each watch (the actual value is randomised up to twice that, as
	// client-go does, so informers do not re-watch in lockstep).
	minWatchTimeout = 5 * time.Minute
	// shortWatch: a watch that ends cleanly sooner than this without a
	// single event counts as a failure, so a server that keeps closing
	// streams at once is not hammered.
	shortWatch = time.Second
)

// ErrInformerRunning is returned by a second call of Run.
var ErrInformerRunning = errors.New("client: informer: Run called more than once")

// Informer keeps a local cache of one resource (optionally one namespace
// and a selector) in step with the API server and tells handlers about
// every change.
//
// # Invariants
//
//   - The cache is filled by one list (paged, PageSize 500) and then kept
//     current by one watch at a time, started from the list's
//     resourceVersion with bookmarks. A stream that ends (EOF, read error,
//     server timeout) is resumed from the last resourceVersion seen (event
//     or bookmark) without a relist; only 410 Gone (an ERROR event or a
//     refused watch) relists, and the relist is diffed against the cache:
//     OnAdd for new objects, OnUpdate for a changed resourceVersion,
//     OnDelete (with the last cached state) for objects that went away.
//   - Handlers are called from a single goroutine per informer, one call at
//     a time, in the order the changes were applied to the cache (the
//     server's order), and never while a cache lock is held, so a handler
//     may call Get, List and ByIndex. The cache already holds the change a
//     handler is told about (or a later one).
//   - A handler added after Run started first gets OnAdd for every object
//     cached at that moment and then every later change, never one it has
//     already seen as part of that snapshot.
//   - HasSynced becomes true once the first list has been delivered to the
//     handlers registered before it, and stays true.
//   - Indexes, including NamespaceIndex, are updated together with the
//     cache, under the same lock.
//   - Failures back off exponentially with jitter (200ms up to 30s). Run
//     returns nil when ctx ends, after its goroutines have exited and its
//     watch is closed; no handler runs after Run returns.
type Informer struct {
	lw   ListWatcher
	info *api.ResourceInfo
	opts InformerOptions
	log  *slog.Logger

	// Tunables, set by NewInformerFor; tests shorten them.
	pageSize    int64
	backoffBase time.Duration
	backoffMax  time.Duration

	running atomic.Bool
	synced  atomic.Bool

	// mu protects the cache, the indexes, the handler list and lastRV.
	// Notifications are queued while mu is held, so the queue's order is
	// the order of cache changes.
	mu       sync.RWMutex
	items    map[string]api.Object
	indexers map[string]func(api.Object) []string
	// indices: index name -> value -> set of cache keys.
	indices  map[string]map[string]map[string]struct{}
	handlers []EventHandler // copy on write: queued notifications keep their slice
	lastRV   string
	listed   bool // the first list is in the cache

	queue notificationQueue
}

// NewInformer returns an informer for info, listing and watching through c.
// Call Run to start it.
func NewInformer(c *Client, info *api.ResourceInfo, opts InformerOptions) *Informer {
	return NewInformerFor(c, info, opts)
}

// NewInformerFor is NewInformer over any ListWatcher.
func NewInformerFor(lw ListWatcher, info *api.ResourceInfo, opts InformerOptions) *Informer {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	i := &Informer{
		lw:          lw,
		info:        info,
		opts:        opts,
		log:         logger.With("component", "informer", "resource", info.GroupVersion()+"/"+info.Resource),
		pageSize:    informerPageSize,
		backoffBase: informerBackoffBase,
		backoffMax:  informerBackoffMax,
		items:       map[string]api.Object{},
		indexers:    map[string]func(api.Object) []string{},
		indices:     map[string]map[string]map[string]struct{}{},
	}
	i.queue.init()
	i.addIndexerLocked(NamespaceIndex, func(obj api.Object) []string {
		return []string{obj.GetObjectMeta().Namespace}
	})
	return i
}

// AddEventHandler registers h. It may be called before or after Run; a
// handler added once objects are cached first gets OnAdd for each of them.
func (i *Informer) AddEventHandler(h EventHandler) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if len(i.items) > 0 {
		only := []EventHandler{h}
		for _, obj := range i.items {
			i.queue.push(notification{kind: notifyAdd, newObj: obj, handlers: only})
		}
	}
	handlers := make([]EventHandler, 0, len(i.handlers)+1)
	handlers = append(handlers, i.handlers...)
	i.handlers = append(handlers, h)
}

// AddIndexer adds an index: f returns the index values of an object, and
// ByIndex(name, value) returns the cached objects with value among them.
// Meant to be called before Run; called later it indexes the objects
// already cached. A second indexer with the same name replaces the first.
func (i *Informer) AddIndexer(name string, f func(api.Object) []string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.addIndexerLocked(name, f)
}

func (i *Informer) addIndexerLocked(name string, f func(api.Object) []string) {
	i.indexers[name] = f
	idx := map[string]map[string]struct{}{}
	i.indices[name] = idx
	for key, obj := range i.items {
		for _, v := range f(obj) {
			addToIndex(idx, v, key)
		}
	}
}

func addToIndex(idx map[string]map[string]struct{}, value, key string) {
	set := idx[value]
	if set == nil {
		set = map[string]struct{}{}
		idx[value] = set
	}
	set[key] = struct{}{}
}

// HasSynced reports whether the first list has been delivered to the
// handlers.
func (i *Informer) HasSynced() bool { return i.synced.Load() }

// Get returns the cached object namespace/name (namespace is ignored for
// cluster-scoped resources).
func (i *Informer) Get(namespace, name string) (api.Object, bool) {
	i.mu.RLock()
	defer i.mu.RUnlock()
	obj, ok := i.items[i.key(namespace, name)]
	return obj, ok
}

// List returns every cached object, in no particular order.
func (i *Informer) List() []api.Object {
	i.mu.RLock()
	defer i.mu.RUnlock()
	out := make([]api.Object, 0, len(i.items))
	for _, obj := range i.items {
		out = append(out, obj)
	}
	return out
}

// ByIndex returns the cached objects whose index name holds value, in no
// particular order; nil for an unknown index.
func (i *Informer) ByIndex(name, value string) []api.Object {
	i.mu.RLock()
	defer i.mu.RUnlock()
	set := i.indices[name][value]
	if len(set) == 0 {
		return nil
	}
	out := make([]api.Object, 0, len(set))
	for key := range set {
		out = append(out, i.items[key])
	}
	return out
}

// LastSyncResourceVersion is the resourceVersion the cache reflects: that
// of the last list, watch event or bookmark applied ("" before the first
// list).
func (i *Informer) LastSyncResourceVersion() string {
	i.mu.RLock()
	defer i.mu.RUnlock()
	return i.lastRV
}

// WaitForCacheSync waits until every synced func reports true and returns
// true, or returns false when ctx ends first.
func WaitForCacheSync(ctx context.Context, synced ...func() bool) bool {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		all := true
		for _, f := range synced {
			if !f() {
				all = false
				break
			}
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}

// Run lists and watches until ctx ends, then returns nil. It may be called
// once; a second call returns ErrInformerRunning. An informer that can
// never list (a resource without New, or a namespace given for a
// cluster-scoped resource) returns an error wrapping ErrInvalidRequest at
// once instead of retrying forever.
func (i *Informer) Run(ctx context.Context) error {
	if err := i.check(); err != nil {
		return err
	}
	if !i.running.CompareAndSwap(false, true) {
		return ErrInformerRunning
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { i.dispatch(ctx) })
	if i.opts.ResyncPeriod > 0 {
		wg.Go(func() { i.resyncLoop(ctx) })
	}
	i.listAndWatch(ctx)
	cancel()
	wg.Wait()
	return nil
}

func (i *Informer) check() error {
	if i.info.New == nil {
		return fmt.Errorf("client: informer %s: %w: resource has no New", i.info.Resource, ErrInvalidRequest)
	}
	if i.opts.Namespace != "" && !i.info.Namespaced {
		return fmt.Errorf("client: informer %s: %w: cluster-scoped resource but namespace %q was given", i.info.Resource, ErrInvalidRequest, i.opts.Namespace)
	}
	if _, err := ResourcePath(i.info, i.opts.Namespace, ""); err != nil {
		return fmt.Errorf("client: informer: %w", err)
	}
	return nil
}

// key is the cache key of an object: namespace/name, or name for
// cluster-scoped resources.
func (i *Informer) key(namespace, name string) string {
	if !i.info.Namespaced {
		return name
	}
	return namespace + "/" + name
}

func (i *Informer) objectKey(obj api.Object) string {
	m := obj.GetObjectMeta()
	return i.key(m.Namespace, m.Name)
}

// storeLocked puts obj under key in the cache and its indexes, replacing
// old (nil when absent).
func (i *Informer) storeLocked(key string, old, obj api.Object) {
	if old != nil {
		i.unindexLocked(key, old)
	}
	i.items[key] = obj
	for name, f := range i.indexers {
		idx := i.indices[name]
		for _, v := range f(obj) {
			addToIndex(idx, v, key)
		}
	}
}

// deleteLocked removes key (holding old) from the cache and its indexes.
func (i *Informer) deleteLocked(key string, old api.Object) {
	i.unindexLocked(key, old)
	delete(i.items, key)
}

func (i *Informer) unindexLocked(key string, old api.Object) {
	for name, f := range i.indexers {
		idx := i.indices[name]
		for _, v := range f(old) {
			if set := idx[v]; set != nil {
				delete(set, key)
				if len(set) == 0 {
					delete(idx, v)
				}
			}
		}
	}
}

// notifyLocked queues one notification for the current handlers.
func (i *Informer) notifyLocked(kind notifyKind, oldObj, newObj api.Object) {
	if len(i.handlers) == 0 {
		return
	}
	i.queue.push(notification{kind: kind, oldObj: oldObj, newObj: newObj, handlers: i.handlers})
}

// upsert applies an added or modified object from the watch.
func (i *Informer) upsert(obj api.Object, rv string) {
	key := i.objectKey(obj)
	i.mu.Lock()
	defer i.mu.Unlock()
	old, ok := i.items[key]
	i.storeLocked(key, old, obj)
	if ok {
		i.notifyLocked(notifyUpdate, old, obj)
	} else {
		i.notifyLocked(notifyAdd, nil, obj)
	}
	i.setRVLocked(rv)
}

// remove applies a deleted object from the watch; one the cache does not
// hold (its handlers never saw it) is not announced.
func (i *Informer) remove(obj api.Object, rv string) {
	key := i.objectKey(obj)
	i.mu.Lock()
	defer i.mu.Unlock()
	if old, ok := i.items[key]; ok {
		i.deleteLocked(key, old)
		i.notifyLocked(notifyDelete, nil, obj)
	}
	i.setRVLocked(rv)
}

func (i *Informer) setRVLocked(rv string) {
	if rv != "" {
		i.lastRV = rv
	}
}

func (i *Informer) setRV(rv string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.setRVLocked(rv)
}

// replace makes the cache hold exactly objs (a complete list at rv) and
// announces the difference. The first replace is followed by the synced
// marker.
func (i *Informer) replace(objs []api.Object, rv string) {
	i.mu.Lock()
	defer i.mu.Unlock()
	seen := make(map[string]struct{}, len(objs))
	for _, obj := range objs {
		key := i.objectKey(obj)
		seen[key] = struct{}{}
		old, ok := i.items[key]
		switch {
		case !ok:
			i.storeLocked(key, nil, obj)
			i.notifyLocked(notifyAdd, nil, obj)
		case old.GetObjectMeta().ResourceVersion != obj.GetObjectMeta().ResourceVersion:
			i.storeLocked(key, old, obj)
			i.notifyLocked(notifyUpdate, old, obj)
		}
	}
	for key, old := range i.items {
		if _, ok := seen[key]; !ok {
			i.deleteLocked(key, old)
			i.notifyLocked(notifyDelete, nil, old)
		}
	}
	i.lastRV = rv
	if !i.listed {
		i.listed = true
		i.queue.push(notification{kind: notifySynced})
	}
}

// resync announces every cached object as OnUpdate(obj, obj).
func (i *Informer) resync() {
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.listed {
		return
	}
	for _, obj := range i.items {
		i.notifyLocked(notifyUpdate, obj, obj)
	}
}

func (i *Informer) resyncLoop(ctx context.Context) {
	t := time.NewTicker(i.opts.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			i.resync()
		}
	}
}

// dispatch calls the handlers for queued notifications, in order, until
// ctx ends.
func (i *Informer) dispatch(ctx context.Context) {
	for {
		batch, ok := i.queue.popAll(ctx)
		if !ok {
			return
		}
		for n, note := range batch {
			if ctx.Err() != nil {
				return
			}
			note.deliver(i)
			batch[n] = notification{} // release objects early
		}
	}
}

type notifyKind int

const (
	notifyAdd notifyKind = iota
	notifyUpdate
	notifyDelete
	notifySynced // marker: everything before it is the first list
)

type notification struct {
	kind           notifyKind
	oldObj, newObj api.Object
	handlers       []EventHandler
}

func (n notification) deliver(i *Informer) {
	switch n.kind {
	case notifySynced:
		i.synced.Store(true)
	case notifyAdd:
		for _, h := range n.handlers {
			h.OnAdd(n.newObj)
		}
	case notifyUpdate:
		for _, h := range n.handlers {
			h.OnUpdate(n.oldObj, n.newObj)
		}
	case notifyDelete:
		for _, h := range n.handlers {
			h.OnDelete(n.newObj)
		}
	}
}

// notificationQueue is an unbounded FIFO between the cache writer and the
// dispatcher, so a slow handler never stalls the watch.
type notificationQueue struct {
	mu     sync.Mutex
	items  []notification
	signal chan struct{} // capacity 1: "items is not empty"
}

func (q *notificationQueue) init() { q.signal = make(chan struct{}, 1) }

func (q *notificationQueue) push(n notification) {
	q.mu.Lock()
	q.items = append(q.items, n)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// popAll waits for notifications and takes all of them; false when ctx
// ends first.
func (q *notificationQueue) popAll(ctx context.Context) ([]notification, bool) {
	for {
		q.mu.Lock()
		items := q.items
		q.items = nil
		q.mu.Unlock()
		if len(items) > 0 {
			return items, true
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-q.signal:
		}
	}
}
