package apiserver

import (
	"net/http"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
)

// Defaults of Config.MaxRequestsInFlight and MaxMutatingRequestsInFlight,
// kube-apiserver's --max-requests-inflight and
// --max-mutating-requests-inflight.
const (
	DefaultMaxRequestsInFlight         = 400
	DefaultMaxMutatingRequestsInFlight = 200
)

// groupMasters is the group whose users are never refused for load, as in
// kube-apiserver: a super-user (or the server's own controllers) always
// gets an answer.
const groupMasters = "system:masters"

// inflight caps the requests being served at once, as kube-apiserver's
// max-in-flight filter does: reads (GET, HEAD) and writes (every other
// method) have one pool each, long-running requests (watches and pods/log)
// are not counted, and a request that finds its pool full gets 429
// TooManyRequests with Retry-After: 1 at once, unless its user is in
// system:masters. It runs after authentication, so a request without a
// valid token never takes a place, and before the body is read, so a
// stalled body holds its place at most the body timeout.
type inflight struct {
	reads, writes chan struct{} // nil: no limit
	gauge         *prometheus.GaugeVec
}

// newInflight makes the pools; a limit below 1 is no limit.
func newInflight(reads, writes int, gauge *prometheus.GaugeVec) *inflight {
	l := &inflight{gauge: gauge}
	if reads > 0 {
		l.reads = make(chan struct{}, reads)
	}
	if writes > 0 {
		l.writes = make(chan struct{}, writes)
	}
	return l
}

func (l *inflight) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLongRunning(r) {
			next.ServeHTTP(w, r)
			return
		}
		pool, kind := l.writes, "mutating"
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			pool, kind = l.reads, "readOnly"
		}
		if pool == nil {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case pool <- struct{}{}:
			g := l.gauge.WithLabelValues(kind)
			g.Inc()
			defer func() {
				<-pool
				g.Dec()
			}()
			next.ServeHTTP(w, r)
		default:
			if u, ok := UserFrom(r.Context()); ok && slices.Contains(u.Groups, groupMasters) {
				next.ServeHTTP(w, r)
				return
			}
			w.Header().Set("Retry-After", "1")
			closeAfterReply(w, r)
			writeError(w, NewTooManyRequests("Too many requests, please try again later.", 1))
		}
	})
}

// isLongRunning: the requests kube-apiserver leaves out of the in-flight
// count that Skiff serves, watches, pods/log (which may follow) and the
// upgrades of pods/exec, attach and portforward.
func isLongRunning(r *http.Request) bool {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if r.Method == http.MethodPost || r.Method == http.MethodGet {
		for _, s := range []string{"/exec", "/attach", "/portforward"} {
			if strings.HasSuffix(p, s) && strings.Contains(p, "/pods/") {
				return true
			}
		}
	}
	return r.Method == http.MethodGet && (isWatch(r) || strings.HasSuffix(p, "/log"))
}

// NewTooManyRequests (429) asks the client to retry after retryAfter
// seconds (also the Retry-After header the caller sets).
func NewTooManyRequests(msg string, retryAfter int32) *StatusError {
	return newStatusError(http.StatusTooManyRequests, api.StatusReasonTooManyRequests, msg,
		&api.StatusDetails{RetryAfterSeconds: retryAfter})
}
