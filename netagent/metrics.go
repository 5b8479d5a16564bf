package netagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The agent's two plain-HTTP listeners, as kube-proxy's:
//
//   - metrics (Config.MetricsListen, `skiff agent --metrics-bind-address`,
//     default DefaultMetricsListen): GET /metrics in the Prometheus text
//     format, from the agent's registry (Config.Registerer, or one of its
//     own with the Go and process collectors): the proxy's kube-proxy
//     metrics (kubeproxy_sync_proxy_rules_duration_seconds,
//     kubeproxy_network_programming_duration_seconds, ...); and GET
//     /proxyMode, the proxy mode as text.
//   - healthz (Config.HealthzListen, `--healthz-bind-address`, default
//     DefaultHealthzListen): GET /healthz and /livez answer the service
//     proxy's health: 200 while its last successful sync is recent, else
//     503, with {"lastUpdated","currentTime","nodeEligible"} JSON. Before
//     the proxy runs (or after it stopped) both answer 503 with an empty
//     lastUpdated.
//
// Both listen in the agent's own network namespace (like the node API;
// not Deps.NodeNetNS), without TLS or authentication, as kube-proxy's.
const (
	// DefaultMetricsListen is `skiff agent`'s --metrics-bind-address.
	DefaultMetricsListen = "127.0.0.1:10249"
	// DefaultHealthzListen is `skiff agent`'s --healthz-bind-address.
	DefaultHealthzListen = "0.0.0.0:10256"
)

// agentMetrics is the agent's registry and the proxy's health handler.
type agentMetrics struct {
	reg    prometheus.Registerer
	gather prometheus.Gatherer     // nil when reg is not a Gatherer
	health atomic.Pointer[healthz] // the running proxy's /healthz; nil: none
}

type healthz struct{ h http.Handler }

// newAgentMetrics uses reg, or a registry of the agent's own (Go and
// process collectors) when reg is nil. Collectors registered again (an
// agent restarted on the same registry) replace the old ones.
func newAgentMetrics(reg prometheus.Registerer) (*agentMetrics, error) {
	if reg == nil {
		r := prometheus.NewRegistry()
		if err := errors.Join(
			r.Register(collectors.NewGoCollector()),
			r.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})),
		); err != nil {
			return nil, fmt.Errorf("netagent: metrics: %w", err)
		}
		reg = r
	}
	m := &agentMetrics{reg: replacingRegisterer{reg}}
	m.gather, _ = reg.(prometheus.Gatherer)
	return m, nil
}

// setHealthz is ProxyParams.OnHealthz.
func (m *agentMetrics) setHealthz(h http.Handler) {
	if h == nil {
		m.health.Store(nil)
		return
	}
	m.health.Store(&healthz{h: h})
}

// serveHealthz answers /healthz and /livez.
func (m *agentMetrics) serveHealthz(w http.ResponseWriter, r *http.Request) {
	if h := m.health.Load(); h != nil {
		h.h.ServeHTTP(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(struct {
		LastUpdated  string `json:"lastUpdated"`
		CurrentTime  string `json:"currentTime"`
		NodeEligible bool   `json:"nodeEligible"`
	}{CurrentTime: time.Now().UTC().Format(time.RFC3339Nano), NodeEligible: true})
}

// replacingRegisterer registers a collector in place of an equal one
// already there (so that a restarted built-in agent can register its
// proxy's metrics in the server's registry again).
type replacingRegisterer struct{ prometheus.Registerer }

func (r replacingRegisterer) Register(c prometheus.Collector) error {
	err := r.Registerer.Register(c)
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		r.Registerer.Unregister(are.ExistingCollector)
		err = r.Registerer.Register(c)
	}
	return err
}

func (r replacingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			// The prometheus.Registerer contract; the agent calls Register.
			panic(err)
		}
	}
}

// listener is one of the agent's plain-HTTP listeners.
type listener struct {
	srv *http.Server
	ln  net.Listener
}

// serveHTTP listens on addr (in the agent's own netns) and serves h until
// ctx ends, on goroutines of wg.
func serveHTTP(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger, what, flag, addr string, h http.Handler) (*listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("netagent: %s: listen %s: %w (another agent on this machine? give each agent its own %s, or \"\" to turn it off)", what, addr, err, flag)
	}
	l := &listener{ln: ln, srv: &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}}
	serveUntilDone(ctx, wg, log, what, l.srv, ln)
	log.Info(what+" listening", "addr", ln.Addr().String())
	return l, nil
}

// serveUntilDone serves srv on ln on a goroutine of wg, and shuts it down
// (2s for the requests in flight) once ctx ends.
func serveUntilDone(ctx context.Context, wg *sync.WaitGroup, log *slog.Logger, what string, srv *http.Server, ln net.Listener) {
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(what+" stopped", "err", err)
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
	})
}

// startListeners starts the metrics and healthz listeners the config asks
// for.
func (a *Agent) startListeners(ctx context.Context, wg *sync.WaitGroup) error {
	if addr := a.cfg.MetricsListen; addr != "" {
		if a.metrics.gather == nil {
			return errors.New("netagent: metrics: Config.Registerer is no prometheus.Gatherer; it cannot be served")
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", promhttp.HandlerFor(a.metrics.gather, promhttp.HandlerOpts{
			ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn), ErrorHandling: promhttp.ContinueOnError,
		}))
		mux.HandleFunc("GET /proxyMode", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			_, _ = fmt.Fprint(w, a.proxyMode())
		})
		l, err := serveHTTP(ctx, wg, a.log, "metrics", "--metrics-bind-address", addr, mux)
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.metricsLn = l
		a.mu.Unlock()
	}
	if addr := a.cfg.HealthzListen; addr != "" {
		if a.deps.Proxy == nil {
			a.log.Info("proxy healthz off: the agent runs no service proxy")
			return nil
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /healthz", a.metrics.serveHealthz)
		mux.HandleFunc("GET /livez", a.metrics.serveHealthz)
		l, err := serveHTTP(ctx, wg, a.log, "proxy healthz", "--healthz-bind-address", addr, mux)
		if err != nil {
			return err
		}
		a.mu.Lock()
		a.healthzLn = l
		a.mu.Unlock()
	}
	return nil
}

func (a *Agent) proxyMode() string {
	if a.deps.Proxy == nil {
		return ""
	}
	if a.cfg.ProxyMode == "" {
		return "iptables"
	}
	return a.cfg.ProxyMode
}

// MetricsAddr is the metrics listener's address (host:port; "" when it
// is off or not started yet).
func (a *Agent) MetricsAddr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.metricsLn == nil {
		return ""
	}
	return a.metricsLn.ln.Addr().String()
}

// HealthzAddr is the proxy healthz listener's address (host:port; ""
// when it is off or not started yet).
func (a *Agent) HealthzAddr() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.healthzLn == nil {
		return ""
	}
	return a.healthzLn.ln.Addr().String()
}
