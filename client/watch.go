package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/skiff-dev/skiff/api"
)

// Watch event types.
const (
	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
	EventBookmark = "BOOKMARK"
	EventError    = "ERROR"
)

// Event is one watch event; Object is the object (a Status for ERROR).
type Event struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

// Err returns the *APIError held by an ERROR event, nil for other events.
func (e Event) Err() error {
	if e.Type != EventError {
		return nil
	}
	var st api.Status
	if err := json.Unmarshal(e.Object, &st); err != nil {
		return NewAPIError(http.StatusInternalServerError, api.StatusReasonInternalError, "undecodable watch error: %v", err)
	}
	if st.Reason == "" {
		st.Reason = reasonForCode[int(st.Code)]
	}
	return &APIError{Status: st}
}

// ErrWatchStopped is what Err returns after Stop or the end of ctx.
var ErrWatchStopped = errors.New("client: watch stopped")

// Watcher delivers the events of one watch. ResultChan is closed exactly
// once, when the producer ends (the stream ended or failed), ctx ends or
// Stop is called; Err then says why (nil for a stream the server ended
// cleanly).
type Watcher struct {
	result chan Event
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// NewWatcher runs produce in a goroutine that the Watcher owns. produce sends
// events with send, which blocks until the event is taken and returns false
// once the watcher is stopped (produce should then return). ResultChan is
// closed when produce returns; its error becomes Err. Fakes and in-process
// clients use it to hand out Watchers with the same lifecycle as Watch's.
func NewWatcher(ctx context.Context, produce func(ctx context.Context, send func(Event) bool) error) *Watcher {
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{result: make(chan Event), cancel: cancel, done: make(chan struct{})}
	send := func(ev Event) bool {
		select {
		case w.result <- ev:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(w.done)
		defer close(w.result)
		defer cancel()
		err := produce(ctx, send)
		if ctx.Err() != nil {
			err = ErrWatchStopped
		}
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}()
	return w
}

// ResultChan is the channel of events.
func (w *Watcher) ResultChan() <-chan Event { return w.result }

// Stop ends the watch and waits for its goroutine to exit. It is safe to
// call more than once and concurrently with reading ResultChan.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// Done is closed once the watch has ended and ResultChan is closed.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// Err is why the watch ended: nil for a stream the server closed cleanly,
// ErrWatchStopped after Stop or the end of ctx, else the read or decode
// error. It is nil while the watch runs.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Watch opens a watch on a collection (all namespaces when ns is "" for a
// namespaced resource) from opts.ResourceVersion. A refused watch (for
// example 410 Gone) returns its *APIError; once open, events arrive on the
// Watcher's channel.
func (c *Client) Watch(ctx context.Context, info *api.ResourceInfo, ns string, opts ListOptions) (*Watcher, error) {
	p, err := ResourcePath(info, ns, "")
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	resp, err := c.send(wctx, request{method: http.MethodGet, path: p, query: opts.query(true)})
	if err != nil {
		cancel()
		return nil, err
	}
	return NewWatcher(wctx, func(ctx context.Context, send func(Event) bool) error {
		// The Watcher cancels ctx when it stops or the producer returns;
		// that ends the request, which unblocks the read and releases wctx.
		context.AfterFunc(ctx, cancel)
		defer resp.Body.Close()
		return decodeStream(resp.Body, send, p)
	}), nil
}

// decodeStream reads newline-delimited JSON events from r until EOF.
func decodeStream(r io.Reader, send func(Event) bool, path string) error {
	dec := json.NewDecoder(r)
	for {
		var ev Event
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("client: watch %s: %w", path, err)
		}
		if ev.Type == "" {
			return fmt.Errorf("client: watch %s: event without a type", path)
		}
		if !send(ev) {
			return nil
		}
	}
}
