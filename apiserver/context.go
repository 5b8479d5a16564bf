package apiserver

import (
	"context"
	"net/http"
)

// Context keys are unexported pointer-typed values; use the accessors.
type ctxKey struct{ name string }

var (
	userKey   = &ctxKey{"user"}
	recordKey = &ctxKey{"record"}
)

// WithUser returns ctx carrying the authenticated user.
func WithUser(ctx context.Context, u User) context.Context {
	return context.WithValue(ctx, userKey, u)
}

// UserFrom returns the authenticated user of a request context.
func UserFrom(ctx context.Context) (User, bool) {
	u, ok := ctx.Value(userKey).(User)
	return u, ok
}

// record is filled in by the resource handler so that metrics and logs
// know the verb and resource of a request.
type record struct {
	verb, resource, user string
}

// ensureRecord returns the request's record, adding one when absent.
func ensureRecord(r *http.Request) (*record, *http.Request) {
	if rec := recordFrom(r.Context()); rec != nil {
		return rec, r
	}
	rec := &record{}
	return rec, r.WithContext(withRecord(r.Context(), rec))
}

func withRecord(ctx context.Context, rec *record) context.Context {
	return context.WithValue(ctx, recordKey, rec)
}

func recordFrom(ctx context.Context) *record {
	rec, _ := ctx.Value(recordKey).(*record)
	return rec
}

// statusWriter remembers the status code and passes Flush through (watch
// and logs stream through it).
type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int64
}

func wrapWriter(w http.ResponseWriter) *statusWriter {
	if sw, ok := w.(*statusWriter); ok {
		return sw
	}
	return &statusWriter{ResponseWriter: w}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush implements http.Flusher.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}
