package proxy

import (
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
)

func TestFlowFilter(t *testing.T) {
	flow := func(proto uint8, dst, replySrc string, dport uint16) *netlink.ConntrackFlow {
		f := &netlink.ConntrackFlow{}
		f.Forward.Protocol = proto
		f.Forward.SrcIP = net.ParseIP("10.244.0.9")
		f.Forward.DstIP = net.ParseIP(dst)
		f.Forward.DstPort = dport
		f.Reverse.SrcIP = net.ParseIP(replySrc)
		return f
	}
	a := netip.MustParseAddr
	tests := []struct {
		name   string
		filter ConntrackFilter
		flow   *netlink.ConntrackFlow
		match  bool
	}{
		{"DNATed flow to the endpoint", ConntrackFilter{OrigDst: a("10.96.0.10"), OrigDstPort: 53, ReplySrc: a("10.244.0.2")},
			flow(17, "10.96.0.10", "10.244.0.2", 53), true},
		{"other endpoint", ConntrackFilter{OrigDst: a("10.96.0.10"), ReplySrc: a("10.244.0.2")},
			flow(17, "10.96.0.10", "10.244.0.3", 53), false},
		{"TCP never", ConntrackFilter{OrigDst: a("10.96.0.10")}, flow(6, "10.96.0.10", "10.244.0.2", 53), false},
		{"other port", ConntrackFilter{OrigDstPort: 30053}, flow(17, "192.168.1.1", "10.244.0.2", 30054), false},
		{"not NATed only", ConntrackFilter{OrigDst: a("10.96.0.10"), NotNATed: true}, flow(17, "10.96.0.10", "10.96.0.10", 53), true},
		{"NATed is kept", ConntrackFilter{OrigDst: a("10.96.0.10"), NotNATed: true}, flow(17, "10.96.0.10", "10.244.0.2", 53), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := flowFilter(tt.filter).MatchConntrackFlow(tt.flow); got != tt.match {
				t.Errorf("match = %v, want %v", got, tt.match)
			}
		})
	}
}
