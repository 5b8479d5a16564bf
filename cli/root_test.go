package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/internal/config"
)

func TestServerFlags(t *testing.T) {
	var got config.Server
	called := false
	root := NewRoot(Runners{Server: func(_ context.Context, c config.Server) error {
		called, got = true, c
		return nil
	}}, &bytes.Buffer{})
	root.SetArgs([]string{"server", "--data-dir", "/tmp/x", "--listen", "127.0.0.1:7443",
		"--service-cidr", "10.0.0.0/24", "--cluster-cidr", "10.1.0.0/16", "--node-port-range", "31000-31010",
		"--cluster-domain", "example.internal", "--tls-san", "a.example", "--tls-san", "192.0.2.7",
		"--disable-agent", "--dns-listen", "127.0.0.1:1053", "--dns-upstream", "127.0.0.1:53", "--dns-ttl", "30s",
		"--node-ip", "192.0.2.1", "--runtime", "process", "--proxy-mode", "nftables",
		"--max-requests-inflight", "40", "--max-mutating-requests-inflight", "0", "--request-body-timeout", "5s"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("server runner not called")
	}
	want := config.Server{DataDir: "/tmp/x", Listen: "127.0.0.1:7443", ServiceCIDR: "10.0.0.0/24",
		ClusterCIDR: "10.1.0.0/16", NodePortRange: "31000-31010", ClusterDomain: "example.internal",
		TLSSANs: []string{"a.example", "192.0.2.7"}, DisableAgent: true, DNSListen: "127.0.0.1:1053",
		DNSUpstream: []string{"127.0.0.1:53"}, NodeIP: []string{"192.0.2.1"}, Runtime: "process",
		ProxyMode: "nftables"}
	if got.DataDir != want.DataDir || got.Listen != want.Listen || got.ServiceCIDR != want.ServiceCIDR ||
		got.ClusterCIDR != want.ClusterCIDR || got.NodePortRange != want.NodePortRange ||
		got.ClusterDomain != want.ClusterDomain || strings.Join(got.TLSSANs, ",") != "a.example,192.0.2.7" ||
		!got.DisableAgent || got.DNSListen != want.DNSListen || got.DNSTTL != 30*time.Second || strings.Join(got.DNSUpstream, ",") != "127.0.0.1:53" ||
		strings.Join(got.NodeIP, ",") != "192.0.2.1" || got.Runtime != "process" || got.ProxyMode != "nftables" ||
		got.MaxRequestsInFlight != 40 || got.MaxMutatingRequestsInFlight != 0 || got.RequestBodyTimeout != 5*time.Second {
		t.Fatalf("config = %+v", got)
	}
}

func TestServerFlagsRejected(t *testing.T) {
	for _, args := range [][]string{
		{"server", "--service-cidr", "nope"},
		{"server", "--node-port-range", "1-2-3"},
		{"server", "--no-such-flag"},
		{"server", "extra-arg"},
		{"server", "--dns-ttl", "0s"},
		{"server", "--request-body-timeout", "0s"},
		{"server", "--max-requests-inflight", "-1"},
		{"server", "--max-connections-per-address", "-1"},
		{"server", "--idle-timeout", "-1s"},
	} {
		root := NewRoot(Runners{Server: func(context.Context, config.Server) error {
			t.Fatalf("runner called for %v", args)
			return nil
		}}, &bytes.Buffer{})
		root.SetArgs(args)
		root.SetErr(&bytes.Buffer{})
		if err := root.ExecuteContext(context.Background()); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestVersion(t *testing.T) {
	var out bytes.Buffer
	root := NewRoot(Runners{}, &out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "v1.31.0-skiff") {
		t.Fatalf("version output %q", out.String())
	}
}
