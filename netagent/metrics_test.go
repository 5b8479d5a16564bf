package netagent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/netagent"
)

// get fetches a plain-HTTP URL on loopback: status and body.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// sample is the value of the sample line "name value" in a Prometheus
// text exposition (a metric without labels); ok false when absent.
func sample(text, name string) (float64, bool) {
	for line := range strings.Lines(text) {
		rest, found := strings.CutPrefix(strings.TrimSpace(line), name+" ")
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return v, err == nil
	}
	return 0, false
}

// healthBody is the proxy's /healthz answer.
type healthBody struct {
	LastUpdated  string `json:"lastUpdated"`
	CurrentTime  string `json:"currentTime"`
	NodeEligible bool   `json:"nodeEligible"`
}

func parseHealth(t *testing.T, body string) healthBody {
	t.Helper()
	var h healthBody
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("healthz body %q: %v", body, err)
	}
	if _, err := time.Parse(time.RFC3339Nano, h.CurrentTime); err != nil {
		t.Fatalf("healthz currentTime %q: %v", h.CurrentTime, err)
	}
	return h
}

// TestAgentMetricsListeners runs an agent over fakes with a proxy that
// registers a counter and hands over a healthz handler: /metrics shows the
// counter and the Go and process metrics, /healthz and /livez answer 503
// until the proxy runs, then the proxy's answer, and 503 again once the
// proxy stopped.
func TestAgentMetricsListeners(t *testing.T) {
	s := startServer(t)
	log := netagent.NewCallLog()
	var healthy atomic.Bool
	proxyHealth := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprint(w, `{"lastUpdated":"2026-01-01T00:00:00Z","currentTime":"2026-01-01T00:00:01Z","nodeEligible":true}`)
	})
	syncs := prometheus.NewCounter(prometheus.CounterOpts{Name: "test_proxy_syncs_total", Help: "syncs"})
	release := make(chan struct{})
	stopped := make(chan struct{})
	proxyFn := func(ctx context.Context, p netagent.ProxyParams) error {
		defer close(stopped)
		if p.Registerer == nil || p.OnHealthz == nil {
			return fmt.Errorf("proxy params: Registerer %v, OnHealthz set %v", p.Registerer, p.OnHealthz != nil)
		}
		if err := p.Registerer.Register(syncs); err != nil {
			return err
		}
		p.OnHealthz(proxyHealth)
		defer p.OnHealthz(nil)
		syncs.Add(3) // after OnHealthz: the test waits for it
		select {
		case <-ctx.Done():
		case <-release:
		}
		return nil
	}
	cfg := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeName: "node-m", NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		DataDir: t.TempDir(), Runtime: "fake", DNSListenAddr: "127.0.0.1:0", DNSUpstreams: []string{},
		PodRoutes:     netagent.PodRoutesNone, // no node netns: no routes in the machine's namespace
		MetricsListen: "127.0.0.1:0", HealthzListen: "127.0.0.1:0", ProxyMode: "nftables",
	}
	deps := netagent.Deps{Runtime: netagent.NewFakeRuntime(log), NewPodNetwork: netagent.NewFakeNetwork(log, nil), Proxy: proxyFn}
	ag := startAgent(t, s, cfg, deps)
	maddr, haddr := ag.MetricsAddr(), ag.HealthzAddr()
	if maddr == "" || haddr == "" {
		t.Fatalf("listeners: metrics %q, healthz %q", maddr, haddr)
	}

	eventually(t, 10*time.Second, "/metrics shows the proxy's counter", func() (bool, error) {
		code, body := get(t, "http://"+maddr+"/metrics")
		v, ok := sample(body, "test_proxy_syncs_total")
		return code == 200 && ok && v == 3, fmt.Errorf("status %d, test_proxy_syncs_total %v %v", code, v, ok)
	})
	_, body := get(t, "http://"+maddr+"/metrics")
	for _, name := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := sample(body, name); !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if code, mode := get(t, "http://"+maddr+"/proxyMode"); code != 200 || mode != "nftables" {
		t.Errorf("/proxyMode: %d %q", code, mode)
	}
	if code, _ := get(t, "http://"+maddr+"/healthz"); code != http.StatusNotFound {
		t.Errorf("/healthz on the metrics listener: %d, want 404", code)
	}

	for _, path := range []string{"/healthz", "/livez"} {
		if code, body := get(t, "http://"+haddr+path); code != http.StatusServiceUnavailable || parseHealth(t, body).LastUpdated == "" {
			t.Errorf("%s of an unhealthy proxy: %d %s", path, code, body)
		}
	}
	healthy.Store(true)
	for _, path := range []string{"/healthz", "/livez"} {
		if code, body := get(t, "http://"+haddr+path); code != http.StatusOK {
			t.Errorf("%s of a healthy proxy: %d %s", path, code, body)
		}
	}

	close(release)
	<-stopped
	code, hb := get(t, "http://"+haddr+"/healthz")
	if h := parseHealth(t, hb); code != http.StatusServiceUnavailable || h.LastUpdated != "" {
		t.Errorf("/healthz once the proxy stopped: %d %s", code, hb)
	}
	ag.stop(t)
}

// TestAgentMetricsOff: with both addresses empty the agent opens neither
// listener; an agent without a proxy opens no healthz listener.
func TestAgentMetricsOff(t *testing.T) {
	s := startServer(t)
	log := netagent.NewCallLog()
	base := netagent.Config{
		Server: s.URL(), CAPEM: s.Bundle().CACertPEM, Token: s.Bundle().NodeToken,
		NodeIPs: []netip.Addr{netip.MustParseAddr("192.0.2.10")},
		Runtime: "fake", DNSListenAddr: "127.0.0.1:0", DNSUpstreams: []string{},
		PodRoutes: netagent.PodRoutesNone, // no node netns: no routes in the machine's namespace
	}
	cfg := base
	cfg.NodeName, cfg.DataDir = "node-off", t.TempDir()
	ag := startAgent(t, s, cfg, netagent.Deps{Runtime: netagent.NewFakeRuntime(log), NewPodNetwork: netagent.NewFakeNetwork(log, nil)})
	if ag.MetricsAddr() != "" || ag.HealthzAddr() != "" {
		t.Errorf("listeners off: metrics %q, healthz %q", ag.MetricsAddr(), ag.HealthzAddr())
	}
	ag.stop(t)

	cfg = base
	cfg.NodeName, cfg.DataDir = "node-noproxy", t.TempDir()
	cfg.MetricsListen, cfg.HealthzListen = "127.0.0.1:0", "127.0.0.1:0"
	ag = startAgent(t, s, cfg, netagent.Deps{Runtime: netagent.NewFakeRuntime(log), NewPodNetwork: netagent.NewFakeNetwork(log, nil)})
	if ag.MetricsAddr() == "" || ag.HealthzAddr() != "" {
		t.Errorf("no proxy: metrics %q, healthz %q", ag.MetricsAddr(), ag.HealthzAddr())
	}
	if code, mode := get(t, "http://"+ag.MetricsAddr()+"/proxyMode"); code != 200 || mode != "" {
		t.Errorf("/proxyMode without a proxy: %d %q", code, mode)
	}
	ag.stop(t)
}
