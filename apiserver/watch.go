package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/skiff-dev/skiff/store"
)

// defaultWatchTimeout bounds a watch without timeoutSeconds, as
// Kubernetes' --min-request-timeout does; clients re-watch.
const defaultWatchTimeout = 30 * time.Minute

// watchStream writes watch events as newline-delimited JSON.
type watchStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	buf     bytes.Buffer
	view    View // narrows the objects of ADDED, MODIFIED and DELETED
}

// object writes an event of a stored object, through the view.
func (ws *watchStream) object(typ string, raw []byte) error {
	if ws.view != nil {
		v, err := ws.view(raw)
		if err != nil {
			return AsStatusError(err)
		}
		raw = v
	}
	return ws.event(typ, raw)
}

func (ws *watchStream) event(typ string, object []byte) error {
	ws.buf.Reset()
	ws.buf.WriteString(`{"type":"`)
	ws.buf.WriteString(typ)
	ws.buf.WriteString(`","object":`)
	ws.buf.Write(object)
	ws.buf.WriteString("}\n")
	_, err := ws.w.Write(ws.buf.Bytes())
	return err
}

func (ws *watchStream) flush() {
	if ws.flusher != nil {
		ws.flusher.Flush()
	}
}

func (ws *watchStream) errorEvent(se *StatusError) {
	b, _ := json.Marshal(se.status)
	_ = ws.event("ERROR", b)
	ws.flush()
}

// watch serves ?watch=true: initial ADDED events when resourceVersion is
// unset or "0", then the store's events after that revision, filtered by
// the selectors with match transitions.
func (h *handler) watch() {
	q := h.req.URL.Query()
	f, err := h.s.newFilter(h.r, q)
	if err != nil {
		writeErr(h.w, err)
		return
	}
	timeout := defaultWatchTimeout
	if v := q.Get("timeoutSeconds"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(h.w, NewBadRequest(fmt.Sprintf("invalid timeoutSeconds %q", v)))
			return
		}
		if n > 0 {
			timeout = time.Duration(n) * time.Second
		}
	}
	bookmarks := q.Get("allowWatchBookmarks") == "true"
	// sendInitialEvents (client-go's watch-list, on by default since
	// v0.34): the current state as ADDED events, then a BOOKMARK marked
	// k8s.io/initial-events-end, then changes. resourceVersionMatch must
	// be NotOlderThan, which the current state always satisfies.
	initialEnd := q.Get("sendInitialEvents") == "true"
	if initialEnd && q.Get("resourceVersionMatch") != "NotOlderThan" {
		writeError(h.w, NewBadRequest("sendInitialEvents requires resourceVersionMatch=NotOlderThan"))
		return
	}
	var fromRev int64
	rvParam := q.Get("resourceVersion")
	if rvParam != "" && rvParam != "0" && !initialEnd {
		fromRev, err = strconv.ParseInt(rvParam, 10, 64)
		if err != nil || fromRev < 0 {
			writeError(h.w, NewBadRequest(fmt.Sprintf("invalid resource version %q", rvParam)))
			return
		}
	}
	select {
	case <-h.s.watchesClosed:
		writeError(h.w, NewServiceUnavailable("the server is shutting down"))
		return
	default:
	}
	ctx, cancel := context.WithTimeout(h.req.Context(), timeout)
	defer cancel()
	prefix := h.listPrefix()

	var initial []store.KeyValue
	if fromRev == 0 {
		res, err := h.s.store.List(ctx, prefix, store.ListOptions{})
		if err != nil {
			writeErr(h.w, err)
			return
		}
		initial, fromRev = res.Items, res.Revision
	}
	ch, werr := h.s.store.Watch(ctx, prefix, fromRev, store.WatchOptions{ProgressNotify: bookmarks})

	h.s.metrics.watchers.Inc()
	defer h.s.metrics.watchers.Dec()
	hdr := h.w.Header()
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "no-cache, private")
	h.w.WriteHeader(http.StatusOK)
	ws := &watchStream{w: h.w, view: h.view}
	ws.flusher, _ = h.w.(http.Flusher)

	if werr != nil {
		ws.errorEvent(h.s.watchError(ctx, werr, fromRev))
		return
	}
	for _, kv := range initial {
		ok, err := f.matches(kv.Value)
		if err != nil {
			ws.errorEvent(AsStatusError(err))
			return
		}
		if ok {
			if err := ws.object("ADDED", kv.Value); err != nil {
				if se, isStatus := err.(*StatusError); isStatus {
					ws.errorEvent(se)
				}
				return
			}
		}
	}
	if initialEnd {
		if ws.event("BOOKMARK", h.bookmarkInitialEnd(fromRev)) != nil {
			return
		}
	}
	ws.flush()

	for {
		select {
		case <-ctx.Done():
			return
		case <-h.s.watchesClosed:
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if err := h.sendEvent(ws, f, ev, fromRev); err != nil {
				if se, isStatus := err.(*StatusError); isStatus {
					ws.errorEvent(se)
				}
				return
			}
			if len(ch) == 0 {
				ws.flush()
			}
		}
	}
}

// watchError turns a store watch failure into the Status of an ERROR event.
func (s *Server) watchError(ctx context.Context, err error, fromRev int64) *StatusError {
	switch {
	case errors.Is(err, store.ErrCompacted):
		cur, _ := s.store.Revision(ctx)
		return NewGone(fmt.Sprintf("too old resource version: %d (%d)", fromRev, cur))
	case errors.Is(err, store.ErrFutureRevision):
		cur, _ := s.store.Revision(ctx)
		return NewTimeout(fmt.Sprintf("Too large resource version: %d, current: %d", fromRev, cur))
	}
	return AsStatusError(err)
}

var errStopWatch = errors.New("apiserver: watch ended")

// sendEvent writes one store event, if the selectors let it through.
func (h *handler) sendEvent(ws *watchStream, f *filter, ev store.Event, fromRev int64) error {
	switch ev.Type {
	case store.EventProgress:
		return ws.event("BOOKMARK", h.bookmark(ev.Revision))
	case store.EventError:
		if errors.Is(ev.Err, store.ErrCompacted) {
			return h.s.watchError(context.Background(), ev.Err, fromRev)
		}
		return errStopWatch // too slow, closed: the client re-watches
	case store.EventPut:
		cur, err := f.matches(ev.KV.Value)
		if err != nil {
			return AsStatusError(err)
		}
		prev := false
		if ev.PrevKV != nil {
			if prev, err = f.matches(ev.PrevKV.Value); err != nil {
				return AsStatusError(err)
			}
		}
		switch {
		case cur && ev.PrevKV == nil, cur && !prev:
			return ws.object("ADDED", ev.KV.Value)
		case cur:
			return ws.object("MODIFIED", ev.KV.Value)
		case prev:
			raw, err := withResourceVersion(ev.PrevKV.Value, ev.Revision)
			if err != nil {
				return AsStatusError(err)
			}
			return ws.object("DELETED", raw)
		}
	case store.EventDelete:
		ok, err := f.matches(ev.KV.Value)
		if err != nil {
			return AsStatusError(err)
		}
		if ok {
			raw, err := withResourceVersion(ev.KV.Value, ev.Revision)
			if err != nil {
				return AsStatusError(err)
			}
			return ws.object("DELETED", raw)
		}
	}
	return nil
}

func (h *handler) bookmark(rev int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"kind":       h.r.info.Kind,
		"apiVersion": h.r.info.GroupVersion(),
		"metadata":   map[string]string{"resourceVersion": strconv.FormatInt(rev, 10)},
	})
	return b
}

// bookmarkInitialEnd is the BOOKMARK that ends a watch's initial events.
func (h *handler) bookmarkInitialEnd(rev int64) []byte {
	b, _ := json.Marshal(map[string]any{
		"kind":       h.r.info.Kind,
		"apiVersion": h.r.info.GroupVersion(),
		"metadata": map[string]any{
			"resourceVersion": strconv.FormatInt(rev, 10),
			"annotations":     map[string]string{"k8s.io/initial-events-end": "true"},
		},
	})
	return b
}

// withResourceVersion re-encodes a stored object with another
// metadata.resourceVersion (DELETED events carry the delete's revision).
func withResourceVersion(raw []byte, rev int64) ([]byte, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	var meta map[string]json.RawMessage
	if m, ok := top["metadata"]; ok {
		if err := json.Unmarshal(m, &meta); err != nil {
			return nil, err
		}
	}
	if meta == nil {
		meta = make(map[string]json.RawMessage)
	}
	meta["resourceVersion"] = json.RawMessage(strconv.Quote(strconv.FormatInt(rev, 10)))
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	top["metadata"] = mb
	return json.Marshal(top)
}
