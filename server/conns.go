package server

import (
	"cmp"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/internal/connlimit"
	"github.com/skiff-dev/skiff/internal/ratelog"
)

// defaultIdleTimeout is --idle-timeout's when the config leaves it 0.
const defaultIdleTimeout = 90 * time.Second

// headerTimeout bounds reading a request's headers (and the TLS
// handshake before the first one).
const headerTimeout = 10 * time.Second

// newHTTPServer is the HTTPS server around h: an accept gate over the
// listener (internal/connlimit), idle and read timeouts, and connection
// errors at Warn, rate-limited. Serve it on tls.NewListener(s.conns, ...).
func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	connLog := slog.New(ratelog.New(s.log.Handler(), ratelog.Options{})).With("component", "https")
	s.conns = connlimit.New(s.ln, connlimit.Options{
		PerAddr: s.cfg.MaxConnectionsPerAddress,
		Total:   cmp.Or(s.cfg.MaxConnections, connlimit.DefaultTotal(connlimit.FileLimit())),
		Logger:  connLog,
	})
	s.registerConnMetrics(s.reg)
	return &http.Server{
		Handler:           withLongRunning(h),
		ReadHeaderTimeout: headerTimeout,
		ReadTimeout:       s.cfg.RequestReadTimeout,
		IdleTimeout:       cmp.Or(s.cfg.IdleTimeout, defaultIdleTimeout),
		ConnState:         s.conns.ConnState,
		ErrorLog:          ratelog.HTTPErrorLog(connLog, slog.LevelWarn, "https: "),
	}
}

// registerConnMetrics exports the gate's figures on /metrics.
func (s *Server) registerConnMetrics(reg prometheus.Registerer) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skiff_https_connections", Help: "HTTPS connections open.",
		}, func() float64 { open, _ := s.conns.Stats(); return float64(open) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "skiff_https_connections_rejected_total", Help: "HTTPS connections closed at accept for --max-connections(-per-address).",
		}, func() float64 { return float64(s.conns.Rejected()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "skiff_https_connections_reaped_total", Help: "Idle HTTPS connections closed to admit a new one over a cap.",
		}, func() float64 { return float64(s.conns.Reaped()) }),
	)
}

// withLongRunning lifts --request-read-timeout off requests that stay open
// by design once their headers are in: watches, logs, exec, attach,
// port-forward, proxy (kube-apiserver's long-running requests) and the
// dashboard's event stream. net/http itself lifts the deadline once a
// request's body has been read (HTTP/1.1) or bounds only the body (HTTP/2),
// so this matters for a long-running request whose body is a stream, or
// whose connection is taken over (an upgrade).
func withLongRunning(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isLongRunning(r) {
			_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		}
		next.ServeHTTP(w, r)
	})
}

func isLongRunning(r *http.Request) bool {
	if w, err := strconv.ParseBool(r.URL.Query().Get("watch")); err == nil && w {
		return true
	}
	p := r.URL.Path
	if p == "/ui/watch" {
		return true
	}
	p = strings.TrimPrefix(p, "/ui/proxy")
	if !strings.HasPrefix(p, "/api/") && !strings.HasPrefix(p, "/apis/") {
		return false
	}
	// /api/v1 or /apis/G/V, then watch/..., or [namespaces NS] RESOURCE
	// NAME SUBRESOURCE.
	segs := strings.Split(strings.Trim(p, "/"), "/")
	rest := segs[min(len(segs), 2):]
	if segs[0] == "apis" {
		rest = segs[min(len(segs), 3):]
	}
	if len(rest) > 0 && rest[0] == "watch" {
		return true
	}
	if len(rest) > 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) != 3 {
		return false
	}
	switch rest[2] { // kube-apiserver's long-running subresources
	case "log", "exec", "attach", "portforward", "proxy":
		return true
	}
	return false
}
