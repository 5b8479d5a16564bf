package netagent_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/api"
	"github.com/skiff-dev/skiff/netagent"
)

// TestProxyMetricsE2E runs the agent with the real service proxy in its
// test-created node namespace and scrapes the agent's listeners (on
// loopback, in the test's own namespace, as the agent's): /metrics carries
// kube-proxy's metric names and its sync count grows after a Service is
// created; /healthz and /livez answer 200 with the JSON of a recent sync.
func TestProxyMetricsE2E(t *testing.T) {
	requireNode(t)
	for _, mode := range []string{"iptables", "nftables"} {
		t.Run(mode, func(t *testing.T) {
			s := startServer(t)
			admin, err := s.Client()
			if err != nil {
				t.Fatal(err)
			}
			n := newNodeWith(t, s, "node-metrics-"+mode, func(n *node) {
				n.cfg.ProxyMode = mode
				n.cfg.MetricsListen, n.cfg.HealthzListen = "127.0.0.1:0", "127.0.0.1:0"
				n.proxy = netagent.RunProxy
			})
			maddr, haddr := n.agent.MetricsAddr(), n.agent.HealthzAddr()
			if maddr == "" || haddr == "" {
				t.Fatalf("listeners: metrics %q, healthz %q", maddr, haddr)
			}

			// Healthy after the first sync.
			eventually(t, 20*time.Second, "/healthz 200", func() (bool, error) {
				code, body := get(t, "http://"+haddr+"/healthz")
				return code == http.StatusOK, fmt.Errorf("%d %s", code, body)
			})
			for _, path := range []string{"/healthz", "/livez"} {
				code, body := get(t, "http://"+haddr+path)
				h := parseHealth(t, body)
				last, err := time.Parse(time.RFC3339Nano, h.LastUpdated)
				if code != http.StatusOK || err != nil || time.Since(last) > time.Minute || !h.NodeEligible {
					t.Errorf("%s: %d %s (lastUpdated: %v)", path, code, body, err)
				}
			}

			const count = "kubeproxy_sync_proxy_rules_duration_seconds_count"
			code, body := get(t, "http://"+maddr+"/metrics")
			if code != http.StatusOK {
				t.Fatalf("/metrics: %d %s", code, body)
			}
			for _, name := range []string{count, "kubeproxy_sync_full_proxy_rules_duration_seconds_count",
				"kubeproxy_network_programming_duration_seconds_count", "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
				"kubeproxy_sync_proxy_rules_failures_total", "go_goroutines", "process_cpu_seconds_total"} {
				if _, ok := sample(body, name); !ok {
					t.Errorf("/metrics lacks %s", name)
				}
			}
			before, _ := sample(body, count)
			if before < 1 {
				t.Errorf("%s = %v after the first sync", count, before)
			}
			if code, got := get(t, "http://"+maddr+"/proxyMode"); code != 200 || got != mode {
				t.Errorf("/proxyMode: %d %q, want %q", code, got, mode)
			}

			svc := &api.Service{ObjectMeta: api.ObjectMeta{Name: "scraped", Namespace: "default"},
				Spec: api.ServiceSpec{Selector: map[string]string{"app": "none"},
					Ports: []api.ServicePort{{Name: "http", Port: 80, TargetPort: api.FromInt32(8080), Protocol: api.ProtocolTCP}}}}
			if err := admin.Create(context.Background(), resServices, "default", svc); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, count+" grows after a Service change", func() (bool, error) {
				_, body := get(t, "http://"+maddr+"/metrics")
				after, ok := sample(body, count)
				return ok && after > before, fmt.Errorf("%s %v -> %v", count, before, after)
			})
		})
	}
}
