package proxy

import (
	"context"
	"fmt"
	"net/netip"
)

// ConntrackFilter selects UDP conntrack entries. Zero fields match any
// value.
type ConntrackFilter struct {
	// OrigDst and OrigDstPort: where the client sent the packet (a Service
	// address and port, or a NodePort).
	OrigDst     netip.Addr
	OrigDstPort uint16
	// ReplySrc: the endpoint the entry was DNATed to.
	ReplySrc netip.Addr
	// NotNATed selects only entries that were not DNATed (the reply comes
	// from the address the client sent to): those made while the Service
	// had no endpoint, which would otherwise keep black-holing the flow.
	NotNATed bool
}

func (f ConntrackFilter) String() string {
	s := "udp"
	if f.OrigDst.IsValid() {
		s += " dst=" + f.OrigDst.String()
	}
	if f.OrigDstPort != 0 {
		s += fmt.Sprintf(" dport=%d", f.OrigDstPort)
	}
	if f.ReplySrc.IsValid() {
		s += " reply-src=" + f.ReplySrc.String()
	}
	if f.NotNATed {
		s += " not-nated"
	}
	return s
}

// Conntrack deletes UDP conntrack entries. TCP needs no clean-up: a
// connection to a removed endpoint fails on its own.
type Conntrack interface {
	// DeleteUDP deletes the UDP entries matching any of filters and returns
	// how many were deleted.
	DeleteUDP(ctx context.Context, filters []ConntrackFilter) (int, error)
}

// conntrackFilters computes the UDP clean-up after a Service port changed
// from (oldSP, oldEps) to (newSP, newEps); either side may be nil (added or
// removed port). As kube-proxy does:
//
//   - an endpoint that no longer receives traffic: delete the entries
//     DNATed to it from each of the port's addresses (and its NodePort);
//   - a port that goes from no usable endpoint to some: delete the entries
//     to its addresses that were not DNATed, made while it had none.
func conntrackFilters(oldSP, newSP *ServicePort, oldEps, newEps []Endpoint) []ConntrackFilter {
	isUDP := func(sp *ServicePort) bool { return sp != nil && sp.Protocol == "UDP" }
	if !isUDP(oldSP) && !isUDP(newSP) {
		return nil
	}
	var oldReach, newReach []Endpoint
	if isUDP(oldSP) {
		oldReach = CategorizeEndpoints(oldSP, oldEps).Reachable
	}
	if isUDP(newSP) {
		newReach = CategorizeEndpoints(newSP, newEps).Reachable
	}
	keep := map[netip.AddrPort]bool{}
	for _, e := range newReach {
		keep[e.AddrPort()] = true
	}
	var out []ConntrackFilter
	for _, e := range oldReach {
		if keep[e.AddrPort()] {
			continue
		}
		for _, a := range serviceAddrs(oldSP) {
			out = append(out, ConntrackFilter{OrigDst: a, OrigDstPort: uint16(oldSP.Port), ReplySrc: e.IP})
		}
		if oldSP.NodePort != 0 {
			out = append(out, ConntrackFilter{OrigDstPort: uint16(oldSP.NodePort), ReplySrc: e.IP})
		}
	}
	if len(oldReach) == 0 && len(newReach) > 0 {
		for _, a := range serviceAddrs(newSP) {
			out = append(out, ConntrackFilter{OrigDst: a, OrigDstPort: uint16(newSP.Port), NotNATed: true})
		}
		if newSP.NodePort != 0 {
			out = append(out, ConntrackFilter{OrigDstPort: uint16(newSP.NodePort), NotNATed: true})
		}
	}
	return out
}

// serviceAddrs: the ClusterIPs, external IPs and load balancer IPs of sp.
func serviceAddrs(sp *ServicePort) []netip.Addr {
	out := make([]netip.Addr, 0, len(sp.ClusterIPs)+len(sp.ExternalIPs)+len(sp.LoadBalancerIPs))
	out = append(out, sp.ClusterIPs...)
	out = append(out, sp.ExternalIPs...)
	return append(out, sp.LoadBalancerIPs...)
}
