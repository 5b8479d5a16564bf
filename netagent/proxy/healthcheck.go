package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ListenFunc opens a TCP listener; the healthCheckNodePort servers use it
// (tests inject one that listens inside a test network namespace).
type ListenFunc func(ctx context.Context, network, address string) (net.Listener, error)

// proxyHealth answers the proxy's /healthz: healthy when the last
// successful sync is more recent than timeout.
type proxyHealth struct {
	timeout  time.Duration
	lastSync atomic.Int64 // unix nanoseconds; 0 before the first sync
}

func (h *proxyHealth) synced(t time.Time) { h.lastSync.Store(t.UnixNano()) }

func (h *proxyHealth) healthy(now time.Time) (bool, time.Time) {
	ns := h.lastSync.Load()
	if ns == 0 {
		return false, time.Time{}
	}
	last := time.Unix(0, ns)
	return now.Sub(last) <= h.timeout, last
}

func (h *proxyHealth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	ok, last := h.healthy(now)
	body := struct {
		LastUpdated  string `json:"lastUpdated"`
		CurrentTime  string `json:"currentTime"`
		NodeEligible bool   `json:"nodeEligible"`
	}{CurrentTime: now.UTC().Format(time.RFC3339Nano), NodeEligible: true}
	if !last.IsZero() {
		body.LastUpdated = last.UTC().Format(time.RFC3339Nano)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if ok {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}

// healthService is what one healthCheckNodePort server reports.
type healthService struct {
	Namespace, Name string
	LocalEndpoints  int
}

// healthServers runs one HTTP server per healthCheckNodePort, on every
// node address, answering as kube-proxy does: 200 when the Service has
// local endpoints (and the proxy is healthy), else 503, with the count in
// a JSON body and the X-Load-Balancing-Endpoint-Weight header.
type healthServers struct {
	listen ListenFunc
	addrs  []netip.Addr // empty: every address of the node (":port")
	proxy  *proxyHealth
	log    *slog.Logger

	mu      sync.Mutex // protects servers
	servers map[int32]*healthServer
}

type healthServer struct {
	svc   atomic.Pointer[healthService]
	srv   *http.Server
	lns   []net.Listener
	done  sync.WaitGroup
	proxy *proxyHealth
}

// sync starts servers for new ports, updates counts and stops servers for
// ports no longer wanted. A port that cannot be opened is logged and tried
// again on the next sync.
func (h *healthServers) sync(ctx context.Context, want map[int32]healthService) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for port, s := range h.servers {
		if _, ok := want[port]; !ok {
			s.stop()
			delete(h.servers, port)
		}
	}
	for port, svc := range want {
		if s, ok := h.servers[port]; ok {
			s.svc.Store(&svc)
			continue
		}
		s, err := h.start(ctx, port, svc)
		if err != nil {
			h.log.Error("proxy: health check node port", "port", port, "service", svc.Namespace+"/"+svc.Name, "err", err)
			continue
		}
		if h.servers == nil {
			h.servers = map[int32]*healthServer{}
		}
		h.servers[port] = s
	}
}

func (h *healthServers) start(ctx context.Context, port int32, svc healthService) (*healthServer, error) {
	s := &healthServer{proxy: h.proxy}
	s.svc.Store(&svc)
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 5 * time.Second}
	addrs := []string{":" + strconv.Itoa(int(port))}
	if len(h.addrs) > 0 {
		addrs = addrs[:0]
		for _, a := range h.addrs {
			addrs = append(addrs, netip.AddrPortFrom(a, uint16(port)).String())
		}
	}
	for _, a := range addrs {
		ln, err := h.listen(ctx, "tcp", a)
		if err != nil {
			for _, l := range s.lns {
				_ = l.Close()
			}
			return nil, fmt.Errorf("listen %s: %w", a, err)
		}
		s.lns = append(s.lns, ln)
	}
	for _, ln := range s.lns {
		s.done.Go(func() {
			if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				h.log.Error("proxy: health check server", "addr", ln.Addr().String(), "err", err)
			}
		})
	}
	return s, nil
}

func (s *healthServer) stop() {
	_ = s.srv.Close()
	s.done.Wait()
}

// closeAll stops every server.
func (h *healthServers) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for port, s := range h.servers {
		s.stop()
		delete(h.servers, port)
	}
}

// ports lists the ports served, for tests.
func (h *healthServers) ports() []int32 {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]int32, 0, len(h.servers))
	for p := range h.servers {
		out = append(out, p)
	}
	return out
}

func (s *healthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	svc := s.svc.Load()
	proxyOK, _ := s.proxy.healthy(time.Now())
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Load-Balancing-Endpoint-Weight", strconv.Itoa(svc.LocalEndpoints))
	if svc.LocalEndpoints > 0 && proxyOK {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintf(w, "{\n\t\"service\": {\n\t\t\"namespace\": %q,\n\t\t\"name\": %q\n\t},\n\t\"localEndpoints\": %d,\n\t\"serviceProxyHealthy\": %v\n}",
		svc.Namespace, svc.Name, svc.LocalEndpoints, proxyOK)
}
