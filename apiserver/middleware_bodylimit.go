package apiserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// limitBody rejects bodies over limit bytes with 413: at once when the
// Content-Length says so, else when reading passes the limit.
func limitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				closeAfterReply(w, r)
				writeError(w, NewRequestEntityTooLarge(limit))
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			next.ServeHTTP(w, r)
		})
	}
}

// bodyDeadline gives a request that carries a body timeout to send all of
// it: a read deadline on the request's connection (HTTP/1) or stream
// (HTTP/2), cleared once the body has been read to its end. A body that
// stalls then fails to read (readBody answers 408), and whatever the
// handler left unread is never waited for longer than that. Requests
// without a body (watches among them) get no deadline.
func bodyDeadline(timeout time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			rc := http.NewResponseController(w)
			// ErrNotSupported (a writer without a connection, as in
			// handler tests) leaves the body without a deadline.
			if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc, timeout: timeout}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody clears the read deadline when the body reaches its end, so
// that the connection's own reads after the body (net/http watches for
// the client going away) do not time out while the handler still works.
type deadlineBody struct {
	io.ReadCloser
	rc      *http.ResponseController
	timeout time.Duration
	done    bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if err == io.EOF {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = &bodyTimeoutError{timeout: b.timeout, err: err}
	}
	return n, err
}

// bodyTimeoutError is a body read that hit the body deadline.
type bodyTimeoutError struct {
	timeout time.Duration
	err     error
}

func (e *bodyTimeoutError) Error() string {
	return fmt.Sprintf("request body not received within %v: %v", e.timeout, e.err)
}

func (e *bodyTimeoutError) Unwrap() error { return e.err }

// closeAfterReply asks net/http to close an HTTP/1 connection after the
// response instead of first reading (up to 256 KiB of) a body the handler
// left unread, which a stalled client would make it wait for. HTTP/2
// resets the stream by itself and forbids the header.
func closeAfterReply(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}
