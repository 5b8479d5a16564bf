package iptables_test

import (
	"context"
	"fmt"
	"math"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
)

var (
	nodeIP      = netip.MustParseAddr("192.168.77.1")
	clusterCIDR = netip.MustParsePrefix("10.244.0.0/16")
	serviceCIDR = netip.MustParsePrefix("10.96.0.0/16")
	env         = iptablestest.Env{LocalAddrs: []netip.Addr{nodeIP, netip.MustParseAddr("10.244.0.1")}}
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

// svcPort is a shorthand for a TCP Service port ns/name:http on port 80.
func svcPort(ns, name, vip string, mod func(*proxy.ServicePort)) *proxy.ServicePort {
	sp := &proxy.ServicePort{
		Name:       proxy.ServicePortName{Namespace: ns, Name: name, Port: "http", Protocol: "TCP"},
		ClusterIPs: []netip.Addr{addr(vip)},
		Port:       80,
		Protocol:   "TCP",
	}
	if mod != nil {
		mod(sp)
	}
	return sp
}

// eps returns ready endpoints on port 8080; a "+" suffix marks one local.
func eps(ips ...string) []proxy.Endpoint {
	var out []proxy.Endpoint
	for _, ip := range ips {
		local := strings.HasSuffix(ip, "+")
		ip = strings.TrimSuffix(ip, "+")
		node := "node-b"
		if local {
			node = "node-a"
		}
		out = append(out, proxy.Endpoint{IP: addr(ip), Port: 8080, NodeName: node, Ready: true, Serving: true, IsLocal: local})
	}
	return out
}

type svcWithEps struct {
	sp  *proxy.ServicePort
	eps []proxy.Endpoint
}

func newState(svcs ...svcWithEps) *proxy.State {
	st := &proxy.State{
		Services:    map[proxy.ServicePortName]*proxy.ServicePort{},
		Endpoints:   map[proxy.ServicePortName][]proxy.Endpoint{},
		NodeName:    "node-a",
		NodeIPs:     []netip.Addr{nodeIP},
		ClusterCIDR: clusterCIDR,
		ServiceCIDR: serviceCIDR,
	}
	for _, s := range svcs {
		st.Services[s.sp.Name] = s.sp
		st.Endpoints[s.sp.Name] = s.eps
	}
	return st
}

func newBackend(t testing.TB, fake *iptablestest.Fake, cfg iptables.Config) *iptables.Backend {
	t.Helper()
	cfg.Exec = fake
	if cfg.Mode == "" {
		cfg.Mode = iptables.ModeNFT
	}
	b, err := iptables.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func doSync(t testing.TB, b *iptables.Backend, st *proxy.State, changed []proxy.ServicePortName) {
	t.Helper()
	if err := b.Sync(context.Background(), st, changed); err != nil {
		t.Fatal(err)
	}
}

// spread summarises trace outcomes: "verdict dst [masq]" -> probability.
func spread(outs []iptablestest.Outcome) map[string]float64 {
	m := map[string]float64{}
	for _, o := range outs {
		k := o.Verdict
		if o.Verdict == "ACCEPT" {
			k += " " + o.Dst.String()
			if o.Masquerade {
				k += " masq"
			}
		}
		m[k] += o.Prob
	}
	return m
}

func formatSpread(m map[string]float64) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-40s %.4f\n", k, m[k])
	}
	return b.String()
}

func trace(t testing.TB, f *iptablestest.Fake, e iptablestest.Env, p iptablestest.Packet) map[string]float64 {
	t.Helper()
	if p.Proto == "" {
		p.Proto = "tcp"
	}
	if p.SPort == 0 {
		p.SPort = 40000
	}
	outs, err := f.Trace(e, p)
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, o := range outs {
		total += o.Prob
	}
	if math.Abs(total-1) > 1e-6 {
		t.Fatalf("outcome probabilities sum to %v", total)
	}
	return spread(outs)
}

func sameSpread(got, want map[string]float64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-6 {
			return false
		}
	}
	return true
}

var _ = time.Second
