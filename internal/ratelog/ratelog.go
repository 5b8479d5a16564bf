// Package ratelog limits how often a log line repeats. Handler wraps a
// slog.Handler: records at or above a level (Warn by default) that carry
// the same message, from the same logger (the same With attributes), pass
// at most Burst times per Interval; the rest are counted, and when the
// interval ends one record with the message and a "suppressed" attribute
// says how many were dropped (a Handler over another passes those
// summaries on untouched). A full disk that fails every write, or a
// flood of TLS handshakes that fail, so logs a few lines a second instead
// of thousands.
//
// HTTPErrorLog is an http.Server ErrorLog that sends net/http's lines
// (accept errors, TLS handshake errors) to a slog.Logger at one level with
// the line's kind as the message, so that a Handler limits them by kind
// rather than by the client's address that each line holds.
package ratelog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// Options tune a Handler. The zero value is Warn, 5 records per message
// per second.
type Options struct {
	// Level is the lowest level limited; records below it pass
	// untouched. nil is Warn.
	Level slog.Leveler
	// Burst is how many records of one message pass per Interval (5).
	Burst int
	// Interval is the window a Burst is counted in (1 s).
	Interval time.Duration
	// MaxKeys bounds the messages tracked at once (1024); records of
	// messages beyond it share one window.
	MaxKeys int
	// now and afterFunc are the clock, for tests.
	now       func() time.Time
	afterFunc func(time.Duration, func()) stopper
}

type stopper interface{ Stop() bool }

// Handler is a rate-limiting slog.Handler; see the package doc.
type Handler struct {
	inner slog.Handler
	scope string // the With attributes and groups, as one key prefix
	st    *state
}

// state is shared by a Handler and those its WithAttrs/WithGroup return.
type state struct {
	opts Options
	mu   sync.Mutex
	win  map[string]*window
}

// window is one message's current interval.
type window struct {
	start      time.Time
	passed     int
	suppressed int
	level      slog.Level
	msg        string
	h          slog.Handler // the handler to report the suppressed count to
	timer      stopper
}

// New wraps inner.
func New(inner slog.Handler, opts Options) *Handler {
	if opts.Level == nil {
		opts.Level = slog.LevelWarn
	}
	if opts.Burst <= 0 {
		opts.Burst = 5
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 1024
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	if opts.afterFunc == nil {
		opts.afterFunc = func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }
	}
	return &Handler{inner: inner, st: &state{opts: opts, win: map[string]*window{}}}
}

// Enabled reports whether the wrapped handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle passes r on unless its message has already passed Burst times in
// this interval.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < h.st.opts.Level.Level() || isSummary(r) {
		// A summary of another Handler (one over this one) passes.
		return h.inner.Handle(ctx, r)
	}
	if !h.st.admit(h, r.Level, r.Message) {
		return nil
	}
	return h.inner.Handle(ctx, r)
}

// isSummary reports whether r is a Handler's count of suppressed records.
func isSummary(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == summaryKey
		return !found
	})
	return found
}

// summaryKey is the attribute of a summary record.
const summaryKey = "suppressed"

// admit counts a record of msg and reports whether it passes.
func (st *state) admit(h *Handler, level slog.Level, msg string) bool {
	key := h.scope + "\x00" + level.String() + "\x00" + msg
	now := st.opts.now()
	st.mu.Lock()
	defer st.mu.Unlock()
	w, ok := st.win[key]
	if !ok && len(st.win) >= st.opts.MaxKeys {
		st.expire(now)
		if len(st.win) >= st.opts.MaxKeys {
			key, msg = h.scope+"\x00overflow", "(several messages)"
			w, ok = st.win[key]
		}
	}
	if ok && w.timer == nil && now.Sub(w.start) >= st.opts.Interval {
		w.start, w.passed = now, 0 // a new interval
	}
	if !ok {
		w = &window{start: now, level: level, msg: msg, h: h.inner}
		st.win[key] = w
	}
	if w.passed < st.opts.Burst {
		w.passed++
		return true
	}
	w.suppressed++
	if w.timer == nil {
		// The window ends Interval after its first record: report what
		// was dropped then, and start afresh.
		d := st.opts.Interval - now.Sub(w.start)
		w.timer = st.opts.afterFunc(max(d, 0), func() { st.flush(key, w) })
	}
	return false
}

// flush ends w's window: it logs the suppressed count and forgets w.
func (st *state) flush(key string, w *window) {
	st.mu.Lock()
	if st.win[key] == w {
		delete(st.win, key)
	}
	n := w.suppressed
	st.mu.Unlock()
	if n == 0 {
		return
	}
	r := slog.NewRecord(st.opts.now(), w.level, w.msg, 0)
	r.AddAttrs(slog.Int(summaryKey, n))
	_ = w.h.Handle(context.Background(), r)
}

// expire forgets windows whose interval is over and that dropped nothing
// (those that dropped something end with their timer). st.mu is held.
func (st *state) expire(now time.Time) {
	for k, w := range st.win {
		if w.timer == nil && now.Sub(w.start) >= st.opts.Interval {
			delete(st.win, k)
		}
	}
}

// WithAttrs returns a Handler over inner.WithAttrs that shares the limits.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.scope)
	for _, a := range attrs {
		b.WriteString(a.String())
		b.WriteByte(' ')
	}
	return &Handler{inner: h.inner.WithAttrs(attrs), scope: b.String(), st: h.st}
}

// WithGroup returns a Handler over inner.WithGroup that shares the limits.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name), scope: h.scope + name + ".", st: h.st}
}
