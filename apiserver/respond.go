package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/skiff-dev/skiff/store"
)

// writeError sends err's Status with its code.
func writeError(w http.ResponseWriter, err *StatusError) {
	b, mErr := json.Marshal(err.status)
	if mErr != nil {
		b = []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"InternalError","code":500}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	w.WriteHeader(err.Code())
	_, _ = w.Write(b)
}

// writeErr sends any error: a *StatusError as is, a closed store as 503,
// an ended request context as 504, anything else as 500.
func writeErr(w http.ResponseWriter, err error) {
	var se *StatusError
	switch {
	case errors.As(err, &se):
	case errors.Is(err, store.ErrClosed):
		se = NewServiceUnavailable("the store is closed")
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		se = NewTimeout(fmt.Sprintf("the request did not complete: %v", err))
	default:
		se = NewInternal(err)
	}
	writeError(w, se)
}

// writeRaw sends an already-encoded JSON document.
func writeRaw(w http.ResponseWriter, code int, raw []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}

// writeJSON encodes v and sends it.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeRaw(w, code, b)
}

// addWarnings sets one Warning header per message, as Kubernetes does.
func addWarnings(w http.ResponseWriter, warnings []string) {
	for _, m := range warnings {
		w.Header().Add("Warning", "299 - "+strconv.Quote(m))
	}
}
