package nftables

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

var (
	nodeIP      = netip.MustParseAddr("192.168.1.10")
	clusterCIDR = netip.MustParsePrefix("10.244.0.0/16")
	serviceCIDR = netip.MustParsePrefix("10.96.0.0/16")
)

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newState() *proxy.State {
	return &proxy.State{
		Services:    map[proxy.ServicePortName]*proxy.ServicePort{},
		Endpoints:   map[proxy.ServicePortName][]proxy.Endpoint{},
		NodeName:    "node-a",
		NodeIPs:     []netip.Addr{nodeIP},
		ClusterCIDR: clusterCIDR,
		ServiceCIDR: serviceCIDR,
	}
}

func spn(name, port, proto string) proxy.ServicePortName {
	return proxy.ServicePortName{Namespace: "default", Name: name, Port: port, Protocol: proto}
}

// addSvc adds a Service port; mods tweak it.
func addSvc(st *proxy.State, n proxy.ServicePortName, clusterIP string, port int32, mods ...func(*proxy.ServicePort)) *proxy.ServicePort {
	sp := &proxy.ServicePort{Name: n, ClusterIPs: []netip.Addr{netip.MustParseAddr(clusterIP)}, Port: port, Protocol: n.Protocol}
	for _, m := range mods {
		m(sp)
	}
	st.Services[n] = sp
	return sp
}

func nodePort(p int32) func(*proxy.ServicePort) {
	return func(sp *proxy.ServicePort) { sp.NodePort = p }
}
func lbIP(ip string, ranges ...string) func(*proxy.ServicePort) {
	return func(sp *proxy.ServicePort) {
		sp.LoadBalancerIPs = append(sp.LoadBalancerIPs, netip.MustParseAddr(ip))
		for _, r := range ranges {
			sp.LoadBalancerSourceRanges = append(sp.LoadBalancerSourceRanges, netip.MustParsePrefix(r))
		}
	}
}
func externalIP(ip string) func(*proxy.ServicePort) {
	return func(sp *proxy.ServicePort) { sp.ExternalIPs = append(sp.ExternalIPs, netip.MustParseAddr(ip)) }
}
func extLocal(sp *proxy.ServicePort) { sp.ExternalPolicyLocal = true }
func intLocal(sp *proxy.ServicePort) { sp.InternalPolicyLocal = true }
func affinity(d time.Duration) func(*proxy.ServicePort) {
	return func(sp *proxy.ServicePort) { sp.AffinityTimeout = d }
}

// ready endpoints: "10.244.0.2:8080" (local when on 10.244.0.0/24, the
// node's pod CIDR).
func eps(addrs ...string) []proxy.Endpoint {
	var out []proxy.Endpoint
	for _, a := range addrs {
		ap := netip.MustParseAddrPort(a)
		out = append(out, proxy.Endpoint{IP: ap.Addr(), Port: int32(ap.Port()), Ready: true, Serving: true,
			IsLocal: netip.MustParsePrefix("10.244.0.0/24").Contains(ap.Addr())})
	}
	return out
}

func mustSync(t *testing.T, p *Proxier, st *proxy.State, changed []proxy.ServicePortName) {
	t.Helper()
	if err := p.Sync(context.Background(), st, changed); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func newFakeProxier(t *testing.T) (*Proxier, *Fake) {
	t.Helper()
	f := NewFake()
	p, err := New(Config{Kernel: f, Logger: quietLog()})
	if err != nil {
		t.Fatal(err)
	}
	return p, f
}

var traceCfg = TraceConfig{LocalAddrs: []netip.Addr{nodeIP}}

func pkt(src, dst string, proto Proto, port uint16) Packet {
	return Packet{Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst), Proto: proto, Dport: port}
}

func fromNode(p Packet) Packet { p.FromNode = true; return p }

// outcomes traces and renders the distinct outcomes, sorted.
func outcomes(t *testing.T, f *Fake, p Packet) []string {
	t.Helper()
	fam := IPv4
	if p.Dst.Is6() {
		fam = IPv6
	}
	os, err := f.Trace(fam, p, traceCfg)
	if err != nil {
		t.Fatalf("trace %+v: %v", p, err)
	}
	var out []string
	for _, o := range os {
		s := o.String()
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func dnatTo(masq bool, eps ...string) []string {
	var out []string
	for _, e := range eps {
		s := "accept dnat " + e
		if masq {
			s += " masq"
		}
		out = append(out, s)
	}
	return sorted(out...)
}
