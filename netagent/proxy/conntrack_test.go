package proxy

import (
	"net/netip"
	"slices"
	"testing"
)

func TestConntrackFilters(t *testing.T) {
	a := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	udp := &ServicePort{Protocol: "UDP", Port: 53, ClusterIPs: []netip.Addr{a("10.96.0.10")}}
	udpNP := &ServicePort{Protocol: "UDP", Port: 53, NodePort: 30053, ClusterIPs: []netip.Addr{a("10.96.0.10")},
		ExternalIPs: []netip.Addr{a("192.0.2.1")}}
	tcp := &ServicePort{Protocol: "TCP", Port: 80, ClusterIPs: []netip.Addr{a("10.96.0.11")}}
	e1 := Endpoint{IP: a("10.244.0.2"), Port: 53, Ready: true, Serving: true}
	e2 := Endpoint{IP: a("10.244.0.3"), Port: 53, Ready: true, Serving: true}
	e2NotReady := e2
	e2NotReady.Ready, e2NotReady.Serving = false, false
	tests := []struct {
		name           string
		oldSP, newSP   *ServicePort
		oldEps, newEps []Endpoint
		want           []ConntrackFilter
	}{
		{"TCP needs nothing", tcp, tcp, []Endpoint{e1}, nil, nil},
		{"unchanged", udp, udp, []Endpoint{e1}, []Endpoint{e1}, nil},
		{"endpoint replaced", udp, udp, []Endpoint{e1}, []Endpoint{e2}, []ConntrackFilter{
			{OrigDst: a("10.96.0.10"), OrigDstPort: 53, ReplySrc: a("10.244.0.2")}}},
		{"endpoint no longer ready", udp, udp, []Endpoint{e1, e2}, []Endpoint{e1, e2NotReady}, []ConntrackFilter{
			{OrigDst: a("10.96.0.10"), OrigDstPort: 53, ReplySrc: a("10.244.0.3")}}},
		{"first endpoint: flush the un-NATed entries", udp, udp, nil, []Endpoint{e1}, []ConntrackFilter{
			{OrigDst: a("10.96.0.10"), OrigDstPort: 53, NotNATed: true}}},
		{"service removed, NodePort and external IP", udpNP, nil, []Endpoint{e1}, nil, []ConntrackFilter{
			{OrigDst: a("10.96.0.10"), OrigDstPort: 53, ReplySrc: a("10.244.0.2")},
			{OrigDst: a("192.0.2.1"), OrigDstPort: 53, ReplySrc: a("10.244.0.2")},
			{OrigDstPort: 30053, ReplySrc: a("10.244.0.2")}}},
		{"new NodePort service with endpoints", nil, udpNP, nil, []Endpoint{e1}, []ConntrackFilter{
			{OrigDst: a("10.96.0.10"), OrigDstPort: 53, NotNATed: true},
			{OrigDst: a("192.0.2.1"), OrigDstPort: 53, NotNATed: true},
			{OrigDstPort: 30053, NotNATed: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := conntrackFilters(tt.oldSP, tt.newSP, tt.oldEps, tt.newEps)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
		})
	}
}
