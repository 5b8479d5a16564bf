package nftables

import (
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/skiff-dev/skiff/netagent/proxy"
)

// TestTrace follows virtual packets through the ruleset a full sync writes
// into the fake: which endpoints a packet can reach, whether it is
// masqueraded, dropped or rejected.
func TestTrace(t *testing.T) {
	web := spn("web", "http", "TCP")
	dns := spn("dns", "dns", "UDP")
	const (
		podA     = "10.244.0.5"  // a pod on this node, not an endpoint
		podEP    = "10.244.0.2"  // a pod that is an endpoint of web
		outside  = "192.168.7.7" // a host outside the cluster
		vip      = "10.96.0.10"
		node     = "192.168.1.10"
		lb       = "192.168.50.1"
		extIP    = "192.168.60.1"
		webEP1   = "10.244.0.2:8080" // local
		webEP2   = "10.244.1.2:8080" // on another node
		webEP3   = "10.244.2.2:8080" // on another node
		localEP2 = "10.244.0.3:8080"
	)
	type probe struct {
		name string
		pkt  Packet
		want []string
	}
	cases := []struct {
		name   string
		setup  func(st *proxy.State)
		probes []probe
	}{
		{
			name: "ClusterIP",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80)
				st.Endpoints[web] = eps(webEP1, webEP2, webEP3)
			},
			probes: []probe{
				{"from a pod: every endpoint, no masquerade", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP1, webEP2, webEP3)},
				{"from the node: masquerade", fromNode(pkt(node, vip, ProtoTCP, 80)), dnatTo(true, webEP1, webEP2, webEP3)},
				{"from outside the cluster CIDR: masquerade", pkt(outside, vip, ProtoTCP, 80), dnatTo(true, webEP1, webEP2, webEP3)},
				{"hairpin: an endpoint reaching itself is masqueraded", pkt(podEP, vip, ProtoTCP, 80),
					sorted("accept dnat "+webEP1+" masq", "accept dnat "+webEP2, "accept dnat "+webEP3)},
				{"another port of the ClusterIP: reject", pkt(podA, vip, ProtoTCP, 81), []string{"reject"}},
				{"another protocol: reject", pkt(podA, vip, ProtoUDP, 80), []string{"reject"}},
				{"an unallocated service IP: reject", pkt(podA, "10.96.3.3", ProtoTCP, 80), []string{"reject"}},
				{"from the node, an unallocated service IP: reject", fromNode(pkt(node, "10.96.3.3", ProtoTCP, 80)), []string{"reject"}},
				{"outside the service CIDR: untouched", pkt(podA, "10.97.0.1", ProtoTCP, 80), []string{"accept"}},
			},
		},
		{
			name: "no endpoints",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, nodePort(30080), lbIP(lb))
				addSvc(st, dns, "10.96.0.53", 53)
			},
			probes: []probe{
				{"ClusterIP from a pod: reject", pkt(podA, vip, ProtoTCP, 80), []string{"reject"}},
				{"ClusterIP from the node: reject", fromNode(pkt(node, vip, ProtoTCP, 80)), []string{"reject"}},
				{"NodePort: reject", pkt(outside, node, ProtoTCP, 30080), []string{"reject"}},
				{"LB IP: reject", pkt(outside, lb, ProtoTCP, 80), []string{"reject"}},
				{"UDP ClusterIP: reject", pkt(podA, "10.96.0.53", ProtoUDP, 53), []string{"reject"}},
			},
		},
		{
			name: "NodePort, LoadBalancer and external IPs with the Cluster policy",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, nodePort(30080), lbIP(lb), externalIP(extIP))
				st.Endpoints[web] = eps(webEP1, webEP2)
			},
			probes: []probe{
				{"NodePort on a node IP: every endpoint, masquerade", pkt(outside, node, ProtoTCP, 30080), dnatTo(true, webEP1, webEP2)},
				{"NodePort from the node itself", fromNode(pkt(node, node, ProtoTCP, 30080)), dnatTo(true, webEP1, webEP2)},
				{"NodePort on loopback: not served", fromNode(pkt("127.0.0.1", "127.0.0.1", ProtoTCP, 30080)), []string{"accept"}},
				{"NodePort on an address that is not the node's: untouched", pkt(outside, "192.168.1.99", ProtoTCP, 30080), []string{"accept"}},
				{"LB IP", pkt(outside, lb, ProtoTCP, 80), dnatTo(true, webEP1, webEP2)},
				{"external IP", pkt(outside, extIP, ProtoTCP, 80), dnatTo(true, webEP1, webEP2)},
				{"LB IP, wrong port: untouched", pkt(outside, lb, ProtoTCP, 81), []string{"accept"}},
			},
		},
		{
			name: "loadBalancerSourceRanges",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, nodePort(30080), lbIP(lb, "192.168.7.0/24", "192.168.1.0/24"))
				st.Endpoints[web] = eps(webEP1)
			},
			probes: []probe{
				{"allowed source", pkt(outside, lb, ProtoTCP, 80), dnatTo(true, webEP1)},
				{"other source: drop", pkt("192.168.8.8", lb, ProtoTCP, 80), []string{"drop"}},
				{"the node (range holds a node IP) reaching its LB IP with the LB IP as source",
					fromNode(pkt(lb, lb, ProtoTCP, 80)), dnatTo(true, webEP1)},
				{"NodePort is not filtered", pkt("192.168.8.8", node, ProtoTCP, 30080), dnatTo(true, webEP1)},
				{"ClusterIP is not filtered", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP1)},
			},
		},
		{
			name: "externalTrafficPolicy Local",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, nodePort(30080), lbIP(lb), extLocal)
				st.Endpoints[web] = eps(webEP1, localEP2, webEP2)
			},
			probes: []probe{
				{"NodePort from outside: local endpoints only, client IP kept", pkt(outside, node, ProtoTCP, 30080), dnatTo(false, webEP1, localEP2)},
				{"LB IP from outside: local endpoints only", pkt(outside, lb, ProtoTCP, 80), dnatTo(false, webEP1, localEP2)},
				{"LB IP from a pod: short-circuit to every endpoint", pkt(podA, lb, ProtoTCP, 80), dnatTo(false, webEP1, localEP2, webEP2)},
				{"NodePort from the node: every endpoint, masquerade", fromNode(pkt(node, node, ProtoTCP, 30080)), dnatTo(true, webEP1, localEP2, webEP2)},
				{"ClusterIP keeps the Cluster policy", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP1, localEP2, webEP2)},
			},
		},
		{
			name: "externalTrafficPolicy Local without local endpoints",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, nodePort(30080), lbIP(lb), extLocal)
				st.Endpoints[web] = eps(webEP2)
			},
			probes: []probe{
				{"NodePort from outside: drop", pkt(outside, node, ProtoTCP, 30080), []string{"drop"}},
				{"LB IP from outside: drop", pkt(outside, lb, ProtoTCP, 80), []string{"drop"}},
				{"LB IP from a pod still works", pkt(podA, lb, ProtoTCP, 80), dnatTo(false, webEP2)},
				{"ClusterIP still works", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP2)},
			},
		},
		{
			name: "internalTrafficPolicy Local",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, intLocal)
				st.Endpoints[web] = eps(webEP1, webEP2)
				addSvc(st, dns, "10.96.0.53", 53, intLocal)
				st.Endpoints[dns] = eps("10.244.1.9:53")
			},
			probes: []probe{
				{"local endpoints only", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP1)},
				{"from the node: masquerade", fromNode(pkt(node, vip, ProtoTCP, 80)), dnatTo(true, webEP1)},
				{"no local endpoint: drop", pkt(podA, "10.96.0.53", ProtoUDP, 53), []string{"drop"}},
			},
		},
		{
			name: "serving and terminating endpoints when none is ready",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80)
				e := eps(webEP1, webEP2, webEP3)
				e[0].Ready, e[0].Serving, e[0].Terminating = false, true, true
				e[1].Ready, e[1].Serving, e[1].Terminating = false, false, true
				e[2].Ready, e[2].Serving, e[2].Terminating = false, true, false
				st.Endpoints[web] = e
			},
			probes: []probe{
				{"only the serving terminating one", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP1)},
			},
		},
		{
			name: "a ready endpoint wins over serving terminating ones",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80)
				e := eps(webEP1, webEP2)
				e[0].Ready, e[0].Terminating = false, true
				st.Endpoints[web] = e
			},
			probes: []probe{
				{"only the ready one", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP2)},
			},
		},
		{
			name: "UDP",
			setup: func(st *proxy.State) {
				addSvc(st, dns, "10.96.0.53", 53, nodePort(30053))
				st.Endpoints[dns] = eps("10.244.0.9:5353")
			},
			probes: []probe{
				{"ClusterIP", pkt(podA, "10.96.0.53", ProtoUDP, 53), dnatTo(false, "10.244.0.9:5353")},
				{"NodePort", pkt(outside, node, ProtoUDP, 30053), dnatTo(true, "10.244.0.9:5353")},
				{"TCP to the UDP port: reject", pkt(podA, "10.96.0.53", ProtoTCP, 53), []string{"reject"}},
			},
		},
		{
			name: "session affinity: any endpoint for a new client",
			setup: func(st *proxy.State) {
				addSvc(st, web, vip, 80, affinity(time.Hour))
				st.Endpoints[web] = eps(webEP1, webEP2, webEP3)
			},
			probes: []probe{
				{"new client", pkt(podA, vip, ProtoTCP, 80), dnatTo(false, webEP1, webEP2, webEP3)},
				{"hairpin", pkt(podEP, vip, ProtoTCP, 80), sorted("accept dnat "+webEP1+" masq", "accept dnat "+webEP2, "accept dnat "+webEP3)},
			},
		},
		{
			name: "headless and unsupported protocols get no rules",
			setup: func(st *proxy.State) {
				h := spn("headless", "", "TCP")
				st.Services[h] = &proxy.ServicePort{Name: h, Port: 80, Protocol: "TCP"}
				st.Endpoints[h] = eps(webEP1)
				x := spn("weird", "", "DCCP")
				addSvc(st, x, "10.96.0.77", 80)
				st.Endpoints[x] = eps(webEP1)
			},
			probes: []probe{
				{"unsupported protocol's ClusterIP is rejected", pkt(podA, "10.96.0.77", ProtoTCP, 80), []string{"reject"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, f := newFakeProxier(t)
			st := newState()
			tc.setup(st)
			mustSync(t, p, st, nil)
			for _, pr := range tc.probes {
				got := outcomes(t, f, pr.pkt)
				if !slices.Equal(got, pr.want) {
					t.Errorf("%s: %+v\n got  %q\n want %q\n%s", pr.name, pr.pkt, got, pr.want, f.Dump(IPv4, TableName))
				}
			}
		})
	}
}

// TestTraceAffinitySticks: once a client was sent to an endpoint, every
// later connection of that client goes there, whatever numgen says; another
// client is free.
func TestTraceAffinitySticks(t *testing.T) {
	web := spn("web", "http", "TCP")
	p, f := newFakeProxier(t)
	st := newState()
	addSvc(st, web, "10.96.0.10", 80, affinity(time.Hour))
	st.Endpoints[web] = eps("10.244.0.2:8080", "10.244.1.2:8080", "10.244.2.2:8080")
	mustSync(t, p, st, nil)

	trace := func(src string, pick uint32) netip.AddrPort {
		t.Helper()
		os, err := f.Trace(IPv4, pkt(src, "10.96.0.10", ProtoTCP, 80), TraceConfig{LocalAddrs: []netip.Addr{nodeIP},
			Pick: func(mod uint32) uint32 { return pick % mod }})
		if err != nil {
			t.Fatal(err)
		}
		return os[0].DNAT
	}
	first := trace("10.244.0.5", 1)
	if !first.IsValid() {
		t.Fatal("no DNAT")
	}
	for pick := uint32(0); pick < 6; pick++ {
		if got := trace("10.244.0.5", pick); got != first {
			t.Fatalf("client moved from %s to %s (pick %d)", first, got, pick)
		}
	}
	// Another client can land elsewhere.
	seen := map[netip.AddrPort]bool{}
	for i, src := range []string{"10.244.3.1", "10.244.3.2", "10.244.3.3"} {
		seen[trace(src, uint32(i))] = true
	}
	if len(seen) < 2 {
		t.Fatalf("new clients all went to %v", seen)
	}
	// The endpoint goes away: its affinity set goes with it and the client
	// is sent elsewhere.
	var rest []proxy.Endpoint
	for _, e := range st.Endpoints[web] {
		if netip.AddrPortFrom(e.IP, uint16(e.Port)) != first {
			rest = append(rest, e)
		}
	}
	st.Endpoints[web] = rest
	mustSync(t, p, st, []proxy.ServicePortName{web})
	for pick := uint32(0); pick < 3; pick++ {
		if got := trace("10.244.0.5", pick); got == first || !got.IsValid() {
			t.Fatalf("after removing %s the client went to %s", first, got)
		}
	}
}
