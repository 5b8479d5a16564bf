package apiserver

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// instrument counts requests and observes their latency, labelled by the
// verb and resource the resource handler recorded.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec, r := ensureRecord(r)
		sw := wrapWriter(w)
		next.ServeHTTP(sw, r)
		verb := rec.verb
		if verb == "" {
			verb = strings.ToLower(r.Method)
		}
		m.requests.WithLabelValues(verb, rec.resource, strconv.Itoa(sw.status())).Inc()
		if verb != "watch" {
			m.duration.WithLabelValues(verb, rec.resource).Observe(time.Since(start).Seconds())
		}
	})
}
