package iptables_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables"
	"github.com/skiff-dev/skiff/netagent/proxy/iptables/iptablestest"
)

const third = 1.0 / 3

// TestRules programs one Service port with a full sync against the
// validating fake and follows packets through the resulting rules.
func TestRules(t *testing.T) {
	podA := addr("10.244.0.9")      // a pod on this node
	outside := addr("192.168.77.2") // a client outside the cluster
	web := func(mod func(*proxy.ServicePort)) *proxy.ServicePort { return svcPort("ns", "web", "10.96.0.10", mod) }
	nodePort := func(sp *proxy.ServicePort) { sp.NodePort = 30080 }
	tests := []struct {
		name    string
		svc     svcWithEps
		env     *iptablestest.Env
		packets []struct {
			p    iptablestest.Packet
			want map[string]float64
		}
	}{
		{name: "ClusterIP: 3 endpoints, 1/3 each, no masquerade from a pod",
			svc: svcWithEps{web(nil), eps("10.244.0.2", "10.244.0.3", "10.244.1.4")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80},
					map[string]float64{"ACCEPT 10.244.0.2:8080": third, "ACCEPT 10.244.0.3:8080": third, "ACCEPT 10.244.1.4:8080": third}},
				{iptablestest.Packet{Src: addr("10.244.0.1"), Dst: addr("10.96.0.10"), DPort: 80, Local: true},
					map[string]float64{"ACCEPT 10.244.0.2:8080": third, "ACCEPT 10.244.0.3:8080": third, "ACCEPT 10.244.1.4:8080": third}},
				{iptablestest.Packet{Src: outside, Dst: addr("10.96.0.10"), DPort: 80},
					map[string]float64{"ACCEPT 10.244.0.2:8080 masq": third, "ACCEPT 10.244.0.3:8080 masq": third, "ACCEPT 10.244.1.4:8080 masq": third}},
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 81}, map[string]float64{"REJECT": 1}},
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.7.7"), DPort: 80}, map[string]float64{"REJECT": 1}},
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80, Proto: "udp"}, map[string]float64{"REJECT": 1}},
			}},
		{name: "hairpin: an endpoint reaching itself is masqueraded",
			svc: svcWithEps{web(nil), eps("10.244.0.2", "10.244.0.3")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: addr("10.244.0.2"), Dst: addr("10.96.0.10"), DPort: 80},
					map[string]float64{"ACCEPT 10.244.0.2:8080 masq": 0.5, "ACCEPT 10.244.0.3:8080": 0.5}},
			}},
		{name: "no endpoints: rejected, ClusterIP and NodePort",
			svc: svcWithEps{web(nodePort), nil},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80}, map[string]float64{"REJECT": 1}},
				{iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30080}, map[string]float64{"REJECT": 1}},
			}},
		{name: "not ready endpoints get nothing; serving+terminating only when nothing is ready",
			svc: svcWithEps{web(nil), []proxy.Endpoint{
				{IP: addr("10.244.0.2"), Port: 8080, Ready: true, Serving: true},
				{IP: addr("10.244.0.3"), Port: 8080},
				{IP: addr("10.244.0.4"), Port: 8080, Serving: true, Terminating: true},
			}},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80}, map[string]float64{"ACCEPT 10.244.0.2:8080": 1}},
			}},
		{name: "serving+terminating fallback",
			svc: svcWithEps{web(nil), []proxy.Endpoint{
				{IP: addr("10.244.0.3"), Port: 8080},
				{IP: addr("10.244.0.4"), Port: 8080, Serving: true, Terminating: true},
			}},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80}, map[string]float64{"ACCEPT 10.244.0.4:8080": 1}},
			}},
		{name: "NodePort, Cluster policy: every endpoint, masqueraded",
			svc: svcWithEps{web(nodePort), eps("10.244.0.2+", "10.244.1.3")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30080},
					map[string]float64{"ACCEPT 10.244.0.2:8080 masq": 0.5, "ACCEPT 10.244.1.3:8080 masq": 0.5}},
				{iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30081}, map[string]float64{"ACCEPT 192.168.77.1:30081": 1}},
			}},
		{name: "NodePort, Local policy: local endpoints only, client IP kept",
			svc: svcWithEps{web(func(sp *proxy.ServicePort) {
				sp.NodePort, sp.ExternalPolicyLocal, sp.HealthCheckNodePort = 30080, true, 32000
			}), eps("10.244.0.2+", "10.244.1.3")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30080}, map[string]float64{"ACCEPT 10.244.0.2:8080": 1}},
				// From the node itself: short-circuited to every endpoint, masqueraded.
				{iptablestest.Packet{Src: nodeIP, Dst: nodeIP, DPort: 30080, Local: true},
					map[string]float64{"ACCEPT 10.244.0.2:8080 masq": 0.5, "ACCEPT 10.244.1.3:8080 masq": 0.5}},
				// From a pod: short-circuited too, not masqueraded.
				{iptablestest.Packet{Src: podA, Dst: nodeIP, DPort: 30080},
					map[string]float64{"ACCEPT 10.244.0.2:8080": 0.5, "ACCEPT 10.244.1.3:8080": 0.5}},
				// The health check port is accepted.
				{iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 32000}, map[string]float64{"ACCEPT 192.168.77.1:32000": 1}},
			}},
		{name: "NodePort, Local policy, no local endpoint: external traffic dropped",
			svc: svcWithEps{web(func(sp *proxy.ServicePort) { sp.NodePort, sp.ExternalPolicyLocal = 30080, true }), eps("10.244.1.3")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: outside, Dst: nodeIP, DPort: 30080}, map[string]float64{"DROP": 1}},
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80}, map[string]float64{"ACCEPT 10.244.1.3:8080": 1}},
			}},
		{name: "internalTrafficPolicy Local",
			svc: svcWithEps{web(func(sp *proxy.ServicePort) { sp.InternalPolicyLocal = true }), eps("10.244.0.2+", "10.244.1.3")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80}, map[string]float64{"ACCEPT 10.244.0.2:8080": 1}},
			}},
		{name: "internalTrafficPolicy Local without a local endpoint: dropped",
			svc: svcWithEps{web(func(sp *proxy.ServicePort) { sp.InternalPolicyLocal = true }), eps("10.244.1.3")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.10"), DPort: 80}, map[string]float64{"DROP": 1}},
			}},
		{name: "LoadBalancer with source ranges",
			svc: svcWithEps{web(func(sp *proxy.ServicePort) {
				sp.NodePort = 30080
				sp.LoadBalancerIPs = []netip.Addr{addr("203.0.113.10")}
				sp.LoadBalancerSourceRanges = []netip.Prefix{netip.MustParsePrefix("198.51.100.0/24")}
			}), eps("10.244.0.2")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: addr("198.51.100.7"), Dst: addr("203.0.113.10"), DPort: 80}, map[string]float64{"ACCEPT 10.244.0.2:8080 masq": 1}},
				{iptablestest.Packet{Src: addr("192.0.2.7"), Dst: addr("203.0.113.10"), DPort: 80}, map[string]float64{"DROP": 1}},
				// NodePorts are not subject to the source ranges (as kube-proxy).
				{iptablestest.Packet{Src: addr("192.0.2.7"), Dst: nodeIP, DPort: 30080}, map[string]float64{"ACCEPT 10.244.0.2:8080 masq": 1}},
			}},
		{name: "external IP",
			svc: svcWithEps{web(func(sp *proxy.ServicePort) { sp.ExternalIPs = []netip.Addr{addr("192.0.2.50")} }), eps("10.244.0.2")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: outside, Dst: addr("192.0.2.50"), DPort: 80}, map[string]float64{"ACCEPT 10.244.0.2:8080 masq": 1}},
			}},
		{name: "UDP",
			svc: svcWithEps{svcPort("kube-system", "dns", "10.96.0.53", func(sp *proxy.ServicePort) {
				sp.Protocol, sp.Name.Protocol, sp.Port, sp.Name.Port = "UDP", "UDP", 53, "dns"
			}), eps("10.244.0.2")},
			packets: []struct {
				p    iptablestest.Packet
				want map[string]float64
			}{
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.53"), DPort: 53, Proto: "udp"}, map[string]float64{"ACCEPT 10.244.0.2:8080": 1}},
				{iptablestest.Packet{Src: podA, Dst: addr("10.96.0.53"), DPort: 53, Proto: "tcp"}, map[string]float64{"REJECT": 1}},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := iptablestest.New(iptables.ModeNFT)
			b := newBackend(t, fake, iptables.Config{})
			doSync(t, b, newState(tt.svc), nil)
			e := env
			if tt.env != nil {
				e = *tt.env
			}
			for _, pk := range tt.packets {
				got := trace(t, fake, e, pk.p)
				if !sameSpread(got, pk.want) {
					t.Errorf("%s %v -> %v:%d:\n got\n%s want\n%s", pk.p.Proto, pk.p.Src, pk.p.Dst, pk.p.DPort, formatSpread(got), formatSpread(pk.want))
				}
			}
		})
	}
}

func TestSessionAffinity(t *testing.T) {
	fake := iptablestest.New(iptables.ModeNFT)
	b := newBackend(t, fake, iptables.Config{})
	sp := svcPort("ns", "web", "10.96.0.10", func(sp *proxy.ServicePort) { sp.AffinityTimeout = 3 * time.Hour })
	doSync(t, b, newState(svcWithEps{sp, eps("10.244.0.2", "10.244.0.3", "10.244.0.4")}), nil)
	p := iptablestest.Packet{Src: addr("10.244.0.9"), Dst: addr("10.96.0.10"), DPort: 80, Proto: "tcp", SPort: 40000}

	// A new client: spread evenly, and each path records the client in
	// the endpoint's recent list.
	outs, err := fake.Trace(env, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := spread(outs); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.2:8080": third, "ACCEPT 10.244.0.3:8080": third, "ACCEPT 10.244.0.4:8080": third}) {
		t.Fatalf("new client:\n%s", formatSpread(got))
	}
	for _, o := range outs {
		want := iptables.EndpointChain(sp.Name, o.Dst.String())
		if len(o.RecentSet) != 1 || o.RecentSet[0] != want {
			t.Errorf("to %v: recent lists set %v, want [%s]", o.Dst, o.RecentSet, want)
		}
	}
	// A client in 10.244.0.3's list sticks to it.
	sticky := env
	sticky.Recent = map[string][]netip.Addr{iptables.EndpointChain(sp.Name, "10.244.0.3:8080"): {p.Src}}
	if got := trace(t, fake, sticky, p); !sameSpread(got, map[string]float64{"ACCEPT 10.244.0.3:8080": 1}) {
		t.Errorf("known client:\n%s", formatSpread(got))
	}
	// The rule carries the timeout.
	svc := fake.Table("nat").Chains[iptables.ChainsOf(sp.Name).SVC]
	if got := svc.Rules[1].String(); !contains(got, "-m recent --name "+iptables.EndpointChain(sp.Name, "10.244.0.2:8080")+" --rcheck --seconds 10800 --reap") {
		t.Errorf("first affinity rule = %s", got)
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0))
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}
