// Package memstore is an in-memory store.Interface for tests of the API
// server: revisions, transactions with an overlay of their own writes,
// bounded history, watch from a revision (ErrCompacted when older than the
// history), progress notifications and slow-watcher eviction.
//
// # Invariants
//
//   - Every Update that writes at least one key commits exactly one revision,
//     and every key it wrote carries that revision as ModRevision.
//   - Watchers see events in revision order, only after commit; an event
//     older than the kept history is never silently skipped: the watch fails
//     with ErrCompacted instead.
//   - Values handed out are shared with the store: callers must not modify
//     them (the API server never does).
package memstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/skiff-dev/skiff/store"
)

// Options tune a Store.
type Options struct {
	// History is how many events are kept for watches from a past revision;
	// default 1000.
	History int
	// WatchBuffer is how many undelivered events a watcher may accumulate
	// before it is dropped with ErrWatcherTooSlow; default 10000.
	WatchBuffer int
	// ProgressInterval is how often a watcher that asked for progress gets an
	// EventProgress; default 1s.
	ProgressInterval time.Duration
}

// Store is an in-memory store.Interface.
type Store struct {
	opts Options

	writeMu sync.Mutex // serialises Update calls

	mu       sync.RWMutex // protects the fields below
	keys     []string     // sorted
	data     map[string]store.KeyValue
	rev      int64
	history  []store.Event // events with Revision > compacted, in order
	oldest   int64         // events with Revision <= oldest are gone
	watchers map[*watcher]struct{}
	closed   bool
}

var _ store.Interface = (*Store)(nil)

// New returns an empty store at revision 1 (as a fresh etcd is).
func New(opts Options) *Store {
	if opts.History <= 0 {
		opts.History = 1000
	}
	if opts.WatchBuffer <= 0 {
		opts.WatchBuffer = 10000
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = time.Second
	}
	return &Store{
		opts:     opts,
		data:     make(map[string]store.KeyValue),
		rev:      1,
		oldest:   1,
		watchers: make(map[*watcher]struct{}),
	}
}

// Get implements store.Interface.
func (s *Store) Get(ctx context.Context, key string) (store.KeyValue, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.KeyValue{}, store.ErrClosed
	}
	kv, ok := s.data[key]
	if !ok {
		return store.KeyValue{}, store.ErrNotFound
	}
	return kv, nil
}

// List implements store.Interface.
func (s *Store) List(ctx context.Context, prefix string, opts store.ListOptions) (store.ListResult, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.ListResult{}, store.ErrClosed
	}
	start := prefix
	if opts.After != "" && opts.After >= prefix {
		start = opts.After + "\x00"
	}
	i := sort.SearchStrings(s.keys, start)
	res := store.ListResult{Revision: s.rev}
	for ; i < len(s.keys); i++ {
		k := s.keys[i]
		if !strings.HasPrefix(k, prefix) {
			break
		}
		if opts.Limit > 0 && len(res.Items) == opts.Limit {
			res.More = true
			break
		}
		res.Items = append(res.Items, s.data[k])
	}
	return res, nil
}

// Revision implements store.Interface.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, store.ErrClosed
	}
	return s.rev, nil
}

// Close implements store.Interface.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for w := range s.watchers {
		w.fail(store.ErrClosed)
	}
	return nil
}

type write struct {
	value   []byte
	deleted bool
}

type txn struct {
	s      *Store
	rev    int64
	writes map[string]write
	order  []string
}

func (t *txn) Revision() int64 { return t.rev }

func (t *txn) Get(key string) (store.KeyValue, bool, error) {
	if w, ok := t.writes[key]; ok {
		if w.deleted {
			return store.KeyValue{}, false, nil
		}
		kv := store.KeyValue{Key: key, Value: w.value, ModRevision: t.rev, CreateRevision: t.rev}
		t.s.mu.RLock()
		if old, ok := t.s.data[key]; ok {
			kv.CreateRevision = old.CreateRevision
		}
		t.s.mu.RUnlock()
		return kv, true, nil
	}
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	kv, ok := t.s.data[key]
	return kv, ok, nil
}

func (t *txn) List(prefix string) ([]store.KeyValue, error) {
	t.s.mu.RLock()
	var out []store.KeyValue
	i := sort.SearchStrings(t.s.keys, prefix)
	for ; i < len(t.s.keys) && strings.HasPrefix(t.s.keys[i], prefix); i++ {
		k := t.s.keys[i]
		if _, over := t.writes[k]; over {
			continue
		}
		out = append(out, t.s.data[k])
	}
	t.s.mu.RUnlock()
	for k := range t.writes {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		kv, ok, _ := t.Get(k)
		if ok {
			out = append(out, kv)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (t *txn) Put(key string, value []byte) error {
	if key == "" {
		return fmt.Errorf("memstore: empty key")
	}
	if _, ok := t.writes[key]; !ok {
		t.order = append(t.order, key)
	}
	t.writes[key] = write{value: append([]byte(nil), value...)}
	return nil
}

func (t *txn) Delete(key string) error {
	if _, ok, _ := t.Get(key); !ok {
		return store.ErrNotFound
	}
	if _, ok := t.writes[key]; !ok {
		t.order = append(t.order, key)
	}
	t.writes[key] = write{deleted: true}
	return nil
}

// Update implements store.Interface.
func (s *Store) Update(ctx context.Context, fn func(store.Txn) error) (int64, error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.RLock()
	closed, rev := s.closed, s.rev
	s.mu.RUnlock()
	if closed {
		return 0, store.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := &txn{s: s, rev: rev + 1, writes: make(map[string]write)}
	if err := fn(t); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var events []store.Event
	for _, k := range t.order {
		w := t.writes[k]
		old, existed := s.data[k]
		var prev *store.KeyValue
		if existed {
			o := old
			prev = &o
		}
		if w.deleted {
			if !existed {
				continue
			}
			delete(s.data, k)
			i := sort.SearchStrings(s.keys, k)
			s.keys = append(s.keys[:i], s.keys[i+1:]...)
			last := old
			last.ModRevision = t.rev
			events = append(events, store.Event{Type: store.EventDelete, Revision: t.rev, KV: last, PrevKV: prev})
			continue
		}
		kv := store.KeyValue{Key: k, Value: w.value, CreateRevision: t.rev, ModRevision: t.rev}
		if existed {
			kv.CreateRevision = old.CreateRevision
		} else {
			i := sort.SearchStrings(s.keys, k)
			s.keys = append(s.keys, "")
			copy(s.keys[i+1:], s.keys[i:])
			s.keys[i] = k
		}
		s.data[k] = kv
		events = append(events, store.Event{Type: store.EventPut, Revision: t.rev, KV: kv, PrevKV: prev})
	}
	if len(events) == 0 {
		return s.rev, nil
	}
	s.rev = t.rev
	s.history = append(s.history, events...)
	if over := len(s.history) - s.opts.History; over > 0 {
		// Drop whole revisions only, so a kept revision is complete.
		cut := s.history[over-1].Revision
		n := over
		for n < len(s.history) && s.history[n].Revision == cut {
			n++
		}
		s.oldest = cut
		s.history = append(s.history[:0:0], s.history[n:]...)
	}
	for w := range s.watchers {
		for _, ev := range events {
			if strings.HasPrefix(ev.KV.Key, w.prefix) {
				w.enqueue(ev, s.opts.WatchBuffer)
			}
		}
	}
	return s.rev, nil
}

// Compact drops all history up to and including rev (for tests of
// ErrCompacted).
func (s *Store) Compact(rev int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := 0
	for i < len(s.history) && s.history[i].Revision <= rev {
		i++
	}
	s.history = append(s.history[:0:0], s.history[i:]...)
	if rev > s.oldest {
		s.oldest = rev
	}
}

// Watch implements store.Interface.
func (s *Store) Watch(ctx context.Context, prefix string, fromRev int64, opts store.WatchOptions) (<-chan store.Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, store.ErrClosed
	}
	if fromRev > s.rev {
		return nil, store.ErrFutureRevision
	}
	if fromRev > 0 && fromRev < s.oldest {
		return nil, store.ErrCompacted
	}
	w := &watcher{
		prefix: prefix,
		notify: make(chan struct{}, 1),
		out:    make(chan store.Event, 64),
	}
	if fromRev > 0 {
		for _, ev := range s.history {
			if ev.Revision > fromRev && strings.HasPrefix(ev.KV.Key, prefix) {
				w.queue = append(w.queue, ev)
			}
		}
		w.signal()
	}
	s.watchers[w] = struct{}{}
	go w.pump(ctx, s, opts)
	return w.out, nil
}

type watcher struct {
	prefix string
	notify chan struct{}
	out    chan store.Event

	mu     sync.Mutex
	queue  []store.Event
	failed error
}

func (w *watcher) signal() {
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *watcher) enqueue(ev store.Event, max int) {
	w.mu.Lock()
	if w.failed == nil {
		if len(w.queue) >= max {
			w.failed = store.ErrWatcherTooSlow
			w.queue = nil
		} else {
			w.queue = append(w.queue, ev)
		}
	}
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) fail(err error) {
	w.mu.Lock()
	if w.failed == nil {
		w.failed = err
	}
	w.mu.Unlock()
	w.signal()
}

func (w *watcher) pump(ctx context.Context, s *Store, opts store.WatchOptions) {
	defer func() {
		s.mu.Lock()
		delete(s.watchers, w)
		s.mu.Unlock()
		close(w.out)
	}()
	var tick <-chan time.Time
	if opts.ProgressNotify {
		t := time.NewTicker(s.opts.ProgressInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
			s.mu.RLock()
			w.mu.Lock()
			w.queue = append(w.queue, store.Event{Type: store.EventProgress, Revision: s.rev})
			w.mu.Unlock()
			s.mu.RUnlock()
		case <-w.notify:
		}
		for {
			w.mu.Lock()
			q := w.queue
			w.queue = nil
			failed := w.failed
			w.mu.Unlock()
			if len(q) == 0 {
				if failed != nil {
					select {
					case w.out <- store.Event{Type: store.EventError, Err: failed}:
					case <-ctx.Done():
					}
					return
				}
				break
			}
			for _, ev := range q {
				select {
				case w.out <- ev:
				case <-ctx.Done():
					return
				}
			}
		}
	}
}
