package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// watcher is one Watch call.
type watcher struct {
	ctx      context.Context
	prefix   string
	fromRev  int64 // only events with a larger revision are sent
	progress bool
	ch       chan Event
	dropped  chan struct{} // closed when the publisher drops the watcher

	// Guarded by hub.mu.
	live      bool    // the publisher sends to ch directly
	pending   []Event // events queued by the publisher while not live
	isDropped bool
}

// matches reports whether ev is for this watcher.
func (w *watcher) matches(ev *Event) bool {
	return ev.Revision > w.fromRev && hasPrefix(ev.KV.Key, w.prefix)
}

// hasPrefix is strings.HasPrefix, named for the watch filters.
func hasPrefix(key, prefix string) bool { return strings.HasPrefix(key, prefix) }

// hub publishes committed events to watchers. It never blocks the commit
// loop: sends are non-blocking and a watcher that cannot keep up is dropped.
type hub struct {
	s             *Bolt
	bufSize       int
	progressEvery time.Duration
	done          chan struct{} // closed by close
	wg            sync.WaitGroup

	mu       sync.Mutex
	rev      int64 // last published revision
	watchers map[*watcher]struct{}
	closed   bool
}

func newHub(s *Bolt, rev int64, bufSize int, progressEvery time.Duration) *hub {
	h := &hub{
		s:             s,
		bufSize:       bufSize,
		progressEvery: progressEvery,
		done:          make(chan struct{}),
		rev:           rev,
		watchers:      make(map[*watcher]struct{}),
	}
	h.wg.Add(1)
	go h.progressLoop()
	return h
}

// publish hands the events of a committed batch (in revision order) to the
// watchers and advances the published revision to rev.
func (h *hub) publish(evs []Event, rev int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		for i := range evs {
			ev := &evs[i]
			if !w.matches(ev) {
				continue
			}
			if w.live {
				select {
				case w.ch <- *ev:
					continue
				default:
				}
			} else if len(w.pending) < h.bufSize {
				w.pending = append(w.pending, *ev)
				continue
			}
			h.dropLocked(w)
			break
		}
	}
	h.rev = rev
}

// dropLocked removes a watcher that fell behind; its goroutine then ends it
// with ErrWatcherTooSlow.
func (h *hub) dropLocked(w *watcher) {
	delete(h.watchers, w)
	w.isDropped = true
	w.pending = nil
	close(w.dropped)
	h.s.log.Warn("store: dropped a slow watcher", "prefix", w.prefix, "revision", h.rev)
}

// progressLoop sends EventProgress to the live watchers that asked for it.
func (h *hub) progressLoop() {
	defer h.wg.Done()
	t := time.NewTicker(h.progressEvery)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
			h.progress()
		}
	}
}

// progress sends one EventProgress at the published revision. It holds the
// lock that publish holds, so every matching event at or below that revision
// is already in the channel. A full channel skips this tick.
func (h *hub) progress() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.watchers {
		if !w.progress || !w.live || h.rev < w.fromRev {
			continue
		}
		select {
		case w.ch <- Event{Type: EventProgress, Revision: h.rev}:
		default:
		}
	}
}

// register adds w and returns the published revision S it starts at: its
// replay covers (fromRev, S] and the publisher queues everything after S.
// A watch from revision 0 starts at S.
func (h *hub) register(w *watcher) (int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return 0, ErrClosed
	}
	if w.fromRev == 0 {
		w.fromRev = h.rev
	}
	// Nothing to replay: live at once, so the channel buffer is the only
	// slack and no event waits for the watcher's goroutine to start.
	w.live = w.fromRev >= h.rev
	h.watchers[w] = struct{}{}
	h.wg.Add(1)
	return h.rev, nil
}

// close ends every watcher and waits for their goroutines.
func (h *hub) close() {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
	h.mu.Unlock()
	h.wg.Wait()
}

// send delivers ev to a watcher that is not live, blocking until it is taken
// or the watch ends.
func (h *hub) send(w *watcher, ev Event) error {
	select {
	case w.ch <- ev:
		return nil
	case <-w.ctx.Done():
		return errWatchCtxDone
	case <-h.done:
		return ErrClosed
	case <-w.dropped:
		return ErrWatcherTooSlow
	}
}

// Watch streams the events under prefix with a revision above fromRev:
// first from the log, then live, with no gap and no duplicate.
func (s *Bolt) Watch(ctx context.Context, prefix string, fromRev int64, opts WatchOptions) (<-chan Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fromRev < 0 {
		return nil, fmt.Errorf("store: watch from revision %d: negative revision", fromRev)
	}
	if s.closed() {
		return nil, ErrClosed
	}
	if cur := s.committed.Load(); fromRev > cur {
		return nil, fmt.Errorf("%w: %d is after %d", ErrFutureRevision, fromRev, cur)
	}
	if c := s.compactedRev.Load(); fromRev != 0 && fromRev < c {
		return nil, fmt.Errorf("%w: revision %d is older than the kept history (%d)", ErrCompacted, fromRev, c)
	}
	w := &watcher{
		ctx:      ctx,
		prefix:   prefix,
		fromRev:  fromRev,
		progress: opts.ProgressNotify,
		ch:       make(chan Event, s.hub.bufSize),
		dropped:  make(chan struct{}),
	}
	start, err := s.hub.register(w)
	if err != nil {
		return nil, err
	}
	go s.runWatcher(w, start)
	return w.ch, nil
}

// runWatcher replays history up to start, drains what the publisher queued
// meanwhile, turns the watcher live and ends it when its context ends, the
// store closes, or the publisher drops it.
func (s *Bolt) runWatcher(w *watcher, start int64) {
	h := s.hub
	defer h.wg.Done()
	err := s.replay(w, start)
	if err == nil {
		err = h.catchUp(w)
	}
	if err == nil {
		select {
		case <-w.ctx.Done():
			err = errWatchCtxDone
		case <-h.done:
			err = ErrClosed
		case <-w.dropped:
			err = ErrWatcherTooSlow
		}
	}
	h.end(w, err)
}

// replay sends the logged events in (w.fromRev, start], reading the log in
// chunks so that no read transaction stays open while the watcher is slow.
func (s *Bolt) replay(w *watcher, start int64) error {
	for next := w.fromRev + 1; next <= start; {
		evs, n, err := s.readLog(next, start, w.prefix)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := s.hub.send(w, ev); err != nil {
				return err
			}
		}
		next = n
		select {
		case <-w.ctx.Done():
			return errWatchCtxDone
		case <-s.hub.done:
			return ErrClosed
		default:
		}
	}
	return nil
}

// readLog reads up to replayChunk log entries from revision from (but not
// past to), keeping the events under prefix. It returns the next revision to
// read. ErrCompacted when from has left the log.
func (s *Bolt) readLog(from, to int64, prefix string) ([]Event, int64, error) {
	var evs []Event
	next := from
	err := s.db.View(func(tx *bolt.Tx) error {
		compacted, err := metaInt(tx.Bucket(bucketMeta), metaCompacted)
		if err != nil {
			return err
		}
		if from <= compacted {
			return fmt.Errorf("%w: revision %d is older than the kept history (%d)", ErrCompacted, from-1, compacted)
		}
		keep := func(key string) bool { return hasPrefix(key, prefix) }
		c := tx.Bucket(bucketLog).Cursor()
		for k, v := c.Seek(revKey(from)); next <= to && next < from+replayChunk; k, v = c.Next() {
			if k == nil {
				return fmt.Errorf("%w: log ends before revision %d", errCorrupt, next)
			}
			rev, err := parseRevKey(k)
			if err != nil {
				return err
			}
			if rev != next {
				return fmt.Errorf("%w: log has revision %d where %d belongs", errCorrupt, rev, next)
			}
			e, err := decodeEvents(rev, v, keep)
			if err != nil {
				return err
			}
			evs = append(evs, e...)
			next++
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, berrors.ErrDatabaseNotOpen) {
			return nil, 0, ErrClosed
		}
		if !errors.Is(err, ErrCompacted) {
			err = fmt.Errorf("store: watch replay: %w", err)
		}
		return nil, 0, err
	}
	return evs, next, nil
}

// catchUp sends what the publisher queued during the replay, until the queue
// is empty; then the watcher is live.
func (h *hub) catchUp(w *watcher) error {
	for {
		h.mu.Lock()
		if w.isDropped {
			h.mu.Unlock()
			return ErrWatcherTooSlow
		}
		if len(w.pending) == 0 {
			w.live = true
			h.mu.Unlock()
			return nil
		}
		p := w.pending
		w.pending = nil
		h.mu.Unlock()
		for _, ev := range p {
			if err := h.send(w, ev); err != nil {
				return err
			}
		}
	}
}

// end removes w and closes its channel, after a final EventError unless the
// watch's own context ended. Only the watcher's goroutine closes its channel,
// and only after removal, so the publisher never sends on a closed channel.
func (h *hub) end(w *watcher, reason error) {
	h.mu.Lock()
	delete(h.watchers, w)
	w.pending = nil
	h.mu.Unlock()
	final := Event{Type: EventError, Err: reason}
	switch {
	case errors.Is(reason, errWatchCtxDone):
	case errors.Is(reason, ErrClosed):
		select {
		case w.ch <- final:
		default:
		}
	default:
		select {
		case w.ch <- final:
		case <-w.ctx.Done():
		case <-h.done:
		}
	}
	close(w.ch)
}
