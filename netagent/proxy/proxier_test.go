package proxy_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/proxytest"
)

var (
	webHTTP = proxy.ServicePortName{Namespace: "ns", Name: "web", Port: "http", Protocol: "TCP"}
	dnsUDP  = proxy.ServicePortName{Namespace: "ns", Name: "dns", Port: "dns", Protocol: "UDP"}
)

func webObjects(n int) (*api.Service, *api.EndpointSlice) {
	svc := proxytest.Service("ns", "web", "10.96.0.10", proxytest.TCP("http", 80))
	var eps []proxytest.EP
	for i := range n {
		eps = append(eps, proxytest.EP{IP: "10.244.0." + strconv.Itoa(2+i), Node: "node-a"})
	}
	sl := proxytest.Slice("ns", "web", "web-abc", []api.EndpointPort{proxytest.SlicePort("http", 8080, api.ProtocolTCP)}, eps...)
	return svc, sl
}

type env struct {
	cluster *proxytest.Cluster
	rec     *proxytest.Recorder
	proxier *proxy.Proxier
	reg     *prometheus.Registry
	ct      *fakeConntrack
}

func start(t *testing.T, cfg proxy.Config, rec *proxytest.Recorder, hold bool, objs ...api.Object) *env {
	t.Helper()
	c := proxytest.NewCluster(objs...)
	if hold {
		c.HoldSliceList()
	}
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	if cfg.NodeName == "" {
		cfg.NodeName = "node-a"
	}
	ct := &fakeConntrack{}
	if cfg.Conntrack == nil {
		cfg.Conntrack = ct
	}
	p, err := proxy.New(cfg, rec, c.Services, c.Slices, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	c.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return &env{cluster: c, rec: rec, proxier: p, reg: reg, ct: ct}
}

func TestProxierNeverSyncsOnPartialCaches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, sl := webObjects(3)
		e := start(t, proxy.Config{}, &proxytest.Recorder{}, true, svc, sl)
		time.Sleep(time.Minute) // the Service cache is long synced; slices are held
		synctest.Wait()
		if n := len(e.rec.Calls()); n != 0 {
			t.Fatalf("%d syncs before the EndpointSlice cache synced", n)
		}
		rec := httptest.NewRecorder()
		e.proxier.Healthz().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("healthz before the first sync = %d, want 503", rec.Code)
		}
		e.cluster.ReleaseSliceList()
		c := e.rec.WaitFor(t, 0, func(proxytest.Call) bool { return true })
		if !c.Full || len(c.Endpoints[webHTTP]) != 3 {
			t.Fatalf("first sync: full=%v endpoints=%v, want a full sync with 3 endpoints", c.Full, c.Endpoints[webHTTP])
		}
		// The recorder sees the call while the sync runs; the proxier
		// marks its health once the sync returns.
		synctest.Wait()
		rec = httptest.NewRecorder()
		e.proxier.Healthz().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if rec.Code != http.StatusOK {
			t.Errorf("healthz after the first sync = %d, want 200", rec.Code)
		}
	})
}

func TestProxierPartialSyncs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, sl := webObjects(3)
		dns := proxytest.Service("ns", "dns", "10.96.0.53", proxytest.UDP("dns", 53))
		e := start(t, proxy.Config{}, &proxytest.Recorder{}, false, svc, sl, dns)
		first := e.rec.WaitFor(t, 0, func(c proxytest.Call) bool { return true })
		if !first.Full || len(first.Services) != 2 {
			t.Fatalf("first sync: %+v", first)
		}

		// Scale 3 -> 5: one partial sync of the one port.
		_, sl5 := webObjects(5)
		e.cluster.Apply(sl5)
		c := e.rec.WaitFor(t, 1, func(proxytest.Call) bool { return true })
		if c.Full || !slices.Equal(c.Changed, []proxy.ServicePortName{webHTTP}) || len(c.Endpoints[webHTTP]) != 5 {
			t.Fatalf("after scaling: full=%v changed=%v endpoints=%d", c.Full, c.Changed, len(c.Endpoints[webHTTP]))
		}
		if c.Services[dnsUDP] != first.Services[dnsUDP] {
			t.Error("an unchanged port got a new *ServicePort")
		}

		// A change that alters nothing the proxy programs: no sync.
		n := len(e.rec.Calls())
		svc2 := *svc
		svc2.Labels = map[string]string{"team": "a"}
		e.cluster.Apply(&svc2)
		time.Sleep(time.Second)
		synctest.Wait()
		if got := len(e.rec.Calls()); got != n {
			t.Errorf("%d syncs after a no-op change", got-n)
		}

		// Deleting a Service: partial sync naming its port.
		e.cluster.Delete(dns)
		c = e.rec.WaitFor(t, n, func(proxytest.Call) bool { return true })
		if c.Full || !slices.Equal(c.Changed, []proxy.ServicePortName{dnsUDP}) || c.Services[dnsUDP] != nil {
			t.Fatalf("after delete: full=%v changed=%v", c.Full, c.Changed)
		}

		// The periodic sync is full.
		n = len(e.rec.Calls())
		time.Sleep(proxy.DefaultSyncPeriod)
		c = e.rec.WaitFor(t, n, func(proxytest.Call) bool { return true })
		if !c.Full {
			t.Error("the periodic sync is not full")
		}
	})
}

func TestProxierFailureForcesFullSync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, sl := webObjects(3)
		var mu sync.Mutex
		failing := false
		rec := &proxytest.Recorder{Fail: func(int) error {
			mu.Lock()
			defer mu.Unlock()
			if failing {
				failing = false
				return errors.New("iptables-restore: boom")
			}
			return nil
		}}
		e := start(t, proxy.Config{}, rec, false, svc, sl)
		e.rec.WaitFor(t, 0, func(proxytest.Call) bool { return true })
		mu.Lock()
		failing = true
		mu.Unlock()
		_, sl2 := webObjects(2)
		e.cluster.Apply(sl2)
		c := e.rec.WaitFor(t, 1, func(proxytest.Call) bool { return true })
		calls := e.rec.Calls()
		if calls[1].Err == nil || calls[1].Full {
			t.Fatalf("call 1 = %+v, want a failed partial sync", calls[1])
		}
		if !c.Full || len(c.Endpoints[webHTTP]) != 2 {
			t.Errorf("retry: full=%v endpoints=%d, want a full sync with 2 endpoints", c.Full, len(c.Endpoints[webHTTP]))
		}
		if got := counter(t, e.reg, "kubeproxy_sync_proxy_rules_failures_total"); got != 1 {
			t.Errorf("failures metric = %v", got)
		}
	})
}

func TestProxierMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		svc, sl := webObjects(1)
		e := start(t, proxy.Config{}, &proxytest.Recorder{}, false, svc, sl)
		e.rec.WaitFor(t, 0, func(proxytest.Call) bool { return true })
		time.Sleep(3 * time.Second)
		_, sl2 := webObjects(2)
		sl2.Annotations = map[string]string{proxy.AnnotationTriggerTime: time.Now().Add(-2 * time.Second).Format(time.RFC3339Nano)}
		e.cluster.Apply(sl2)
		e.rec.WaitFor(t, 1, func(proxytest.Call) bool { return true })
		synctest.Wait()
		h := histogram(t, e.reg, "kubeproxy_network_programming_duration_seconds")
		if h.GetSampleCount() != 1 || h.GetSampleSum() < 2 || h.GetSampleSum() > 3 {
			t.Errorf("network programming: count %d sum %v, want one sample of about 2s", h.GetSampleCount(), h.GetSampleSum())
		}
		if h := histogram(t, e.reg, "kubeproxy_sync_proxy_rules_duration_seconds"); h.GetSampleCount() != 2 {
			t.Errorf("sync duration samples = %d, want 2", h.GetSampleCount())
		}
		if got := gauge(t, e.reg, "kubeproxy_sync_proxy_rules_last_timestamp_seconds"); got < float64(time.Now().Unix()-1) {
			t.Errorf("last sync timestamp = %v", got)
		}
	})
}

func TestProxierConntrackCleanup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dns := proxytest.Service("ns", "dns", "10.96.0.53", proxytest.UDP("dns", 53))
		port := []api.EndpointPort{proxytest.SlicePort("dns", 5353, api.ProtocolUDP)}
		sl := proxytest.Slice("ns", "dns", "dns-1", port, proxytest.EP{IP: "10.244.0.2", Node: "node-a"})
		e := start(t, proxy.Config{}, &proxytest.Recorder{}, false, dns, sl)
		e.rec.WaitFor(t, 0, func(proxytest.Call) bool { return true })
		synctest.Wait()
		want := []proxy.ConntrackFilter{{OrigDst: netip.MustParseAddr("10.96.0.53"), OrigDstPort: 53, NotNATed: true}}
		if got := e.ct.take(); !slices.Equal(got, want) {
			t.Errorf("after the first endpoint: %v, want %v", got, want)
		}
		sl2 := proxytest.Slice("ns", "dns", "dns-1", port, proxytest.EP{IP: "10.244.0.3", Node: "node-a"})
		e.cluster.Apply(sl2)
		e.rec.WaitFor(t, 1, func(proxytest.Call) bool { return true })
		synctest.Wait()
		want = []proxy.ConntrackFilter{{OrigDst: netip.MustParseAddr("10.96.0.53"), OrigDstPort: 53, ReplySrc: netip.MustParseAddr("10.244.0.2")}}
		if got := e.ct.take(); !slices.Equal(got, want) {
			t.Errorf("after the endpoint moved: %v, want %v", got, want)
		}
	})
}

// The health check servers use real sockets, so this test runs in real
// time on 127.0.0.1.
func TestProxierHealthCheckNodePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hcPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	svc, sl := webObjects(0)
	svc.Spec.Type = api.ServiceTypeLoadBalancer
	svc.Spec.Ports[0].NodePort = 30080
	svc.Spec.ExternalTrafficPolicy = api.ServiceTrafficPolicyLocal
	svc.Spec.HealthCheckNodePort = int32(hcPort)
	sl = proxytest.Slice("ns", "web", "web-abc", sl.Ports,
		proxytest.EP{IP: "10.244.0.2", Node: "node-a"}, proxytest.EP{IP: "10.244.1.2", Node: "node-b"})
	e := start(t, proxy.Config{HealthCheckAddrs: []netip.Addr{netip.MustParseAddr("127.0.0.1")}}, &proxytest.Recorder{}, false, svc, sl)
	e.rec.WaitFor(t, 0, func(proxytest.Call) bool { return true })
	url := "http://127.0.0.1:" + strconv.Itoa(hcPort) + "/"
	waitStatus(t, url, 200)
	sl2 := proxytest.Slice("ns", "web", "web-abc", sl.Ports, proxytest.EP{IP: "10.244.1.2", Node: "node-b"})
	e.cluster.Apply(sl2)
	waitStatus(t, url, 503)
}

func waitStatus(t *testing.T, url string, code int) {
	t.Helper()
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := c.Get(url)
		got := 0
		if err == nil {
			got = resp.StatusCode
			resp.Body.Close()
		}
		if got == code {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d %v, want %d", url, got, err, code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type fakeConntrack struct {
	mu      sync.Mutex
	filters []proxy.ConntrackFilter
}

func (f *fakeConntrack) DeleteUDP(_ context.Context, filters []proxy.ConntrackFilter) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.filters = append(f.filters, filters...)
	return len(filters), nil
}

func (f *fakeConntrack) take() []proxy.ConntrackFilter {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.filters
	f.filters = nil
	return out
}
